import {
  AppError,
  BRAND_ANALYTICS_DEFAULT_DAYS,
  type BrandAnalytics,
  type BrandAnalyticsQuery,
  brandAnalyticsWindowSchema,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Database } from '../../db/database.ts';
import { readLeaderboard } from '../leaderboards/leaderboards.service.ts';
import { formatCents } from '../payments/payment-amounts.ts';
import { readFulfilledPurchaseTotals } from '../payments/payments.repository.ts';
import { gasUsageView } from '../relayer/relayer-gas.routes.ts';
import { notAgent, readEventTypeActivity, readWindowTotals } from './analytics.repository.ts';
import { DAY_MS, type TimeWindow } from './periods.ts';

/** Entries in the top event types, top perks and the leaderboard. */
export const BRAND_ANALYTICS_TOP = 10;

/** What the read model reads: the database, the chain whose relayer gas it sums, where problems are logged. */
export interface BrandAnalyticsDeps {
  db: Database;
  chain: { chainId: number };
  logger: Logger;
}

/**
 * The window of a dashboard query (`brandAnalyticsQuerySchema`): `from`/`to` as given, `to` defaulting to
 * `now` and `from` to `days` (default 30) before `to`. Validated by readBrandAnalytics.
 */
export function analyticsWindowOf(query: BrandAnalyticsQuery, now: Date): { from: string; to: string } {
  const to = query.to ?? now.toISOString();
  const end = new Date(to);
  const from =
    query.from ??
    (Number.isNaN(end.getTime())
      ? to
      : new Date(end.getTime() - (query.days ?? BRAND_ANALYTICS_DEFAULT_DAYS) * DAY_MS).toISOString());
  return { from, to };
}

const eventMember = notAgent(sql.ref('user_email'));

/**
 * A brand's analytics over a window (docs/ledger.md, "Brand analytics"): members (all, new, active in the
 * last day, week and month), events accepted and refused (by reason), pts issued, redemptions and pts spent,
 * daily and weekly series, top event types and top perks, token purchases and relayer gas of the window, and
 * the all-time pts leaderboard's top 10 now. The brand portal's dashboard and the agent's `get_brand_dashboard`
 * answer exactly this. A fixed number of grouped statements, run side by side. The window is validated here
 * (`brandAnalyticsWindowSchema`): a caller passing a bad one gets a 400 message.
 */
export async function readBrandAnalytics(
  deps: BrandAnalyticsDeps,
  input: { brandId: string; from: Date | string; to: Date | string },
): Promise<BrandAnalytics> {
  const { db } = deps;
  const parsed = brandAnalyticsWindowSchema.safeParse({ from: input.from, to: input.to });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError('VALIDATION_ERROR', issue?.message ?? 'Invalid analytics window', {
      field: String(issue?.path[0] ?? 'from'),
    });
  }
  const { from, to } = parsed.data;
  const window: TimeWindow = { from, to, days: (to.getTime() - from.getTime()) / DAY_MS };
  const { brandId } = input;
  const [totals, members, refusals, series, types, perks, purchases, gas, leaderboard] = await Promise.all([
    readWindowTotals(db, brandId, window, { newMembers: false }),
    readMemberCounts(db, brandId, window),
    readRefusals(db, brandId, window),
    readSeries(db, brandId, window),
    readEventTypeActivity(db, brandId, window),
    readTopPerks(db, brandId, window),
    readFulfilledPurchaseTotals(db, brandId, window),
    readGasByBrand(db, deps.chain.chainId, brandId, window),
    readLeaderboard(
      db,
      {
        brandId,
        metric: 'pts_earned',
        period: 'all_time',
        limit: BRAND_ANALYTICS_TOP,
        revealIdentifiers: true,
        logger: deps.logger,
      },
      to,
    ),
  ]);
  const gasUsed = gas.reduce((sum, row) => sum + row.gasUsed, 0n);
  const costWei = gas.reduce((sum, row) => sum + row.costWei, 0n);
  return {
    brandId,
    window: { from: from.toISOString(), to: to.toISOString(), days: window.days },
    members: { total: members.total, active: members.active, new: members.new, inWindow: totals.members },
    events: { accepted: totals.acceptedEvents, refused: totals.rejectedEvents, refusedByReason: refusals },
    ptsIssued: totals.ptsIssued.toString(),
    redemptions: {
      count: totals.redemptions,
      ptsSpent: totals.ptsRedeemed.toString(),
      redeemers: totals.redeemers,
      ratePercent: totals.members > 0 ? Math.round((totals.activeRedeemers / totals.members) * 1000) / 10 : null,
    },
    series: {
      day: fillBuckets(series.get('day'), dayStarts(from, to)),
      week: fillBuckets(series.get('week'), weekStarts(from, to)),
    },
    topEventTypes: types.slice(0, BRAND_ANALYTICS_TOP).map((t) => ({
      eventType: t.eventType,
      accepted: t.accepted,
      refused: t.rejected,
      members: t.members,
      ptsIssued: t.ptsIssued.toString(),
    })),
    topPerks: perks,
    tokenPurchases: {
      count: purchases.count,
      usdCents: Number(purchases.usdCents),
      usdAmount: formatCents(purchases.usdCents),
      pts: purchases.pts.toString(),
    },
    relayerGas: gasUsageView(
      gasUsed,
      costWei,
      gas.reduce((sum, row) => sum + row.transactions, 0),
    ),
    leaderboard: {
      metric: 'pts_earned',
      period: 'all_time',
      total: leaderboard.total,
      top: leaderboard.leaderboard,
    },
  };
}

