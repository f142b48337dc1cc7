import { randomBytes } from 'node:crypto';
import { AppError, type Clock } from '@pts/shared';
import type { Database } from '../../db/database.ts';
import { insertAuditEntry } from '../../modules/brands/brands.repository.ts';
import { requireBrandExists } from '../../modules/brands/brands.service.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { AgentPrincipal, AgentTier } from '../agent-tool.ts';
import {
  type AgentKeyRow,
  appendAgentKeyBrand,
  insertAgentKey,
  markAgentKeyRevoked,
  selectAgentKey,
  selectAgentKeys,
  touchAgentKey,
} from './agent-keys.repository.ts';

export interface AgentKeysDeps {
  db: Database;
  clock: Clock;
  secrets: SecretBox;
  /** Who the audit log names for key changes (default `admin`: the admin token, the CLI). */
  actor?: string | undefined;
}

/** Default authenticated requests per minute of a key (spec 8). */
export const DEFAULT_AGENT_RATE_PER_MINUTE = 20;

export interface CreateAgentKeyInput {
  name: string;
  brandIds?: string[];
  canManageProgram?: boolean;
  canOnboard?: boolean;
  tier?: AgentTier;
  ratePerMinute?: number;
}

/** A key as listed: everything but the secret. */
export interface AgentKeySummary extends AgentPrincipal {
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

function principalOf(row: AgentKeyRow): AgentPrincipal {
  return {
    keyId: row.key_id,
    name: row.name,
    brandIds: [...(row.brand_ids ?? [])],
    canManageProgram: row.can_manage_program,
    canOnboard: row.can_onboard,
    tier: row.tier,
    ratePerMinute: row.rate_per_minute,
  };
}

/**
 * Creates a key: `ak_<random>` and a 32-byte hex secret, shown once here (stored encrypted: HMAC verification
 * needs it in clear, so it cannot be hashed).
 */
export async function createAgentKey(
  deps: AgentKeysDeps,
  input: CreateAgentKeyInput,
): Promise<{ keyId: string; secret: string }> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw new AppError('VALIDATION_ERROR', 'A key needs a name of 1–200 characters');
  const rate = input.ratePerMinute ?? DEFAULT_AGENT_RATE_PER_MINUTE;
  if (!Number.isInteger(rate) || rate < 1 || rate > 100_000) {
    throw new AppError('VALIDATION_ERROR', 'ratePerMinute must be an integer from 1 to 100000');
  }
  const brandIds = [...new Set((input.brandIds ?? []).map((id) => id.toLowerCase()))];
  // A key for a brand that does not exist would act for nothing (and for whoever later takes that address).
  for (const brandId of brandIds) await requireBrandExists(deps.db, brandId);
  const keyId = `ak_${randomBytes(12).toString('hex')}`;
  const secret = randomBytes(32).toString('hex');
  const now = deps.clock.now();
  const canManageProgram = input.canManageProgram ?? false;
  const tier = input.tier ?? 'free';
  await deps.db.transaction().execute(async (trx) => {
    await insertAgentKey(trx, {
      keyId,
      name,
      secretEncrypted: deps.secrets.encrypt(secret),
      brandIds,
      canManageProgram,
      canOnboard: input.canOnboard ?? false,
      tier,
      ratePerMinute: rate,
      createdAt: now,
    });
    const details = { keyId, name, canManageProgram, tier };
    for (const brandId of brandIds) await auditKeyChange({ ...deps, db: trx }, 'agent_key.create', brandId, details);
  });
  return { keyId, secret };
}

/** Every key without its secret; with `brandId`, the keys that act for that brand. */
export async function listAgentKeys(
  deps: AgentKeysDeps,
  filter: { brandId?: string | undefined } = {},
): Promise<AgentKeySummary[]> {
  const brandId = filter.brandId?.toLowerCase();
  const rows = (await selectAgentKeys(deps.db)).filter(
    (row) => brandId === undefined || (row.brand_ids ?? []).includes(brandId),
  );
  return rows.map((row) => ({
    ...principalOf(row),
    createdAt: iso(row.created_at) as string,
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
  }));
}

/**
 * Revokes a key: its signatures are refused (401) from now on. 404 for an unknown key. With `brandId` (the
 * portal) only a key that acts for that brand alone: another brand's key is unknown (404), a key shared with
 * other brands is the operator's to revoke (403).
 */
