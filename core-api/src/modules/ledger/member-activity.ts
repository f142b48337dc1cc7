import type { Member } from '@pts/shared';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isMemberKey } from '../accounts/member-keys.ts';

/**
 * The member ledger over many members and over windows (docs/ledger.md, "Member activity and
 * populations"): what the agent's intelligence, commerce and audience tools read about members' earnings,
 * spending and balances. The figures are the member ledger's own — `earned` is the rewards of accepted events,
 * `spent` the cost of redemptions pending or confirmed — each read here and nowhere else. Each function is one
 * or two grouped queries whatever the population. Agent identities are left out of populations (isMemberKey).
 * One member's reads take a `Member` (modules/accounts resolveMember): every identity of the account, so a
 * member who linked two platforms is read whole.
 * Counts come back as int, sums as text → bigint.
 */

/**
 * Every member of `members` (a statement selecting identity keys as `k`) with their **earned minus spent**:
 * the rewards of their accepted events at every brand − the cost of their redemptions pending or confirmed,
 * both before `before` when given. Not what a member can spend (bought pts, failed mints and other identities
 * of the account are not in it): a population figure for readBalanceQuartiles. What a member may spend is the
 * wallet's spendable balance (wallet-balance.ts), which every judgeRedemption caller reads.
 */
function earnedMinusSpent(members: RawBuilder<unknown>, before: Date | undefined) {
  const until = before === undefined ? sql`` : sql`AND created_at < ${before}`;
  return sql`
    SELECT m.k, coalesce(earned.s, 0) - coalesce(spent.s, 0) AS balance
      FROM (${members}) AS m
      LEFT JOIN (SELECT user_email AS k, sum(reward_amount) AS s FROM events
                  WHERE status = 'accepted' ${until} AND user_email IN (SELECT k FROM (${members}) AS mm)
                  GROUP BY user_email) AS earned ON earned.k = m.k
      LEFT JOIN (SELECT user_key AS k, sum(cost) AS s FROM perk_redemptions
                  WHERE status IN ('pending', 'confirmed') ${until} AND user_key IN (SELECT k FROM (${members}) AS mm)
                  GROUP BY user_key) AS spent ON spent.k = m.k`;
}

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