/** A brand's members before the window's end: all, the new ones in the window, those active before the end. */
export interface BrandMemberCounts {
  total: number;
  /** Members whose first accepted event falls in the window (as `readWindowTotals` counts them). */
  new: number;
  active: { day: number; week: number; month: number };
}

async function readMemberCounts(db: Database, brandId: string, window: MemberCountWindow): Promise<BrandMemberCounts> {
  return (await readMemberCountsByBrand(db, window, [brandId])).get(brandId) ?? noMembers();
}

const noMembers = (): BrandMemberCounts => ({ total: 0, new: 0, active: { day: 0, week: 0, month: 0 } });

type MemberCountWindow = Pick<TimeWindow, 'from' | 'to'>;

/**
 * The dashboard's member counts (`members.total`, `members.new`, `members.active`) of several brands, or of
 * every brand with a member when `brandIds` is undefined (the operators' brand list): one grouped statement,
 * one definition. One pass over the accepted events grouped by brand and member (a hash of members: their
 * first and last event), not one sort of every event per distinct count. A brand without members is absent.
 */
export async function readMemberCountsByBrand(
  db: Database,
  window: MemberCountWindow,
  brandIds?: readonly string[],
): Promise<Map<string, BrandMemberCounts>> {
  if (brandIds?.length === 0) return new Map();
  const { from, to } = window;
  const ago = (days: number) => new Date(to.getTime() - days * DAY_MS);
  const scope = brandIds === undefined ? sql`TRUE` : sql`brand_id IN (${sql.join(brandIds)})`;
  const result = await sql<{ brand_id: string; total: number; new: number; day: number; week: number; month: number }>`
    SELECT brand_id,
           count(*)::int AS total,
           count(*) FILTER (WHERE first >= ${from})::int AS new,
           count(*) FILTER (WHERE last >= ${ago(1)})::int AS day,
           count(*) FILTER (WHERE last >= ${ago(7)})::int AS week,
           count(*) FILTER (WHERE last >= ${ago(30)})::int AS month
      FROM (SELECT brand_id, min(created_at) AS first, max(created_at) AS last
              FROM events
             WHERE ${scope} AND status = 'accepted' AND ${eventMember} AND created_at < ${to}
             GROUP BY brand_id, user_email) AS m
     GROUP BY brand_id`.execute(db);
  return new Map(
    result.rows.map((row) => [
      row.brand_id,
      { total: row.total, new: row.new, active: { day: row.day, week: row.week, month: row.month } },
    ]),
  );
}

/** Refused events of the window by reason (the refusal's error code), most frequent first. */
async function readRefusals(db: Database, brandId: string, window: TimeWindow) {
  const result = await sql<{ reason: string; count: number }>`
    SELECT coalesce(reason, 'unknown') AS reason, count(*)::int AS count
      FROM events
     WHERE brand_id = ${brandId} AND status = 'rejected' AND ${eventMember}
       AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY 1
     ORDER BY count DESC, reason`.execute(db);
  return result.rows;
}

type BucketRow = {
  unit: 'day' | 'week';
  start: string;
  accepted: number;
  refused: number;
  members: number;
  issued: string;
  redemptions: number;
  spent: string;
};

/**
 * Events and redemptions per UTC day and per week (Monday), in one statement. The window's events are read
 * once, grouped by day and member; the days and the weeks are sums over those groups (a member active on
 * several days of a week is one member of the week).
 */
