import { type Selectable, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { AgentKeysTable } from '../../db/schema.ts';

/** One stored agent key row as read (secret still encrypted). */
export type AgentKeyRow = Selectable<AgentKeysTable>;

/** Stores a new key; the caller encrypted the secret. */
export async function insertAgentKey(
  db: Database,
  row: {
    keyId: string;
    name: string;
    secretEncrypted: string;
    brandIds: string[];
    canManageProgram: boolean;
    canOnboard: boolean;
    tier: 'free' | 'pro' | 'enterprise';
    ratePerMinute: number;
    createdAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('agent_keys')
    .values({
      key_id: row.keyId,
      name: row.name,
      secret_encrypted: row.secretEncrypted,
      brand_ids: row.brandIds,
      can_manage_program: row.canManageProgram,
      can_onboard: row.canOnboard,
      tier: row.tier,
      rate_per_minute: row.ratePerMinute,
      created_at: row.createdAt,
    })
    .execute();
}

/** Every key, newest first (revoked ones included: the list is an audit view). */
export async function selectAgentKeys(db: Database): Promise<AgentKeyRow[]> {
  return db.selectFrom('agent_keys').selectAll().orderBy('created_at', 'desc').execute();
}

/** The key, revoked or not, or undefined. */
export async function selectAgentKey(db: Database, keyId: string): Promise<AgentKeyRow | undefined> {
  return db.selectFrom('agent_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst();
}

/** Marks the key revoked (once); true when a live key was revoked. */
export async function markAgentKeyRevoked(db: Database, keyId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('agent_keys')
    .set({ revoked_at: at })
    .where('key_id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Adds `brandId` to the key's brands (idempotent, atomic under concurrent grants). */
export async function appendAgentKeyBrand(db: Database, keyId: string, brandId: string): Promise<boolean> {
  const result = await db
    .updateTable('agent_keys')
    .set({
      brand_ids: sql<
        string[]
      >`CASE WHEN ${brandId} = ANY(brand_ids) THEN brand_ids ELSE array_append(brand_ids, ${brandId}::text) END`,
    })
    .where('key_id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Records a use; at most one write per key per minute (`last_used_at` is advisory). */
export async function touchAgentKey(db: Database, keyId: string, at: Date): Promise<void> {
  await db
    .updateTable('agent_keys')
    .set({ last_used_at: at })
    .where('key_id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(at.getTime() - 60_000))]))
    .execute();
}
