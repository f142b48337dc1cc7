import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/**
 * Aggregate SQL of the intelligence tools: each function is one or two grouped queries whatever the
 * population, never one query per member (docs/agent-api/intelligence.md, "Performance"). Agent identities
 * (`agent:%`) are left out of every population. Counts come back as int, sums as text → bigint.
 */

/** A brand's perks with their redemption counts over the last 7 and 30 days and all time (not failed). */
export interface PerkActivity {
  perkId: string;
  name: string;
  category: string;
  cost: bigint;
  maxSupply: bigint | null;
  /** Most a member may redeem (0 = unlimited), as the redemption service enforces. */
  maxPerUser: bigint;
  active: boolean;
  /** Its PerkNFT collection exists: a perk not on chain cannot be redeemed yet. */
  onChain: boolean;
  sold: bigint;
  last7: number;
  last30: number;
  redeemers30: number;
}

/** One grouped query over the brand's redemptions, joined to its perks. */
export async function readPerkActivity(db: Kysely<DB>, brandId: string, now: Date): Promise<PerkActivity[]> {
  return (await readPerkActivities(db, [brandId], now)).get(brandId) ?? [];
}

/** readPerkActivity for several brands in one statement; every brand gets a list (empty without perks). */
export async function readPerkActivities(
  db: Kysely<DB>,
  brandIds: string[],
  now: Date,
): Promise<Map<string, PerkActivity[]>> {
  const byBrand = new Map<string, PerkActivity[]>(brandIds.map((brandId) => [brandId, []]));
  if (brandIds.length === 0) return byBrand;
  const d7 = new Date(now.getTime() - 7 * 86_400_000);
  const d30 = new Date(now.getTime() - 30 * 86_400_000);
  const result = await sql<{
    brand_id: string;
    id: string;
    name: string;
    category: string;
    cost: string;
    max_supply: string | null;
    max_per_user: string;
    active: boolean;
    on_chain: boolean;
    sold: string;
    last7: number;
    last30: number;
    redeemers30: number;
  }>`
    SELECT p.brand_id, p.id::text AS id, p.name, p.category, p.cost::text AS cost, p.max_supply::text AS max_supply,
           p.max_per_user::text AS max_per_user, p.active, p.chain_status = 'synced' AS on_chain,
           coalesce(r.sold, 0)::text AS sold, coalesce(r.last7, 0)::int AS last7, coalesce(r.last30, 0)::int AS last30,
           coalesce(r.redeemers30, 0)::int AS redeemers30
      FROM perks p
      LEFT JOIN (
        SELECT perk_id, count(*) AS sold,
               count(*) FILTER (WHERE created_at >= ${d7} AND created_at < ${now}) AS last7,
               count(*) FILTER (WHERE created_at >= ${d30} AND created_at < ${now}) AS last30,
               count(DISTINCT user_key) FILTER (WHERE created_at >= ${d30} AND created_at < ${now}) AS redeemers30
          FROM perk_redemptions
         WHERE brand_id IN (${sql.join(brandIds)}) AND status IN ('pending', 'confirmed') AND user_key NOT LIKE 'agent:%'
         GROUP BY perk_id) r ON r.perk_id = p.id
     WHERE p.brand_id IN (${sql.join(brandIds)})
     ORDER BY p.id`.execute(db);
  for (const r of result.rows) {
    byBrand.get(r.brand_id)?.push({
      perkId: r.id,
      name: r.name,
      category: r.category,
      cost: BigInt(r.cost),
      maxSupply: r.max_supply === null ? null : BigInt(r.max_supply),
      maxPerUser: BigInt(r.max_per_user),
      active: r.active,
      onChain: r.on_chain,
      sold: BigInt(r.sold),
      last7: r.last7,
      last30: r.last30,
      redeemers30: r.redeemers30,
    });
  }
  return byBrand;
}

/** Whether any user row or accepted event carries this key (a 404 otherwise). */
export async function userKnown(db: Kysely<DB>, userKey: string): Promise<boolean> {
  const result = await sql<{ known: boolean }>`
    SELECT EXISTS (SELECT 1 FROM users WHERE email = ${userKey})
        OR EXISTS (SELECT 1 FROM events WHERE user_email = ${userKey} AND status = 'accepted') AS known`.execute(db);
  return Boolean(result.rows[0]?.known);
}
