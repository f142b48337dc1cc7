import { randomUUID } from 'node:crypto';
import { type AddConstraintInput, AppError, type Clock, type PerkConstraint } from '@pts/shared';
import type { Database } from '../../../db/database.ts';
import { SsrfError, type SsrfPolicy, vetUrlStatically } from '../../../http/ssrf-guard.ts';
import { hashSecret } from '../../../security/secret-box.ts';
import { insertAuditEntry } from '../../brands/brands.repository.ts';
import { findPerk } from '../perks.repository.ts';
import { getBrandPerk, type PerkScope, perkNotFound } from '../perks.service.ts';
import { type ChatRolesSnapshot, saveChatRoles } from './chat-roles.ts';
import { deleteConstraint, insertConstraint, listConstraintRows, toConstraint } from './constraints.repository.ts';

export interface ConstraintServiceDeps {
  db: Database;
  clock: Clock;
  /** TTL of `external_api` constraints that do not set one (PTS_CONSTRAINT_DEFAULT_TTL_SECONDS). */
  defaultTtlSeconds: number;
  /** What an `external_api` URL may point at (the checker's policy, applied when the URL is saved too). */
  urlPolicy: SsrfPolicy;
  /** Who the audit log names; `admin` when absent. */
  actor?: string | undefined;
}

/**
 * The form URLs are stored and matched in (invalidation compares exactly): WHATWG-normalized (lowercase
 * scheme and host, default port dropped, `/` path when empty), without a fragment.
 */
export function normalizeApiUrl(raw: string): string {
  const url = new URL(raw.trim());
  url.hash = '';
  return url.toString();
}

/**
 * Adds a constraint to a perk. `external_api` URLs are normalized and vetted by the SSRF guard now (scheme,
 * credentials, literal addresses) and again at each call (what the name resolves to then).
 */
export async function addConstraint(
  deps: ConstraintServiceDeps,
  perkId: bigint,
  input: AddConstraintInput,
): Promise<PerkConstraint> {
  const perk = await findPerk(deps.db, perkId);
  if (!perk) throw perkNotFound(perkId);
  const now = deps.clock.now();
  let config: Record<string, unknown>;
  let apiUrl: string | null = null;
  let ttl = 0;
  if (input.kind === 'external_api') {
    apiUrl = normalizeApiUrl(input.url);
    try {
      vetUrlStatically(apiUrl, deps.urlPolicy);
    } catch (error) {
      if (!(error instanceof SsrfError)) throw error;
      throw new AppError('VALIDATION_ERROR', `The constraint URL is not allowed: ${error.message}`, {
        field: 'url',
        value: input.url,
        errors: [`url: ${error.message}`],
      });
    }
    if (new URL(apiUrl).search) {
      throw new AppError(
        'VALIDATION_ERROR',
        'The constraint URL must not carry a query string: user_address and collection_id are added to it',
        { field: 'url', value: input.url, errors: ['url: must not have a query string'] },
      );
    }
    config = { url: apiUrl };
    ttl = input.ttlSeconds ?? deps.defaultTtlSeconds;
  } else if (input.kind === 'min_balance') {
    config = { amount: input.amount };
  } else {
    config = { platform: input.platform, guildId: input.guildId, role: input.role };
  }
  const row = await deps.db.transaction().execute(async (trx) => {
    const inserted = await insertConstraint(trx, {
      id: randomUUID(),
      perk_id: perkId,
      kind: input.kind,
      config: JSON.stringify(config),
      api_url: apiUrl,
      ttl_seconds: ttl,
      created_at: now,
    });
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'perk.constraint.add',
      subject: perkId.toString(),
      details: { constraintId: inserted.id, kind: input.kind, ...config },
      at: now,
    });
    return inserted;
  });
  return toConstraint(row);
}

/** A perk's constraints, oldest first. */
export async function listConstraints(deps: Pick<ConstraintServiceDeps, 'db'>, perkId: bigint) {
  if (!(await findPerk(deps.db, perkId))) throw perkNotFound(perkId);
  return (await listConstraintRows(deps.db, perkId)).map(toConstraint);
}

