import { timingSafeEqual } from 'node:crypto';
import {
  AppError,
  type BrandKeyStatus,
  type Clock,
  type EndedPreviousBrandKey,
  MAX_KEY_GRACE_MINUTES,
  type RotatedBrandKeys,
} from '@pts/shared';
import type { Kysely, Updateable } from 'kysely';
import { inTransaction } from '../../db/in-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { generateSecret, hashSecret } from '../../security/secret-box.ts';
import { type BrandRow, findBrandByAddress, insertAuditEntry } from './brands.repository.ts';
import type { BrandReadDeps, BrandServiceDeps } from './brands.service.ts';
import { brandNotFound } from './brands.service.ts';

/**
 * A brand's API key and security key: their state, rotation (with an optional grace period during which the
 * replaced security key still verifies) and revocation. Every surface — the admin API and CLI, the agent's
 * `manage_brand_keys`, the coming brand portal — calls these functions.
 */

// The prefixes of createBrand's keys, so rotated keys look the same.
const SECURITY_KEY_PREFIX = 'pts_sk_';
const API_KEY_PREFIX = 'pts_ak_';

/** The state of the brand's keys; never a secret. */
export async function getBrandKeyStatus(
  deps: BrandReadDeps & { clock: Clock },
  brandId: string,
): Promise<BrandKeyStatus> {
  const row = await findBrandByAddress(deps.db, brandId);
  if (!row) throw brandNotFound(brandId);
  return toKeyStatus(row, deps.clock.now());
}

/**
 * Issues a new security key and API key. With `graceMinutes` > 0 the replaced security key keeps verifying
 * signatures until then (the API key is replaced at once: it is checked by hash only, by the brand's own
 * back-end); without, it is refused at once. A key replaced earlier and still in its grace is dropped: at most
 * the newest two keys verify. The new keys are returned this once.
 */
export async function rotateBrandKeys(
  deps: BrandServiceDeps,
  brandId: string,
  options: { graceMinutes?: number | undefined } = {},
): Promise<RotatedBrandKeys> {
  const graceMinutes = options.graceMinutes ?? 0;
  if (!Number.isInteger(graceMinutes) || graceMinutes < 0 || graceMinutes > MAX_KEY_GRACE_MINUTES) {
    throw new AppError(
      'VALIDATION_ERROR',
      `graceMinutes must be a whole number from 0 to ${MAX_KEY_GRACE_MINUTES} (a week), got ${options.graceMinutes}`,
      { field: 'graceMinutes', value: String(options.graceMinutes) },
    );
  }
  const now = deps.clock.now();
  const securityKey = generateSecret(SECURITY_KEY_PREFIX);
  const apiKey = generateSecret(API_KEY_PREFIX);
  const row = await inTransaction(deps.db, async (trx) => {
    const current = await trx
      .selectFrom('brands')
      .select(['address', 'security_key_hash', 'security_key_encrypted', 'keys_revoked_at'])
      .where('address', '=', brandId.toLowerCase())
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw brandNotFound(brandId);
    // A revoked brand's keys are ones nobody knows: there is nothing to keep valid.
    const keepPrevious = graceMinutes > 0 && current.keys_revoked_at === null;
    const changes = {
      security_key_hash: hashSecret(securityKey),
      security_key_encrypted: deps.secrets.encrypt(securityKey),
      api_key_hash: hashSecret(apiKey),
      previous_security_key_hash: keepPrevious ? current.security_key_hash : null,
      previous_security_key_encrypted: keepPrevious ? current.security_key_encrypted : null,
      previous_security_key_expires_at: keepPrevious ? new Date(now.getTime() + graceMinutes * 60_000) : null,
      keys_rotated_at: now,
      keys_rotated_by: deps.actor ?? 'admin',
      keys_revoked_at: null,
    };
    const row = await writeKeys(trx, deps, current.address, changes, 'brand.keys_rotate', { graceMinutes }, now);
    if (!row) throw brandNotFound(brandId);
    return row;
  });
  // The brand cache of every process holds the decrypted keys the signature check uses.
  deps.changes?.emit({ kind: 'brand', brandId: row.address });
  return { ...toKeyStatus(row, now), securityKey, apiKey };
}

/**
 * Ends the grace of the security key the last rotation replaced: from now on only the current key verifies
 * (once every integration runs on the new key, or when the old one leaked). Its expiry is set to now rather
 * than cleared, so what reads the grace's end (the onboarding evidence) sees when the old key really stopped.
 * 409 when no replaced key is still in its grace.
 */