async function readSeries(db: Database, brandId: string, window: TimeWindow) {
  const inWindow = sql`brand_id = ${brandId} AND created_at >= ${window.from} AND created_at < ${window.to}`;
  const unitStart = (unit: 'day' | 'week') =>
    sql`to_char(date_trunc(${unit}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  const redemptionsBy = (unit: 'day' | 'week') => sql`
    SELECT ${unit}::text AS unit, ${unitStart(unit)} AS start, 0 AS accepted, 0 AS refused, 0 AS members,
           '0' AS issued, count(*)::int AS redemptions, coalesce(sum(cost), 0)::text AS spent
      FROM perk_redemptions
     WHERE ${inWindow} AND ${notAgent(sql.ref('user_key'))} AND status IN ('pending', 'confirmed')
     GROUP BY 2`;
  const result = await sql<BucketRow>`
    WITH member_days AS (
      SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, user_email,
             count(*) FILTER (WHERE status = 'accepted') AS accepted,
             count(*) FILTER (WHERE status = 'rejected') AS refused,
             coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0) AS issued
        FROM events WHERE ${inWindow} AND ${eventMember}
       GROUP BY 1, 2),
    member_weeks AS (
      SELECT date_trunc('week', day) AS week, user_email, sum(accepted) AS accepted, sum(refused) AS refused,
             sum(issued) AS issued
        FROM member_days GROUP BY 1, 2)
    SELECT 'day' AS unit, to_char(day, 'YYYY-MM-DD') AS start, sum(accepted)::int AS accepted,
           sum(refused)::int AS refused, count(*) FILTER (WHERE accepted > 0)::int AS members,
           sum(issued)::text AS issued, 0 AS redemptions, '0' AS spent
      FROM member_days GROUP BY day
    UNION ALL
    SELECT 'week' AS unit, to_char(week, 'YYYY-MM-DD') AS start, sum(accepted)::int AS accepted,
           sum(refused)::int AS refused, count(*) FILTER (WHERE accepted > 0)::int AS members,
           sum(issued)::text AS issued, 0 AS redemptions, '0' AS spent
      FROM member_weeks GROUP BY week
    UNION ALL ${redemptionsBy('day')} UNION ALL ${redemptionsBy('week')}`.execute(db);
  const byUnit = new Map<'day' | 'week', Map<string, BucketRow[]>>();
  for (const row of result.rows) {
    const buckets = byUnit.get(row.unit) ?? new Map<string, BucketRow[]>();
    buckets.set(row.start, [...(buckets.get(row.start) ?? []), row]);
    byUnit.set(row.unit, buckets);
  }
  return byUnit;
}

/** Every bucket of the window in order, zeros where nothing happened. */
function fillBuckets(rows: Map<string, BucketRow[]> | undefined, starts: string[]) {
  return starts.map((start) => {
    const parts = rows?.get(start) ?? [];
    const sum = (pick: (row: BucketRow) => number) => parts.reduce((total, row) => total + pick(row), 0);
    const sumPts = (pick: (row: BucketRow) => string) => parts.reduce((total, row) => total + BigInt(pick(row)), 0n);
    return {
      start,
      acceptedEvents: sum((r) => Number(r.accepted)),
      refusedEvents: sum((r) => Number(r.refused)),
      activeMembers: sum((r) => Number(r.members)),
      ptsIssued: sumPts((r) => r.issued).toString(),
      redemptions: sum((r) => Number(r.redemptions)),
      ptsSpent: sumPts((r) => r.spent).toString(),
    };
  });
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The UTC days the window touches. */
function dayStarts(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Math.floor(from.getTime() / DAY_MS) * DAY_MS; t < to.getTime(); t += DAY_MS) {
    days.push(isoDay(new Date(t)));
  }
  return days;
}

/** The weeks (starting Monday, UTC) the window touches. */
function weekStarts(from: Date, to: Date): string[] {
  const day = Math.floor(from.getTime() / DAY_MS) * DAY_MS;
  // 1970-01-01 was a Thursday: (weekday + 6) % 7 days back is the Monday.
  const monday = day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
  const weeks: string[] = [];
  for (let t = monday; t < to.getTime(); t += 7 * DAY_MS) weeks.push(isoDay(new Date(t)));
  return weeks;
}

/** The window's most redeemed perks (pending or confirmed), members and agents apart as everywhere. */
async function readTopPerks(db: Database, brandId: string, window: TimeWindow) {
  const result = await sql<{ perk_id: string; name: string; redemptions: number; redeemers: number; spent: string }>`
    SELECT p.public_id AS perk_id, p.name, count(*)::int AS redemptions,
           count(DISTINCT r.user_key)::int AS redeemers, coalesce(sum(r.cost), 0)::text AS spent
      FROM perk_redemptions r JOIN perks p ON p.id = r.perk_id
     WHERE r.brand_id = ${brandId} AND r.created_at >= ${window.from} AND r.created_at < ${window.to}
       AND r.status IN ('pending', 'confirmed') AND ${notAgent(sql.ref('r.user_key'))}
     GROUP BY p.public_id, p.name
     ORDER BY redemptions DESC, spent DESC, p.public_id
     LIMIT ${BRAND_ANALYTICS_TOP}`.execute(db);
  return result.rows.map((r) => ({
    perkId: r.perk_id,
    name: r.name,
    redemptions: r.redemptions,
    redeemers: r.redeemers,
    ptsSpent: r.spent,
  }));
}
