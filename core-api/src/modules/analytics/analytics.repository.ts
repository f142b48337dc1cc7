import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { accountEvents, isMemberKey } from '../accounts/member-keys.ts';
import type { TimeWindow } from './periods.ts';

/**
 * The brand analytics read model's SQL (docs/ledger.md, "Brand analytics"): what the agent's analytics,
 * comparison and trend tools and the brand portal read (docs/agent-api/analytics.md). Each function is
 * a fixed number of grouped queries whatever the population. Agent identities are left out of every member
 * count by the one predicate (modules/accounts isMemberKey), as in the intelligence and network tools. Counts come back
 * as int, sums as text → bigint.
 */

const eventMember = isMemberKey(sql.ref('user_email'));
const redemptionMember = isMemberKey(sql.ref('user_key'));
/** Redemptions that spent pts (a failed one spent nothing). */
const spent = sql`status IN ('pending', 'confirmed')`;

/** `brand_id = …` for one brand, or every brand (network) when `brandId` is undefined. */
const scopeOf = (brandId: string | undefined) => (brandId === undefined ? sql`TRUE` : sql`brand_id = ${brandId}`);

/** Activity totals of one brand or of the whole network over one window. */
export interface WindowTotals {
  acceptedEvents: number;
  rejectedEvents: number;
  /** Distinct members with an accepted event. */
  members: number;
  /** Members whose first accepted event (in the scope) falls in the window. */
  newMembers: number;
  /** Brands with an accepted event (1 or 0 for a brand scope). */
  activeBrands: number;
  /** pts of accepted events (the rewards issued for them). */
  ptsIssued: bigint;
  redemptions: number;
  /** Distinct redeemers in the window who are members of the redemption's brand (an accepted event there). */
  redeemers: number;
  /** Of those, the members active in the window: the numerator of every redemption rate. */
  activeRedeemers: number;
  ptsRedeemed: bigint;
}

/**
 * Whether redemption `r`'s member (an account: its key and every linked identity) has an accepted event at
 * the redemption's brand in `[from, to)`, leaving `from` open when undefined (the redemption row is `r`). Redemption rates count only
 * such redeemers: a visitor who earned elsewhere and spends here is not a member of this brand.
 */
export const memberOfBrand = (to: Date, from?: Date) => {
  // Two index probes (the member events index: user, brand, time) rather than an IN over a correlated
  // subquery, which the planner would check against every accepted event of the brand.
  const acceptedHere = sql`e.brand_id = r.brand_id AND e.status = 'accepted' AND e.created_at < ${to}
     ${from === undefined ? sql`` : sql`AND e.created_at >= ${from}`}`;
  return sql`(EXISTS (SELECT 1 FROM events e WHERE e.user_email = r.user_key AND ${acceptedHere})
    OR EXISTS (SELECT 1 FROM account_links l JOIN events e ON e.user_email = l.identity_key
                WHERE l.account_key = r.user_key AND ${acceptedHere}))`;
};

/** Redemptions of the scope in `[from, to)`: count, pts spent, redeemers who are members, and the active ones. */
const redemptionTotalsOf = (scope: RawBuilder<unknown>, { from, to }: Pick<TimeWindow, 'from' | 'to'>) => sql`
  (SELECT count(*)::int AS redemptions, count(DISTINCT user_key) FILTER (WHERE member)::int AS redeemers,
          count(DISTINCT user_key) FILTER (WHERE active)::int AS active_redeemers,
          coalesce(sum(cost), 0)::text AS redeemed
     FROM (SELECT r.user_key, r.cost, ${memberOfBrand(to)} AS member, ${memberOfBrand(to, from)} AS active
             FROM perk_redemptions r
            WHERE ${scope} AND ${redemptionMember} AND ${spent} AND created_at >= ${from} AND created_at < ${to}) AS x)`;

