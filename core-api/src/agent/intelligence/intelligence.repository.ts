import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/**
 * Aggregate SQL of the intelligence tools: each function is one or two grouped queries whatever the
 * population, never one query per member (docs/agent-api/intelligence.md, "Performance"). Agent identities
 * (`agent:%`) are left out of every population. Counts come back as int, sums as text → bigint.
 */

/** Member activity over [from, to) at the given brands. */
export interface MemberActivity {
  events: number;
  distinctEventTypes: number;
  activeDays: number;
  lastEventAt: Date | null;
  earned: bigint;
  brands: number;
  eventTypeMix: { eventType: string; count: number }[];
  perBrand: { brandId: string; events: number; earned: bigint }[];
}

/** One member's accepted events at `brandIds` in the window, plus their last event ever there. */
export async function readMemberActivity(
  db: Kysely<DB>,
  userKey: string,
  brandIds: string[],
  from: Date,
  to: Date,
): Promise<MemberActivity> {
  // One pass over the member's events: the window's totals (grouping set ()), the window's mix per event
  // type and the all-time figures per brand.
  const result = await sql<{
    g: number;
    brand_id: string | null;
    event_type: string | null;
    n_all: number;
    n_window: number;
    types: number;
    days: number;
    earned_window: string;
    earned_all: string;
    brands: number;
    last: Date | string | null;
  }>`
    SELECT GROUPING(brand_id, event_type)::int AS g, brand_id, event_type,
           count(*)::int AS n_all,
           count(*) FILTER (WHERE created_at >= ${from})::int AS n_window,
           count(DISTINCT event_type) FILTER (WHERE created_at >= ${from})::int AS types,
           count(DISTINCT (created_at AT TIME ZONE 'UTC')::date) FILTER (WHERE created_at >= ${from})::int AS days,
           coalesce(sum(reward_amount) FILTER (WHERE created_at >= ${from}), 0)::text AS earned_window,
           coalesce(sum(reward_amount), 0)::text AS earned_all,
           count(DISTINCT brand_id)::int AS brands,
           max(created_at) AS last
      FROM events
     WHERE user_email = ${userKey} AND status = 'accepted' AND brand_id IN (${sql.join(brandIds)})
       AND created_at < ${to}
     GROUP BY GROUPING SETS ((), (brand_id), (event_type))`.execute(db);
  const t = result.rows.find((r) => r.g === 3);
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const mix = result.rows
    .filter((r) => r.g === 2 && r.n_window > 0)
    .map((r) => ({ eventType: r.event_type ?? '', count: r.n_window }))
    .sort((a, b) => b.count - a.count || byText(a.eventType, b.eventType));
  const perBrand = result.rows
    .filter((r) => r.g === 1)
    .map((r) => ({ brandId: r.brand_id ?? '', events: r.n_all, earned: BigInt(r.earned_all) }))
    .sort((a, b) => b.events - a.events || byText(a.brandId, b.brandId));
  return {
    events: t?.n_window ?? 0,
    distinctEventTypes: t?.types ?? 0,
    activeDays: t?.days ?? 0,
    lastEventAt: t?.last ? new Date(t.last) : null,
    earned: BigInt(t?.earned_window ?? '0'),
    brands: t?.brands ?? 0,
    eventTypeMix: mix,
    perBrand,
  };
}

/** One member's redemptions (pending or confirmed) at `brandIds`: in the window, and per perk before `to`. */
export async function readMemberRedemptions(
  db: Kysely<DB>,
  userKey: string,
  brandIds: string[],
  from: Date,
  to: Date,
): Promise<{ redemptions: number; spent: bigint; perkIds: string[]; claimsByPerk: Map<string, number> }> {
  const result = await sql<{ perk_id: string; n: number; spent: string; in_window: number; spent_window: string }>`
    SELECT perk_id::text AS perk_id, count(*)::int AS n, coalesce(sum(cost), 0)::text AS spent,
           count(*) FILTER (WHERE created_at >= ${from})::int AS in_window,
           coalesce(sum(cost) FILTER (WHERE created_at >= ${from}), 0)::text AS spent_window
      FROM perk_redemptions
     WHERE user_key = ${userKey} AND status IN ('pending', 'confirmed') AND brand_id IN (${sql.join(brandIds)})
       AND created_at < ${to}
     GROUP BY perk_id`.execute(db);
  return {
    redemptions: result.rows.reduce((s, r) => s + r.in_window, 0),
    spent: result.rows.reduce((s, r) => s + BigInt(r.spent_window), 0n),
    perkIds: result.rows.map((r) => r.perk_id),
    /** All-time redemptions (pending or confirmed) of each perk: what its per-user maximum counts. */
    claimsByPerk: new Map(result.rows.map((r) => [r.perk_id, r.n])),
  };
}