export async function revokeAgentKey(
  deps: AgentKeysDeps,
  keyId: string,
  scope: { brandId?: string | undefined } = {},
): Promise<{ revoked: boolean }> {
  const row = await selectAgentKey(deps.db, keyId);
  const brandIds = [...(row?.brand_ids ?? [])];
  const brandId = scope.brandId?.toLowerCase();
  if (!row || (brandId !== undefined && !brandIds.includes(brandId))) {
    throw new AppError('NOT_FOUND', `Agent key ${keyId} does not exist`);
  }
  if (brandId !== undefined && brandIds.length > 1) {
    throw new AppError('FORBIDDEN', `Agent key ${keyId} also acts for other brands; the operator revokes it`);
  }
  const revoked = await markAgentKeyRevoked(deps.db, keyId, deps.clock.now());
  if (revoked) {
    for (const brandId of brandIds) await auditKeyChange(deps, 'agent_key.revoke', brandId, { keyId, name: row.name });
  }
  return { revoked };
}

/** An agent key change in the audit log of a brand the key acts for (docs/portal.md, "Audit log"). */
function auditKeyChange(deps: AgentKeysDeps, action: string, brandId: string, details: Record<string, unknown>) {
  return insertAuditEntry(deps.db, {
    actor: deps.actor ?? 'admin',
    action,
    subject: String(details.keyId),
    brandId,
    details,
    at: deps.clock.now(),
  });
}

/** A live key as signature verification needs it: who it is and its secret in clear. */
export interface ActiveAgentKey {
  principal: AgentPrincipal;
  secret: string;
}

/** The live (not revoked) key with its secret in clear, for signature verification; undefined otherwise. */
export async function findActiveKey(deps: AgentKeysDeps, keyId: string): Promise<ActiveAgentKey | undefined> {
  if (!/^ak_[0-9a-z]{1,64}$/.test(keyId)) return undefined;
  const row = await selectAgentKey(deps.db, keyId);
  if (!row || row.revoked_at) return undefined;
  return { principal: principalOf(row), secret: deps.secrets.decrypt(row.secret_encrypted) };
}

/** Lets the key act for `brandId` (onboarding a brand through the agent API grants it to the onboarding key). */
export async function grantBrandToKey(deps: AgentKeysDeps, keyId: string, brandId: string): Promise<void> {
  const granted = await appendAgentKeyBrand(deps.db, keyId, brandId.toLowerCase());
  if (!granted) throw new AppError('NOT_FOUND', `Agent key ${keyId} does not exist or is revoked`);
  await auditKeyChange(deps, 'agent_key.grant', brandId.toLowerCase(), { keyId });
}

/** Records that the key was used (at most one write a minute per key). */
export async function noteAgentKeyUsed(deps: AgentKeysDeps, keyId: string): Promise<void> {
  await touchAgentKey(deps.db, keyId, deps.clock.now());
}

/**
 * The key functions bound to `deps` as the brand portal uses them (modules/portal, handed in by app.ts):
 * `onRevoked` lets the signature cache forget a revoked key at once.
 */
export function portalAgentKeyService(deps: AgentKeysDeps, onRevoked?: (keyId: string) => void) {
  return {
    create: (actor: string, input: CreateAgentKeyInput) => createAgentKey({ ...deps, actor }, input),
    list: (brandId: string) => listAgentKeys(deps, { brandId }),
    async revoke(actor: string, keyId: string, brandId: string) {
      const result = await revokeAgentKey({ ...deps, actor }, keyId, { brandId });
      onRevoked?.(keyId);
      return result;
    },
  };
}

/** `/admin/agent-keys` as the operator uses it (admin token, the CLI): the key functions bound by compose.ts. */
export interface AgentKeyAdminService {
  create(input: CreateAgentKeyInput): Promise<{ keyId: string; secret: string }>;
  list(): Promise<AgentKeySummary[]>;
  /** Revokes the key; `onRevoked` then lets the signature cache forget it at once. */
  revoke(keyId: string): Promise<{ revoked: boolean }>;
}

export function createAgentKeyAdminService(
  deps: AgentKeysDeps,
  onRevoked?: (keyId: string) => void,
): AgentKeyAdminService {
  return {
    create: (input) => createAgentKey(deps, input),
    list: () => listAgentKeys(deps),
    async revoke(keyId) {
      const result = await revokeAgentKey(deps, keyId);
      onRevoked?.(keyId);
      return result;
    },
  };
}