/** The redemption part of `readWindowTotals` alone (the brand dashboard reads its events from the rollups). */
export async function readRedemptionTotals(
  db: Kysely<DB>,
  brandId: string,
  window: Pick<TimeWindow, 'from' | 'to'>,
): Promise<Pick<WindowTotals, 'redemptions' | 'redeemers' | 'activeRedeemers' | 'ptsRedeemed'>> {
  const result = await sql<{ redemptions: number; redeemers: number; active_redeemers: number; redeemed: string }>`
    SELECT r.* FROM ${redemptionTotalsOf(scopeOf(brandId), window)} AS r`.execute(db);
  const r = result.rows[0];
  return {
    redemptions: r?.redemptions ?? 0,
    redeemers: r?.redeemers ?? 0,
    activeRedeemers: r?.active_redeemers ?? 0,
    ptsRedeemed: BigInt(r?.redeemed ?? '0'),
  };
}

/** One round trip: events, new members (unless `newMembers: false`) and redemptions of the scope in `[from, to)`. */
export async function readWindowTotals(
  db: Kysely<DB>,
  brandId: string | undefined,
  window: TimeWindow,
  options: { newMembers?: boolean } = {},
): Promise<WindowTotals> {
  const { from, to } = window;
  const scope = scopeOf(brandId);
  // New members group every accepted event of the scope before `to` by member, the heaviest part of this
  // read: a caller that counts them in its own pass over those events (the brand dashboard's member counts)
  // leaves them out with `newMembers: false` (newMembers is then 0).
  const newMembers =
    options.newMembers === false
      ? sql`(SELECT 0 AS new_members) AS n`
      : sql`(SELECT count(*)::int AS new_members
              FROM (SELECT user_email, min(created_at) AS first FROM ${accountEvents} AS events
                     WHERE ${scope} AND ${eventMember} AND status = 'accepted' AND created_at < ${to}
                     GROUP BY user_email) AS f
             WHERE f.first >= ${from}) AS n`;
  const result = await sql<{
    accepted: number;
    rejected: number;
    members: number;
    brands: number;
    issued: string;
    new_members: number;
    redemptions: number;
    redeemers: number;
    active_redeemers: number;
    redeemed: string;
  }>`
    SELECT e.accepted, e.rejected, e.members, e.brands, e.issued, n.new_members, r.redemptions, r.redeemers,
           r.active_redeemers, r.redeemed
      FROM (SELECT count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
                   count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
                   count(DISTINCT user_email) FILTER (WHERE status = 'accepted')::int AS members,
                   count(DISTINCT brand_id) FILTER (WHERE status = 'accepted')::int AS brands,
                   coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0)::text AS issued
              FROM ${accountEvents} AS events
             WHERE ${scope} AND ${eventMember} AND created_at >= ${from} AND created_at < ${to}) AS e,
           ${newMembers},
           ${redemptionTotalsOf(scope, window)} AS r`.execute(db);
  const r = result.rows[0];
  return {
    acceptedEvents: r?.accepted ?? 0,
    rejectedEvents: r?.rejected ?? 0,
    members: r?.members ?? 0,
    newMembers: r?.new_members ?? 0,
    activeBrands: r?.brands ?? 0,
    ptsIssued: BigInt(r?.issued ?? '0'),
    redemptions: r?.redemptions ?? 0,
    redeemers: r?.redeemers ?? 0,
    activeRedeemers: r?.active_redeemers ?? 0,
    ptsRedeemed: BigInt(r?.redeemed ?? '0'),
  };
}

/** Accepted and rejected events per event type of the scope in a window. */
export interface EventTypeActivity {
  eventType: string;
  accepted: number;
  rejected: number;
  members: number;
  ptsIssued: bigint;
}

/** One grouped query: events per type in `[from, to)`, most accepted first. */
export async function readEventTypeActivity(
  db: Kysely<DB>,
  brandId: string | undefined,
  window: TimeWindow,
): Promise<EventTypeActivity[]> {
  const result = await sql<{ event_type: string; accepted: number; rejected: number; members: number; issued: string }>`
    SELECT event_type,
           count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
           count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
           count(DISTINCT user_email) FILTER (WHERE status = 'accepted')::int AS members,
           coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0)::text AS issued
      FROM ${accountEvents} AS events
     WHERE ${scopeOf(brandId)} AND ${eventMember} AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY event_type
     ORDER BY accepted DESC, event_type`.execute(db);
  return result.rows.map((r) => ({
    eventType: r.event_type,
    accepted: r.accepted,
    rejected: r.rejected,
    members: r.members,
    ptsIssued: BigInt(r.issued),
  }));
}