export async function endPreviousBrandKey(deps: BrandServiceDeps, brandId: string): Promise<EndedPreviousBrandKey> {
  const now = deps.clock.now();
  const { row, validUntil } = await inTransaction(deps.db, async (trx) => {
    const current = await trx
      .selectFrom('brands')
      .select(['address', 'previous_security_key_hash', 'previous_security_key_expires_at'])
      .where('address', '=', brandId.toLowerCase())
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw brandNotFound(brandId);
    const validUntil = current.previous_security_key_expires_at;
    if (current.previous_security_key_hash === null || validUntil === null || validUntil.getTime() <= now.getTime()) {
      throw new AppError(
        'CONFLICT',
        'No replaced key is still verifying: the old key already ended (or the keys were never rotated with a grace), so there is nothing to end',
        { brandId: current.address },
      );
    }
    const changes = {
      previous_security_key_hash: null,
      previous_security_key_encrypted: null,
      previous_security_key_expires_at: now,
    };
    const details = { wasValidUntil: validUntil.toISOString() };
    const row = await writeKeys(trx, deps, current.address, changes, 'brand.keys_end_previous', details, now);
    if (!row) throw brandNotFound(brandId);
    return { row, validUntil };
  });
  // Every process's brand cache holds the old key until told.
  deps.changes?.emit({ kind: 'brand', brandId: row.address });
  return { ...toKeyStatus(row, now), endedKeyWasValidUntil: validUntil.toISOString() };
}

/**
 * Replaces both keys with keys nobody knows, and drops a previous key in its grace: signed events and
 * API-key checks fail until a rotate.
 */
export async function revokeBrandKeys(deps: BrandServiceDeps, brandId: string): Promise<BrandKeyStatus> {
  const now = deps.clock.now();
  const row = await inTransaction(deps.db, async (trx) => {
    const changes = {
      security_key_hash: hashSecret(generateSecret(SECURITY_KEY_PREFIX)),
      security_key_encrypted: deps.secrets.encrypt(generateSecret(SECURITY_KEY_PREFIX)),
      api_key_hash: hashSecret(generateSecret(API_KEY_PREFIX)),
      previous_security_key_hash: null,
      previous_security_key_encrypted: null,
      previous_security_key_expires_at: null,
      keys_revoked_at: now,
    };
    const row = await writeKeys(trx, deps, brandId.toLowerCase(), changes, 'brand.keys_revoke', {}, now);
    if (!row) throw brandNotFound(brandId);
    return row;
  });
  deps.changes?.emit({ kind: 'brand', brandId: row.address });
  return toKeyStatus(row, now);
}

/** A brand's security keys as the signature check holds them (decrypted), with the previous key's expiry. */
export interface BrandSecurityKeys {
  current: string;
  previous?: { key: string; expiresAt: Date } | undefined;
}

/** The security keys that verify at `now`: the current one, and the previous one until its grace ends. */
export function securityKeysValidAt(keys: BrandSecurityKeys, now: Date): string[] {
  if (keys.previous && now.getTime() < keys.previous.expiresAt.getTime()) return [keys.current, keys.previous.key];
  return [keys.current];
}

/** Whether `key` is one of the brand's security keys valid now (bot `/setup`, MCP operator headers). */
export async function verifySecurityKey(
  deps: { db: Kysely<DB>; clock: Clock },
  brandId: string,
  key: string,
): Promise<boolean> {
  const row = await findBrandByAddress(deps.db, brandId);
  if (!row) return false;
  const presented = Buffer.from(hashSecret(key), 'hex');
  const matches = (hash: string) => {
    const stored = Buffer.from(hash, 'hex');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  };
  if (matches(row.security_key_hash)) return true;
  return (
    row.previous_security_key_hash !== null &&
    row.previous_security_key_expires_at !== null &&
    deps.clock.now().getTime() < row.previous_security_key_expires_at.getTime() &&
    matches(row.previous_security_key_hash)
  );
}

function toKeyStatus(row: BrandRow, now: Date): BrandKeyStatus {
  const previousValid =
    row.previous_security_key_expires_at !== null && now.getTime() < row.previous_security_key_expires_at.getTime();
  return {
    brandId: row.address,
    active: row.keys_revoked_at === null,
    issuedAt: (row.keys_rotated_at ?? row.created_at).toISOString(),
    rotatedAt: row.keys_rotated_at?.toISOString() ?? null,
    revokedAt: row.keys_revoked_at?.toISOString() ?? null,
    previousKeyValidUntil: previousValid ? (row.previous_security_key_expires_at as Date).toISOString() : null,
  };
}

/** Writes a change of the brand's keys and its audit entry, in the caller's transaction; undefined for no brand. */
async function writeKeys(
  trx: Kysely<DB>,
  deps: BrandServiceDeps,
  address: string,
  changes: Updateable<DB['brands']>,
  action: string,
  details: Record<string, unknown>,
  now: Date,
): Promise<BrandRow | undefined> {
  const row = await trx
    .updateTable('brands')
    .set({ ...changes, updated_at: now })
    .where('address', '=', address)
    .returningAll()
    .executeTakeFirst();
  if (row)
    await insertAuditEntry(trx, { actor: deps.actor ?? 'admin', action, subject: row.address, details, at: now });
  return row;
}
