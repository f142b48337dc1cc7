import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isMemberKey } from '../accounts/member-keys.ts';
import { memberOfBrand } from './analytics.repository.ts';

/**
 * Perk activity, the brand analytics read model's per-perk and per-category figures over `perk_redemptions`
 * (docs/ledger.md, "Brand analytics"): what the agent's perk intelligence, perk audience, brand perks and
 * perk suggestion tools read. Each function is one grouped statement whatever the population. Redemptions
 * count when pending or confirmed (a failed one spent nothing); agent identities are left out (isMemberKey).
 */

const DAY_MS = 86_400_000;

/** A brand's perk with its redemption counts over the last 7 and 30 days and all time (not failed). */
export interface PerkActivity {
  perkId: string;
  name: string;
  category: string;
  cost: bigint;
  maxSupply: bigint | null;
  /** Most a member may redeem (0 = unlimited, the contract's encoding), as the redemption service enforces. */
  maxPerUser: bigint;
  active: boolean;
  /** Its PerkNFT collection exists: a perk not on chain cannot be redeemed yet. */
  onChain: boolean;
  /** Redemptions by anyone, all time: what the supply counts. */
  sold: bigint;
  last7: number;
  last30: number;
  /**
   * Distinct redeemers of the last 30 days who are members of the brand (an accepted event there before
   * `now`): the numerator of a conversion rate, whose denominator counts members only (issue 23 §3).
   */
  redeemers30: number;
}

/** readPerkActivities for one brand. */
export async function readPerkActivity(db: Kysely<DB>, brandId: string, now: Date): Promise<PerkActivity[]> {
  return (await readPerkActivities(db, [brandId], now)).get(brandId) ?? [];
}

/** The perks of several brands with their activity, in one statement; every brand gets a list (empty without perks). */
export async function readPerkActivities(
  db: Kysely<DB>,
  brandIds: string[],
  now: Date,
): Promise<Map<string, PerkActivity[]>> {
  const byBrand = new Map<string, PerkActivity[]>(brandIds.map((brandId) => [brandId, []]));
  if (brandIds.length === 0) return byBrand;
  const d7 = new Date(now.getTime() - 7 * DAY_MS);
  const d30 = new Date(now.getTime() - 30 * DAY_MS);
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
               count(*) FILTER (WHERE recent7) AS last7,
               count(*) FILTER (WHERE recent30) AS last30,
               count(DISTINCT user_key) FILTER (WHERE recent30 AND member) AS redeemers30
          FROM (SELECT r.perk_id, r.user_key,
                       r.created_at >= ${d7} AND r.created_at < ${now} AS recent7,
                       r.created_at >= ${d30} AND r.created_at < ${now} AS recent30,
                       CASE WHEN r.created_at >= ${d30} AND r.created_at < ${now} THEN ${memberOfBrand(now)}
                            ELSE FALSE END AS member
                  FROM perk_redemptions r
                 WHERE r.brand_id IN (${sql.join(brandIds)}) AND r.status IN ('pending', 'confirmed')
                   AND ${isMemberKey(sql.ref('r.user_key'))}) AS x
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

/** Distinct identities that redeemed the perk (pending or confirmed) before `now`, all time. */
export async function readPerkRedeemers(
  db: Kysely<DB>,
  brandId: string,
  perkId: string,
  now: Date,
): Promise<Set<string>> {
  const result = await sql<{ k: string }>`
    SELECT DISTINCT user_key AS k FROM perk_redemptions
     WHERE brand_id = ${brandId} AND perk_id = ${perkId}::bigint AND status IN ('pending', 'confirmed')
       AND created_at < ${now} AND ${isMemberKey(sql.ref('user_key'))}`.execute(db);
  return new Set(result.rows.map((r) => r.k));
}

/** One perk category across the network's active perks. */
export interface CategoryPerformance {
  category: string;
  perks: number;
  brands: number;
  redemptions: number;
  /** Lower median cost of the category's active perks. */
  medianCost: bigint;
  /** The asking brand has an active perk in it. */
  brandHas: boolean;
}

/** Active perks per category with their redemptions (pending or confirmed) over [from, to). */
export async function readCategoryPerformance(
  db: Kysely<DB>,
  brandId: string,
  from: Date,
  to: Date,
): Promise<CategoryPerformance[]> {
  const result = await sql<{
    category: string;
    perks: number;
    brands: number;
    redemptions: number;
    median_cost: string;
    brand_has: boolean;
  }>`
    SELECT p.category, count(*)::int AS perks, count(DISTINCT p.brand_id)::int AS brands,
           coalesce(sum(r.n), 0)::int AS redemptions,
           (percentile_disc(0.5) WITHIN GROUP (ORDER BY p.cost))::text AS median_cost,
           bool_or(p.brand_id = ${brandId}) AS brand_has
      FROM perks p
      LEFT JOIN (
        SELECT perk_id, count(*) AS n FROM perk_redemptions
         WHERE status IN ('pending', 'confirmed') AND created_at >= ${from} AND created_at < ${to}
           AND ${isMemberKey(sql.ref('user_key'))}
         GROUP BY perk_id) r ON r.perk_id = p.id
     WHERE p.active
     GROUP BY p.category`.execute(db);
  return result.rows.map((r) => ({
    category: r.category,
    perks: r.perks,
    brands: r.brands,
    redemptions: r.redemptions,
    medianCost: BigInt(r.median_cost),
    brandHas: Boolean(r.brand_has),
  }));
}