/** All-time redemption totals per perk of a brand (pts spent, distinct redeemers, failed attempts). */
export async function readPerkRedemptionTotals(
  db: Kysely<DB>,
  brandId: string,
  to: Date,
): Promise<Map<string, { ptsRedeemed: bigint; redeemers: number; failed: number }>> {
  const result = await sql<{ perk_id: string; redeemed: string; redeemers: number; failed: number }>`
    SELECT perk_id::text AS perk_id,
           coalesce(sum(cost) FILTER (WHERE ${spent}), 0)::text AS redeemed,
           count(DISTINCT user_key) FILTER (WHERE ${spent})::int AS redeemers,
           count(*) FILTER (WHERE status = 'failed')::int AS failed
      FROM perk_redemptions
     WHERE brand_id = ${brandId} AND ${redemptionMember} AND created_at < ${to}
     GROUP BY perk_id`.execute(db);
  return new Map(
    result.rows.map((r) => [r.perk_id, { ptsRedeemed: BigInt(r.redeemed), redeemers: r.redeemers, failed: r.failed }]),
  );
}

/** Streak figures of a brand: members whose streak (≥ `minimum`) was last extended in the window. */
export async function readStreakTotals(
  db: Kysely<DB>,
  brandId: string,
  window: TimeWindow,
  minimum = 2,
): Promise<{ streakMembers: number; longestCurrent: number }> {
  const result = await sql<{ members: number; longest: number }>`
    SELECT count(DISTINCT user_key) FILTER (WHERE current >= ${minimum})::int AS members,
           coalesce(max(current), 0)::int AS longest
      FROM streaks
     WHERE brand_id = ${brandId} AND ${redemptionMember}
       AND last_activity_at >= ${window.from} AND last_activity_at < ${window.to}`.execute(db);
  return { streakMembers: result.rows[0]?.members ?? 0, longestCurrent: result.rows[0]?.longest ?? 0 };
}

