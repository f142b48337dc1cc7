import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/**
 * At each of `brandIds`, the most expensive active, on-chain perk costing at most `budget` pts (ties: the
 * oldest) that the member (`userKeys`, their identities) may still redeem: not one they already hold the
 * per-user maximum of (pending or confirmed redemptions; `max_per_user` 0 = unlimited), which redeem_perk
 * would refuse. One statement for every brand; brands where none fits are absent.
 */
export async function bestAffordablePerks(db: Database, brandIds: string[], budget: bigint, userKeys: string[]) {
  const best = new Map<string, { id: bigint; public_id: string; name: string; category: string; cost: bigint }>();
  if (brandIds.length === 0 || userKeys.length === 0) return best;
  const rows = await db
    .selectFrom('perks')
    .distinctOn('brand_id')
    .select(['brand_id', 'id', 'public_id', 'name', 'category', 'cost'])
    .where('brand_id', 'in', brandIds)
    .where('active', '=', true)
    .where('chain_status', '=', 'synced')
    .where('cost', '<=', budget)
    .where(
      sql<boolean>`(perks.max_per_user = 0 OR (
        SELECT count(*) FROM perk_redemptions r
         WHERE r.perk_id = perks.id AND r.user_key IN (${sql.join(userKeys)}) AND r.status IN ('pending', 'confirmed')
      ) < perks.max_per_user)`,
    )
    .orderBy('brand_id')
    .orderBy('cost', 'desc')
    .orderBy('id')
    .execute();
  for (const row of rows) best.set(row.brand_id, row);
  return best;
}