/**
 * A member's ledger balance across the network: accepted rewards − redemptions not failed. The on-chain
 * balance is the truth for spending; this ledger needs no RPC and equals it once mints confirm.
 */
export async function readLedgerBalance(db: Kysely<DB>, userKey: string): Promise<bigint> {
  const result = await sql<{ earned: string; spent: string }>`
    SELECT (SELECT coalesce(sum(reward_amount), 0) FROM events
             WHERE user_email = ${userKey} AND status = 'accepted')::text AS earned,
           (SELECT coalesce(sum(cost), 0) FROM perk_redemptions
             WHERE user_key = ${userKey} AND status IN ('pending', 'confirmed'))::text AS spent`.execute(db);
  const row = result.rows[0];
  return BigInt(row?.earned ?? '0') - BigInt(row?.spent ?? '0');
}

/**
 * Every member's earnings at `brandIds` in the window, ascending (one grouped scan of the brands' events in
 * the window). A member's rank is a binary search in it (`countBelow`); the population is its length.
 */
export async function readEarningsTotals(db: Kysely<DB>, brandIds: string[], from: Date, to: Date): Promise<bigint[]> {
  const result = await sql<{ total: string }>`
    SELECT sum(reward_amount)::text AS total FROM events
     WHERE brand_id IN (${sql.join(brandIds)}) AND status = 'accepted'
       AND created_at >= ${from} AND created_at < ${to} AND user_email NOT LIKE 'agent:%'
     GROUP BY user_email
     ORDER BY sum(reward_amount)`.execute(db);
  return result.rows.map((row) => BigInt(row.total));
}

/** How many of the ascending `totals` are strictly below `value`. */
export function countBelow(totals: readonly bigint[], value: bigint): number {
  let low = 0;
  let high = totals.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((totals[mid] as bigint) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

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

/**
 * For each perk cost, how many members of the brand earned at least that much there (all time): the top of
 * the affordability funnel. One pass over the brand's member totals whatever the number of perks: each
 * total falls in a `width_bucket` of the sorted costs, and "≥ cost i" is the sum of buckets ≥ i.
 */
export async function readAffordCounts(
  db: Kysely<DB>,
  brandId: string,
  costs: bigint[],
  now: Date,
): Promise<{ members: number; afford: Map<string, number> }> {
  const sorted = [...new Set(costs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const bounds = sorted.length > 0 ? sorted.map(String) : ['0'];
  const result = await sql<{ bucket: number; n: number }>`
    SELECT width_bucket(total, ${sql.val(bounds)}::numeric[])::int AS bucket, count(*)::int AS n
      FROM (SELECT user_email, sum(reward_amount)::numeric AS total FROM events
             WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at < ${now}
               AND user_email NOT LIKE 'agent:%'
             GROUP BY user_email) AS totals
     GROUP BY bucket`.execute(db);
  const perBucket = new Map(result.rows.map((r) => [r.bucket, r.n]));
  const members = result.rows.reduce((s, r) => s + r.n, 0);
  const afford = new Map<string, number>();
  let atLeast = 0;
  // Bucket i (1-based) holds totals in [cost i, cost i+1); walk down from the top bucket.
  for (let i = sorted.length; i >= 1; i--) {
    atLeast += perBucket.get(i) ?? 0;
    afford.set(String(sorted[i - 1]), atLeast);
  }
  return { members, afford };
}

/** Whether any user row or accepted event carries this key (a 404 otherwise). */
export async function userKnown(db: Kysely<DB>, userKey: string): Promise<boolean> {
  const result = await sql<{ known: boolean }>`
    SELECT EXISTS (SELECT 1 FROM users WHERE email = ${userKey})
        OR EXISTS (SELECT 1 FROM events WHERE user_email = ${userKey} AND status = 'accepted') AS known`.execute(db);
  return Boolean(result.rows[0]?.known);
}
