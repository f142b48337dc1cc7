import {
  AppError,
  BRAND_ANALYTICS_DEFAULT_DAYS,
  type BrandAnalytics,
  type BrandAnalyticsQuery,
  brandAnalyticsWindowSchema,
  type Clock,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Database } from '../../db/database.ts';
import { accountEvents, isMemberKey } from '../accounts/member-keys.ts';
import { readLeaderboard } from '../leaderboards/leaderboards.service.ts';
import { formatCents } from '../payments/payment-amounts.ts';
import { readFulfilledPurchaseTotals } from '../payments/payments.repository.ts';
import { gasUsageView } from '../relayer/relayer-gas.routes.ts';
import { readEventTypeActivity, readRedemptionTotals } from './analytics.repository.ts';
import {
  type BrandEventActivity,
  type BrandMemberCounts,
  type BucketEvents,
  bucketIn,
  emptyActivity,
  readRawReversals,
  readRolledUpActivity,
  readRolledUpMemberCounts,
  readRolledUpReversals,
  settleWindow,
  sortedRefusals,
  sortedTypes,
} from './brand-rollups.ts';
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
 * `now` (then `endsNow`) and `from` to `days` (default 30) before `to`. Validated by readBrandAnalytics.
 */
export function analyticsWindowOf(
  query: BrandAnalyticsQuery,
  now: Date,
): { from: string; to: string; endsNow: boolean } {
  const to = query.to ?? now.toISOString();
  const end = new Date(to);
  const from =
    query.from ??
    (Number.isNaN(end.getTime())
      ? to
      : new Date(end.getTime() - (query.days ?? BRAND_ANALYTICS_DEFAULT_DAYS) * DAY_MS).toISOString());
  return { from, to, endsNow: query.to === undefined };
}

const eventMember = isMemberKey(sql.ref('user_email'));

/**
 * A brand's analytics over a window (docs/ledger.md, "Brand analytics"): members (all, new, active in the
 * last day, week and month), events accepted and refused (by reason), pts issued, redemptions and pts spent,
 * daily and weekly series, top event types and top perks, token purchases and relayer gas of the window, and
 * the all-time pts leaderboard's top 10 now. The brand portal's dashboard and the agent's `get_brand_dashboard`
 * answer exactly this. A fixed number of grouped statements, run side by side. The window is validated here
 * (`brandAnalyticsWindowSchema`): a caller passing a bad one gets a 400 message. A window that ends now
 * (`endsNow`) may end a little later than asked, just after the latest event (`settleWindow`); the answer's
 * `window` is the one counted.
 */