/** Removes a constraint (and its cached answers). */
export async function removeConstraint(deps: ConstraintServiceDeps, perkId: bigint, constraintId: string) {
  if (!(await findPerk(deps.db, perkId))) throw perkNotFound(perkId);
  if (!(await deleteConstraint(deps.db, perkId, constraintId))) {
    throw new AppError('NOT_FOUND', `Perk ${perkId} has no constraint ${constraintId}`, {
      field: 'constraintId',
      value: constraintId,
    });
  }
  await insertAuditEntry(deps.db, {
    actor: deps.actor ?? 'admin',
    action: 'perk.constraint.remove',
    subject: perkId.toString(),
    details: { constraintId },
    at: deps.clock.now(),
  });
}

/** The brand whose API key this is, or undefined. Keys are stored as SHA-256 (`brands.api_key_hash`). */
export async function brandForApiKey(db: Database, apiKey: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('brands')
    .select('address')
    .where('api_key_hash', '=', hashSecret(apiKey))
    .executeTakeFirst();
  return row?.address;
}

/**
 * Drops cached `external_api` answers of the brand's own constraints whose URL equals `apiUrl` (normalized),
 * optionally only one user's and/or one perk's. Returns how many answers were dropped.
 */
export async function invalidateExternalApi(
  db: Database,
  input: { brandId: string; apiUrl: string; userAddress?: string | undefined; collectionId?: number | undefined },
): Promise<number> {
  const apiUrl = normalizeApiUrl(input.apiUrl);
  let query = db
    .deleteFrom('constraint_cache')
    .where('api_url', '=', apiUrl)
    .where('constraint_id', 'in', (eb) =>
      eb
        .selectFrom('perk_constraints')
        .innerJoin('perks', 'perks.id', 'perk_constraints.perk_id')
        .select('perk_constraints.id')
        .where('perks.brand_id', '=', input.brandId),
    );
  if (input.userAddress) query = query.where('user_address', '=', input.userAddress.toLowerCase());
  if (input.collectionId !== undefined) query = query.where('collection_id', '=', BigInt(input.collectionId));
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Perk eligibility constraints: the admin API's add, list and remove (audited as `admin`), the
 * constraint-updater's cache invalidation by brand API key, and the bots' chat role reports.
 */
export interface ConstraintService {
  /** With `brandId` (the brand portal), another brand's perk answers PERK_NOT_FOUND, as an unknown one. */
  add(perkId: bigint, input: AddConstraintInput, options?: PerkScope): Promise<PerkConstraint>;
  list(perkId: bigint): Promise<PerkConstraint[]>;
  /** With `brandId`, as `add`. */
  remove(perkId: bigint, constraintId: string, options?: PerkScope): Promise<void>;
  /** The brand whose API key this is, or undefined. */
  brandForApiKey(apiKey: string): Promise<string | undefined>;
  /** Drops the brand's cached `external_api` answers of `apiUrl`; how many were dropped. */
  invalidateExternalApi(input: {
    brandId: string;
    apiUrl: string;
    userAddress?: string | undefined;
    collectionId?: number | undefined;
  }): Promise<number>;
  /** Stores a member's roles as of now (a bot's report), replacing the older snapshot. */
  saveChatRoles(input: {
    brandId: string;
    platform: string;
    guildId: string;
    userId: string;
    roles: string[];
  }): Promise<ChatRolesSnapshot>;
}

export function createConstraintService(deps: ConstraintServiceDeps): ConstraintService {
  const as = (options: PerkScope): ConstraintServiceDeps =>
    options.actor === undefined ? deps : { ...deps, actor: options.actor };
  return {
    async add(perkId, input, options = {}) {
      if (options.brandId !== undefined) await getBrandPerk(deps, options.brandId, perkId);
      return addConstraint(as(options), perkId, input);
    },
    list: (perkId) => listConstraints(deps, perkId),
    async remove(perkId, constraintId, options = {}) {
      if (options.brandId !== undefined) await getBrandPerk(deps, options.brandId, perkId);
      await removeConstraint(as(options), perkId, constraintId);
    },
    brandForApiKey: (apiKey) => brandForApiKey(deps.db, apiKey),
    invalidateExternalApi: (input) => invalidateExternalApi(deps.db, input),
    saveChatRoles: (input) => saveChatRoles(deps, input),
  };
}