/** One member's accepted events (every identity's) at `brandIds` in the window, plus their last event ever there. */
export async function readMemberActivity(
  db: Kysely<DB>,
  member: Member,
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
     WHERE user_email IN (${sql.join(member.identityKeys)}) AND status = 'accepted' AND brand_id IN (${sql.join(brandIds)})
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

/**
 * One member's redemptions (pending or confirmed) at `brandIds`: in the window, and per perk before `to`.
 * Redemptions are recorded under the account, or under an identity redeemed before it was linked: both count.
 */
export async function readMemberRedemptions(
  db: Kysely<DB>,
  member: Member,
  brandIds: string[],
  from: Date,
  to: Date,
): Promise<{ redemptions: number; spent: bigint; perkIds: string[]; claimsByPerk: Map<string, number> }> {
  const result = await sql<{ perk_id: string; n: number; spent: string; in_window: number; spent_window: string }>`
    SELECT perk_id::text AS perk_id, count(*)::int AS n, coalesce(sum(cost), 0)::text AS spent,
           count(*) FILTER (WHERE created_at >= ${from})::int AS in_window,
           coalesce(sum(cost) FILTER (WHERE created_at >= ${from}), 0)::text AS spent_window
      FROM perk_redemptions
     WHERE user_key IN (${sql.join(member.identityKeys)}) AND status IN ('pending', 'confirmed') AND brand_id IN (${sql.join(brandIds)})
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
 * Every member's earnings at `brandIds` in the window, ascending (one grouped scan of the brands' events in
 * the window). A member's rank is a binary search in it (`countBelow`); the population is its length.
 */
export async function readEarningsTotals(db: Kysely<DB>, brandIds: string[], from: Date, to: Date): Promise<bigint[]> {
  const result = await sql<{ total: string }>`
    SELECT sum(reward_amount)::text AS total FROM events
     WHERE brand_id IN (${sql.join(brandIds)}) AND status = 'accepted'
       AND created_at >= ${from} AND created_at < ${to} AND ${isMemberKey(sql.ref('user_email'))}
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
               AND ${isMemberKey(sql.ref('user_email'))}
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

/** Quartiles of the brand's members' earned-minus-spent figures (earnedMinusSpent) and how many members hold at least each. */
export interface BalanceQuartiles {
  members: number;
  quartiles: { quantile: 0.25 | 0.5 | 0.75; balance: bigint; atLeast: number }[];
}

/**
 * Members of the brand (an accepted event there) and the 25th, 50th and 75th percentiles (`percentile_disc`:
 * an actual member's balance) of their earned minus spent (accepted rewards network-wide − redemptions not
 * failed, floored at 0), with the number of members whose balance reaches each.
 */
export async function readBalanceQuartiles(db: Kysely<DB>, brandId: string, now: Date): Promise<BalanceQuartiles> {
  const members = sql`
    SELECT DISTINCT user_email AS k FROM events
     WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at < ${now} AND ${isMemberKey(sql.ref('user_email'))}`;
  const result = await sql<{ n: number; p25: string; p50: string; p75: string; a25: number; a50: number; a75: number }>`
    WITH b AS (
      SELECT greatest(0, balance) AS bal FROM (${earnedMinusSpent(members, now)}) AS l),
    q AS (
      SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY bal) AS p25,
             percentile_disc(0.5) WITHIN GROUP (ORDER BY bal) AS p50,
             percentile_disc(0.75) WITHIN GROUP (ORDER BY bal) AS p75
        FROM b)
    SELECT count(*)::int AS n, q.p25::text AS p25, q.p50::text AS p50, q.p75::text AS p75,
           count(*) FILTER (WHERE b.bal >= q.p25)::int AS a25,
           count(*) FILTER (WHERE b.bal >= q.p50)::int AS a50,
           count(*) FILTER (WHERE b.bal >= q.p75)::int AS a75
      FROM b CROSS JOIN q
     GROUP BY q.p25, q.p50, q.p75`.execute(db);
  const r = result.rows[0];
  if (!r || r.n === 0) return { members: 0, quartiles: [] };
  return {
    members: r.n,
    quartiles: [
      { quantile: 0.25, balance: BigInt(r.p25), atLeast: r.a25 },
      { quantile: 0.5, balance: BigInt(r.p50), atLeast: r.a50 },
      { quantile: 0.75, balance: BigInt(r.p75), atLeast: r.a75 },
    ],
  };
}

/** One member's figures at a brand: the window's activity, earned and spent there, and all-time earned. */
export interface BrandMemberFigures {
  k: string;
  events: number | null;
  types: number | null;
  days: number | null;
  earned: string | null;
  earned_all: string | null;
  first_at: Date | string | null;
  last_at: Date | string | null;
  redemptions: number | null;
  spent: string | null;
}

/**
 * Every member of the brand (an accepted event or a redemption not failed there before `to`) with their
 * accepted events, event types and active days in `[from, to)`, earned there in the window and all time, first
 * and last event, and their redemptions and pts spent there in the window: one grouped pass over the brand's
 * events and one over its redemptions, whatever the number of members.
 */
export async function readBrandMemberFigures(
  db: Kysely<DB>,
  brandId: string,
  window: { from: Date; to: Date },
): Promise<BrandMemberFigures[]> {
  const { from, to } = window;
  const result = await sql<BrandMemberFigures>`
    WITH ev AS (
      SELECT user_email AS k,
             count(*) FILTER (WHERE created_at >= ${from})::int AS events,
             count(DISTINCT event_type) FILTER (WHERE created_at >= ${from})::int AS types,
             count(DISTINCT (created_at AT TIME ZONE 'UTC')::date) FILTER (WHERE created_at >= ${from})::int AS days,
             coalesce(sum(reward_amount) FILTER (WHERE created_at >= ${from}), 0)::text AS earned,
             sum(reward_amount)::text AS earned_all,
             min(created_at) AS first_at, max(created_at) AS last_at
        FROM events
       WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at < ${to} AND ${isMemberKey(sql.ref('user_email'))}
       GROUP BY user_email),
    rd AS (
      SELECT user_key AS k,
             count(*) FILTER (WHERE created_at >= ${from})::int AS redemptions,
             coalesce(sum(cost) FILTER (WHERE created_at >= ${from}), 0)::text AS spent
        FROM perk_redemptions
       WHERE brand_id = ${brandId} AND status IN ('pending', 'confirmed') AND created_at < ${to}
         AND ${isMemberKey(sql.ref('user_key'))}
       GROUP BY user_key)
    SELECT coalesce(ev.k, rd.k) AS k, ev.events, ev.types, ev.days, ev.earned, ev.earned_all, ev.first_at, ev.last_at,
           rd.redemptions, rd.spent
      FROM ev FULL OUTER JOIN rd ON rd.k = ev.k
     ORDER BY 1`.execute(db);
  return result.rows;
}