export async function readBrandAnalytics(
  deps: BrandAnalyticsDeps,
  input: { brandId: string; from: Date | string; to: Date | string; endsNow?: boolean },
): Promise<BrandAnalytics> {
  const { db } = deps;
  const parsed = brandAnalyticsWindowSchema.safeParse({ from: input.from, to: input.to });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError('VALIDATION_ERROR', issue?.message ?? 'Invalid analytics window', {
      field: String(issue?.path[0] ?? 'from'),
    });
  }
  const { brandId } = input;
  const asked: TimeWindow = {
    from: parsed.data.from,
    to: parsed.data.to,
    days: (parsed.data.to.getTime() - parsed.data.from.getTime()) / DAY_MS,
  };
  const settled = await settleWindow(db, asked, { brandIds: [brandId], endsNow: input.endsNow === true });
  const window = settled ?? asked;
  const { from, to } = window;
  const [activity, reversals, redemptions, redemptionSeries, perks, purchases, gas, leaderboard] = await Promise.all([
    settled ? readRolledUpActivity(db, brandId, window) : readRawActivity(db, brandId, window),
    settled ? readRolledUpReversals(db, brandId, window) : readRawReversals(db, brandId, window),
    readRedemptionTotals(db, brandId, window),
    readRedemptionSeries(db, brandId, window),
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
    members: {
      total: activity.memberCounts.total,
      active: activity.memberCounts.active,
      new: activity.memberCounts.new,
      inWindow: activity.members,
    },
    events: { accepted: activity.accepted, refused: activity.refused, refusedByReason: activity.refusals },
    ptsIssued: activity.ptsIssued.toString(),
    reversals: {
      count: reversals.count,
      ptsReversed: reversals.ptsReversed.toString(),
      ptsDeducted: reversals.ptsDeducted.toString(),
    },
    ptsNetIssued: (activity.ptsIssued - reversals.ptsReversed).toString(),
    redemptions: {
      count: redemptions.redemptions,
      ptsSpent: redemptions.ptsRedeemed.toString(),
      redeemers: redemptions.redeemers,
      ratePercent:
        activity.members > 0 ? Math.round((redemptions.activeRedeemers / activity.members) * 1000) / 10 : null,
    },
    series: {
      day: fillBuckets(activity.days, redemptionSeries.get('day'), dayStarts(from, to)),
      week: fillBuckets(activity.weeks, redemptionSeries.get('week'), weekStarts(from, to)),
    },
    topEventTypes: activity.types.slice(0, BRAND_ANALYTICS_TOP).map((t) => ({
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

/** The window's event figures from the brand's raw events: any window, at the cost of reading its events. */
export async function readRawActivity(db: Database, brandId: string, window: TimeWindow): Promise<BrandEventActivity> {
  const [totals, members, refusals, series, types] = await Promise.all([
    readRawEventTotals(db, brandId, window),
    readRawMemberCountsByBrand(db, window, [brandId]),
    readRefusals(db, brandId, window),
    readSeries(db, brandId, window),
    readEventTypeActivity(db, brandId, window),
  ]);
  return {
    ...emptyActivity(),
    ...totals,
    memberCounts: members.get(brandId) ?? emptyActivity().memberCounts,
    refusals: sortedRefusals(new Map(refusals.map((r) => [r.reason, r.count]))),
    days: series.get('day') ?? new Map(),
    weeks: series.get('week') ?? new Map(),
    types: sortedTypes(types),
  };
}

async function readRawEventTotals(db: Database, brandId: string, window: TimeWindow) {
  const result = await sql<{ accepted: number; refused: number; members: number; issued: string }>`
    SELECT count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
           count(*) FILTER (WHERE status = 'rejected')::int AS refused,
           count(DISTINCT user_email) FILTER (WHERE status = 'accepted')::int AS members,
           coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0)::text AS issued
      FROM ${accountEvents} AS events
     WHERE brand_id = ${brandId} AND ${eventMember} AND created_at >= ${window.from} AND created_at < ${window.to}`.execute(
    db,
  );
  const r = result.rows[0];
  return {
    accepted: r?.accepted ?? 0,
    refused: r?.refused ?? 0,
    members: r?.members ?? 0,
    ptsIssued: BigInt(r?.issued ?? '0'),
  };
}

type MemberCountWindow = Pick<TimeWindow, 'from' | 'to'>;

/**
 * The dashboard's member counts (`members.total`, `members.new`, `members.active`) of several brands, or of
 * every brand with a member when `brandIds` is undefined (the operators' brand list), one definition: from the
 * rollups' member rows when nothing was written after the window, else from the raw events. A brand without
 * members is absent.
 */
export async function readMemberCountsByBrand(
  db: Database,
  window: MemberCountWindow & { endsNow?: boolean },
  brandIds?: readonly string[],
): Promise<Map<string, BrandMemberCounts>> {
  if (brandIds?.length === 0) return new Map();
  const settled = await settleWindow(db, window, {
    ...(brandIds ? { brandIds } : {}),
    endsNow: window.endsNow === true,
  });
  return settled
    ? await readRolledUpMemberCounts(db, settled, brandIds)
    : await readRawMemberCountsByBrand(db, window, brandIds);
}

/**
 * The member counts from the raw events: one pass over the accepted events grouped by brand and member (a
 * hash of members: their first and last event).
 */
async function readRawMemberCountsByBrand(
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
              FROM ${accountEvents} AS events
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
      FROM ${accountEvents} AS events
     WHERE brand_id = ${brandId} AND status = 'rejected' AND ${eventMember}
       AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY 1
     ORDER BY count DESC, reason`.execute(db);
  return result.rows;
}

/**
 * Events per UTC day and per week (Monday) from the raw events, in one statement. The window's events are
 * read once, grouped by day and member; the days and the weeks are sums over those groups (a member active on
 * several days of a week is one member of the week).
 */
async function readSeries(db: Database, brandId: string, window: TimeWindow) {
  const inWindow = sql`brand_id = ${brandId} AND created_at >= ${window.from} AND created_at < ${window.to}`;
  const result = await sql<{
    unit: 'day' | 'week';
    start: string;
    accepted: number;
    refused: number;
    members: number;
    issued: string;
  }>`
    WITH member_days AS (
      SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, user_email,
             count(*) FILTER (WHERE status = 'accepted') AS accepted,
             count(*) FILTER (WHERE status = 'rejected') AS refused,
             coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0) AS issued
        FROM ${accountEvents} AS events WHERE ${inWindow} AND ${eventMember}
       GROUP BY 1, 2),
    member_weeks AS (
      SELECT date_trunc('week', day) AS week, user_email, sum(accepted) AS accepted, sum(refused) AS refused,
             sum(issued) AS issued
        FROM member_days GROUP BY 1, 2)
    SELECT 'day' AS unit, to_char(day, 'YYYY-MM-DD') AS start, sum(accepted)::int AS accepted,
           sum(refused)::int AS refused, count(*) FILTER (WHERE accepted > 0)::int AS members,
           sum(issued)::text AS issued
      FROM member_days GROUP BY day
    UNION ALL
    SELECT 'week' AS unit, to_char(week, 'YYYY-MM-DD') AS start, sum(accepted)::int AS accepted,
           sum(refused)::int AS refused, count(*) FILTER (WHERE accepted > 0)::int AS members,
           sum(issued)::text AS issued
      FROM member_weeks GROUP BY week`.execute(db);
  const byUnit = new Map<'day' | 'week', Map<string, BucketEvents>>();
  for (const row of result.rows) {
    const buckets = byUnit.get(row.unit) ?? new Map<string, BucketEvents>();
    byUnit.set(row.unit, buckets);
    const bucket = bucketIn(buckets, row.start);
    bucket.accepted += Number(row.accepted);
    bucket.refused += Number(row.refused);
    bucket.members += Number(row.members);
    bucket.issued += BigInt(row.issued);
  }
  return byUnit;
}

type RedemptionBucket = { redemptions: number; spent: bigint };

/** Redemptions (pending or confirmed) per UTC day and per week (Monday) of the window, agents apart. */
async function readRedemptionSeries(db: Database, brandId: string, window: TimeWindow) {
  const inWindow = sql`brand_id = ${brandId} AND created_at >= ${window.from} AND created_at < ${window.to}`;
  const unitStart = (unit: 'day' | 'week') =>
    sql`to_char(date_trunc(${unit}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  const redemptionsBy = (unit: 'day' | 'week') => sql`
    SELECT ${unit}::text AS unit, ${unitStart(unit)} AS start, count(*)::int AS redemptions,
           coalesce(sum(cost), 0)::text AS spent
      FROM perk_redemptions
     WHERE ${inWindow} AND ${isMemberKey(sql.ref('user_key'))} AND status IN ('pending', 'confirmed')
     GROUP BY 2`;
  const result = await sql<{ unit: 'day' | 'week'; start: string; redemptions: number; spent: string }>`
    ${redemptionsBy('day')} UNION ALL ${redemptionsBy('week')}`.execute(db);
  const byUnit = new Map<'day' | 'week', Map<string, RedemptionBucket>>();
  for (const row of result.rows) {
    const buckets = byUnit.get(row.unit) ?? new Map<string, RedemptionBucket>();
    byUnit.set(row.unit, buckets);
    buckets.set(row.start, { redemptions: Number(row.redemptions), spent: BigInt(row.spent) });
  }
  return byUnit;
}

/** Every bucket of the window in order, zeros where nothing happened. */
function fillBuckets(
  events: Map<string, BucketEvents>,
  redemptions: Map<string, RedemptionBucket> | undefined,
  starts: string[],
) {
  return starts.map((start) => {
    const e = events.get(start);
    const r = redemptions?.get(start);
    return {
      start,
      acceptedEvents: e?.accepted ?? 0,
      refusedEvents: e?.refused ?? 0,
      activeMembers: e?.members ?? 0,
      ptsIssued: (e?.issued ?? 0n).toString(),
      redemptions: r?.redemptions ?? 0,
      ptsSpent: (r?.spent ?? 0n).toString(),
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
       AND r.status IN ('pending', 'confirmed') AND ${isMemberKey(sql.ref('r.user_key'))}
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

/**
 * A brand's analytics read model (docs/ledger.md, "Brand analytics") over a dashboard query, for the portal's
 * dashboard and anyone answering the same question: one definition of every number.
 */
export interface BrandAnalyticsService {
  /** The brand's analytics over the query's window (`analyticsWindowOf`: by default the 30 days ending now). */
  dashboard(brandId: string, query: BrandAnalyticsQuery): Promise<BrandAnalytics>;
}

export function createBrandAnalyticsService(deps: BrandAnalyticsDeps & { clock: Clock }): BrandAnalyticsService {
  return {
    dashboard: (brandId, query) => readBrandAnalytics(deps, { brandId, ...analyticsWindowOf(query, deps.clock.now()) }),
  };
}
