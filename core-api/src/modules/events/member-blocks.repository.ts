import type { Database } from '../../db/database.ts';

/** A member's block at one brand, as the event path reads it (the brand cache holds them by identity key). */
export interface MemberBlock {
  reason: string;
  blockedAt: Date;
  blockedBy: string;
}

/** Every identity key the brand blocked, with the block: one statement (blocks are few; read per cache load). */
export async function readBrandBlocks(db: Database, brandId: string): Promise<Map<string, MemberBlock>> {
  const rows = await db
    .selectFrom('brand_member_blocks')
    .select(['identity_key', 'reason', 'blocked_at', 'blocked_by'])
    .where('brand_id', '=', brandId.toLowerCase())
    .execute();
  return new Map(
    rows.map((row) => [
      row.identity_key,
      { reason: row.reason, blockedAt: new Date(row.blocked_at), blockedBy: row.blocked_by },
    ]),
  );
}

/** The block of the member with one of `identityKeys` at the brand, or undefined. */
export async function findMemberBlock(
  db: Database,
  brandId: string,
  identityKeys: string[],
): Promise<MemberBlock | undefined> {
  if (identityKeys.length === 0) return undefined;
  const row = await db
    .selectFrom('brand_member_blocks')
    .select(['reason', 'blocked_at', 'blocked_by'])
    .where('brand_id', '=', brandId.toLowerCase())
    .where('identity_key', 'in', identityKeys)
    .orderBy('blocked_at')
    .executeTakeFirst();
  return row ? { reason: row.reason, blockedAt: new Date(row.blocked_at), blockedBy: row.blocked_by } : undefined;
}