/** Members active (accepted event) in both windows at the brand: the retained ones. */
export async function readRetainedMembers(
  db: Kysely<DB>,
  brandId: string,
  previous: TimeWindow,
  current: TimeWindow,
): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM (
      SELECT user_email FROM ${accountEvents} AS events
       WHERE brand_id = ${brandId} AND status = 'accepted' AND ${eventMember}
       GROUP BY user_email
      HAVING count(*) FILTER (WHERE created_at >= ${previous.from} AND created_at < ${previous.to}) > 0
         AND count(*) FILTER (WHERE created_at >= ${current.from} AND created_at < ${current.to}) > 0) AS both_windows`.execute(
    db,
  );
  return result.rows[0]?.n ?? 0;
}

/** Program size of a brand now: active rules, and active synced perks with supply left. */
export async function readProgramSize(
  db: Kysely<DB>,
  brandId: string,
): Promise<{ activeRules: number; availablePerks: number }> {
  const result = await sql<{ rules: number; perks: number }>`
    SELECT (SELECT count(*) FROM event_rules WHERE brand_id = ${brandId} AND active)::int AS rules,
           (SELECT count(*) FROM perks p
             WHERE p.brand_id = ${brandId} AND p.active AND p.chain_status = 'synced'
               AND (p.max_supply IS NULL OR p.max_supply > (
                 SELECT count(*) FROM perk_redemptions r WHERE r.perk_id = p.id AND r.status IN ('pending', 'confirmed'))))::int AS perks`.execute(
    db,
  );
  return { activeRules: result.rows[0]?.rules ?? 0, availablePerks: result.rows[0]?.perks ?? 0 };
}

/** Per-brand activity of a window, for rankings and trends: accepted events, members, pts issued. */
export interface BrandActivity {
  brandId: string;
  events: number;
  members: number;
  ptsIssued: bigint;
}

/** One grouped query over every brand with an accepted event in the window (others are absent). */
export async function readActivityByBrand(db: Kysely<DB>, window: TimeWindow): Promise<Map<string, BrandActivity>> {
  const result = await sql<{ brand_id: string; events: number; members: number; issued: string }>`
    SELECT brand_id, count(*)::int AS events, count(DISTINCT user_email)::int AS members,
           coalesce(sum(reward_amount), 0)::text AS issued
      FROM ${accountEvents} AS events
     WHERE status = 'accepted' AND ${eventMember} AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY brand_id`.execute(db);
  return new Map(
    result.rows.map((r) => [
      r.brand_id,
      { brandId: r.brand_id, events: r.events, members: r.members, ptsIssued: BigInt(r.issued) },
    ]),
  );
}

/** Per-item counts of two adjacent windows (current, previous), for trends. */
export interface TrendCounts {
  id: string;
  brandId: string;
  current: number;
  previous: number;
}

/** Accepted events per brand and per event type, and redemptions per perk, in both windows. */
export async function readTrendCounts(
  db: Kysely<DB>,
  previous: TimeWindow,
  current: TimeWindow,
): Promise<{ brands: TrendCounts[]; eventTypes: TrendCounts[]; perks: TrendCounts[] }> {
  const cur = sql`created_at >= ${current.from} AND created_at < ${current.to}`;
  const prev = sql`created_at >= ${previous.from} AND created_at < ${previous.to}`;
  const [brands, eventTypes, perks] = await Promise.all([
    sql<{ id: string; brand_id: string; cur: number; prev: number }>`
      SELECT brand_id AS id, brand_id, count(*) FILTER (WHERE ${cur})::int AS cur, count(*) FILTER (WHERE ${prev})::int AS prev
        FROM ${accountEvents} AS events
       WHERE status = 'accepted' AND ${eventMember} AND created_at >= ${previous.from} AND created_at < ${current.to}
       GROUP BY brand_id`.execute(db),
    sql<{ id: string; brand_id: string; cur: number; prev: number }>`
      SELECT event_type AS id, '' AS brand_id, count(*) FILTER (WHERE ${cur})::int AS cur,
             count(*) FILTER (WHERE ${prev})::int AS prev
        FROM ${accountEvents} AS events
       WHERE status = 'accepted' AND ${eventMember} AND created_at >= ${previous.from} AND created_at < ${current.to}
       GROUP BY event_type`.execute(db),
    sql<{ id: string; brand_id: string; cur: number; prev: number }>`
      SELECT perk_id::text AS id, brand_id, count(*) FILTER (WHERE ${cur})::int AS cur,
             count(*) FILTER (WHERE ${prev})::int AS prev
        FROM perk_redemptions
       WHERE ${spent} AND ${redemptionMember} AND created_at >= ${previous.from} AND created_at < ${current.to}
       GROUP BY perk_id, brand_id`.execute(db),
  ]);
  const toCounts = (rows: { id: string; brand_id: string; cur: number; prev: number }[]) =>
    rows.map((r) => ({ id: r.id, brandId: r.brand_id, current: r.cur, previous: r.prev }));
  return { brands: toCounts(brands.rows), eventTypes: toCounts(eventTypes.rows), perks: toCounts(perks.rows) };
}

/**
 * Cross-brand member flows in a window: each member's brands ordered by their first accepted event there
 * (ties by Brand ID); every consecutive pair A → B is one flow. Also the members and the multi-brand members.
 */
export async function readMemberFlows(
  db: Kysely<DB>,
  window: TimeWindow,
): Promise<{ members: number; multiBrandMembers: number; flows: { from: string; to: string; members: number }[] }> {
  const firsts = sql`
    SELECT user_email, brand_id, min(created_at) AS first FROM ${accountEvents} AS events
     WHERE status = 'accepted' AND ${eventMember} AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY user_email, brand_id`;
  const [flows, totals] = await Promise.all([
    sql<{ source: string; target: string; n: number }>`
      SELECT source, target, count(*)::int AS n FROM (
        SELECT lag(brand_id) OVER (PARTITION BY user_email ORDER BY first, brand_id) AS source, brand_id AS target
          FROM (${firsts}) AS f) AS steps
       WHERE source IS NOT NULL
       GROUP BY source, target
       ORDER BY n DESC, source, target`.execute(db),
    sql<{ members: number; multi: number }>`
      SELECT count(*)::int AS members, count(*) FILTER (WHERE brands > 1)::int AS multi
        FROM (SELECT user_email, count(*) AS brands FROM (${firsts}) AS f GROUP BY user_email) AS m`.execute(db),
  ]);
  return {
    members: totals.rows[0]?.members ?? 0,
    multiBrandMembers: totals.rows[0]?.multi ?? 0,
    flows: flows.rows.map((r) => ({ from: r.source, to: r.target, members: r.n })),
  };
}

/** One brand of the category over the window. Agent identities are left out, as in the analytics tools. */
export interface PeerActivity {
  brandId: string;
  /** Distinct members with an accepted event. */
  members: number;
  acceptedEvents: number;
  /** pts of accepted events. */
  ptsIssued: bigint;
  /** Distinct members active in the window with a pending or confirmed redemption there (members only). */
  redeemers: number;
  ptsRedeemed: bigint;
}

/** Every brand of `category` (active or not) with its activity in `[from, to)`; two grouped scans. */
export async function readCategoryActivity(
  db: Kysely<DB>,
  category: string,
  window: TimeWindow,
): Promise<PeerActivity[]> {
  const { from, to } = window;
  const result = await sql<{
    brand_id: string;
    members: number;
    events: number;
    issued: string;
    redeemers: number;
    redeemed: string;
  }>`
    SELECT b.address AS brand_id, coalesce(e.members, 0)::int AS members, coalesce(e.events, 0)::int AS events,
           coalesce(e.issued, 0)::text AS issued, coalesce(r.redeemers, 0)::int AS redeemers,
           coalesce(r.redeemed, 0)::text AS redeemed
      FROM brands b
      LEFT JOIN (SELECT brand_id, count(DISTINCT user_email) AS members, count(*) AS events,
                        sum(reward_amount) AS issued
                   FROM ${accountEvents} AS events
                  WHERE status = 'accepted' AND ${isMemberKey(sql.ref('user_email'))}
                    AND created_at >= ${from} AND created_at < ${to}
                  GROUP BY brand_id) e ON e.brand_id = b.address
      LEFT JOIN (SELECT brand_id, count(DISTINCT user_key) FILTER (WHERE active) AS redeemers, sum(cost) AS redeemed
                   FROM (SELECT r.brand_id, r.user_key, r.cost, ${memberOfBrand(to, from)} AS active
                           FROM perk_redemptions r
                          WHERE r.status IN ('pending', 'confirmed') AND ${isMemberKey(sql.ref('r.user_key'))}
                            AND r.created_at >= ${from} AND r.created_at < ${to}) x
                  GROUP BY brand_id) r ON r.brand_id = b.address
     WHERE b.category = ${category}
     ORDER BY b.address`.execute(db);
  return result.rows.map((r) => ({
    brandId: r.brand_id,
    members: r.members,
    acceptedEvents: r.events,
    ptsIssued: BigInt(r.issued),
    redeemers: r.redeemers,
    ptsRedeemed: BigInt(r.redeemed),
  }));
}

/** Names of brands (for answers that list Brand IDs). */
export async function readBrandNames(db: Kysely<DB>, brandIds: string[]): Promise<Map<string, string>> {
  if (brandIds.length === 0) return new Map();
  const rows = await db.selectFrom('brands').select(['address', 'name']).where('address', 'in', brandIds).execute();
  return new Map(rows.map((r) => [r.address, r.name]));
}

/** Names and brands of perks (for the trending list). */
export async function readPerkNames(db: Kysely<DB>, perkIds: string[]): Promise<Map<string, string>> {
  if (perkIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('perks')
    .select(['id', 'name'])
    .where(
      'id',
      'in',
      perkIds.map((id) => BigInt(id)),
    )
    .execute();
  return new Map(rows.map((r) => [String(r.id), r.name]));
}
