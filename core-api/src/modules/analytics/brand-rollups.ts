import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { accountEvents, isMemberKey } from '../accounts/member-keys.ts';
import { DAY_MS, type TimeWindow } from './periods.ts';

/**
 * The brand read model's event figures over a window, however they were read: from the raw events (any
 * window) or from the rollups the database keeps beside them (a window that ends at the present). Both
 * readers answer this shape, and the same data gives the same answer (brand-rollups.test.ts).
 */
export interface BrandEventActivity {
  accepted: number;
  refused: number;
  ptsIssued: bigint;
  /** Distinct members with an accepted event in the window. */
  members: number;
  memberCounts: BrandMemberCounts;
  /** Refused events by reason, most frequent first, then by reason. */
  refusals: { reason: string; count: number }[];
  /** Per UTC day and per week (Monday, UTC) the window touches; only the buckets with an event. */
  days: Map<string, BucketEvents>;
  weeks: Map<string, BucketEvents>;
  /** Per event type, most accepted first, then by type. */
  types: { eventType: string; accepted: number; rejected: number; members: number; ptsIssued: bigint }[];
}

/** A brand's members before the window's end: all, the new ones in the window, those active before the end. */
export interface BrandMemberCounts {
  total: number;
  /** Members whose first accepted event falls in the window. */
  new: number;
  active: { day: number; week: number; month: number };
}

export interface BucketEvents {
  accepted: number;
  refused: number;
  /** Distinct members with an accepted event in the bucket (within the window). */
  members: number;
  issued: bigint;
}

const eventMember = isMemberKey(sql.ref('user_email'));
const isoDay = (at: Date) => at.toISOString().slice(0, 10);
const dayStart = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
/** The Monday (UTC) of the week holding `day` (1970-01-01 was a Thursday). */
export const mondayOf = (day: Date) => {
  const start = dayStart(day);
  return new Date(start.getTime() - ((start.getUTCDay() + 6) % 7) * DAY_MS);
};

/** Most first, then by name (code point order, the same on every database and collation). */
export const byCountThenName =
  <T>(count: (row: T) => number, name: (row: T) => string) =>
  (a: T, b: T) =>
    count(b) - count(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);

/**
 * How far another process's clock may run ahead: events stamped up to this long after a window that ends now
 * are taken into it (its `to` moves to just after the latest) rather than sending the read to the raw events.
 */
export const CLOCK_SKEW_MS = 60_000;

/**
 * The window the rollups can answer exactly, or undefined (only the raw events can): the rollups hold every
 * committed event, so they answer `[from, to)` when nothing of the brands (or, without any, of every brand)
 * is stamped at or after `to`. A window that ends now (`endsNow`: the caller did not choose `to`) whose
 * brands have events stamped after `to` — written while the read starts, or by a process whose clock runs
 * ahead, at most CLOCK_SKEW_MS — ends instead just after the latest of them, the same length. One index probe.
 */
export async function settleWindow<W extends Pick<TimeWindow, 'from' | 'to'>>(
  db: Database,
  window: W,
  options: { brandIds?: readonly string[]; endsNow?: boolean },
): Promise<W | undefined> {
  const { brandIds } = options;
  const scope = brandIds === undefined ? sql`TRUE` : sql`brand_id IN (${sql.join(brandIds)})`;
  const result = await sql<{ latest: Date | string | null }>`
    SELECT max(created_at) AS latest FROM events WHERE ${scope} AND created_at >= ${window.to}`.execute(db);
  const latest = result.rows[0]?.latest;
  if (latest === null || latest === undefined) return window;
  const latestMs = new Date(latest).getTime();
  if (!options.endsNow || latestMs >= window.to.getTime() + CLOCK_SKEW_MS) return undefined;
  const shift = latestMs + 1 - window.to.getTime();
  return { ...window, from: new Date(window.from.getTime() + shift), to: new Date(latestMs + 1) };
}

/**
 * How a window splits over the rollups: the whole UTC days from `firstDay` to `lastDay` (the last one may be
 * today's, up to the present), and at most one raw edge `[from, edgeEnd)` when `from` is not a day's start.
 */
function spanOf(window: Pick<TimeWindow, 'from' | 'to'>) {
  const { from, to } = window;
  const aligned = from.getTime() === dayStart(from).getTime();
  const nextDay = new Date(dayStart(from).getTime() + DAY_MS);
  const edge = aligned ? undefined : { from, to: to < nextDay ? to : nextDay };
  const firstDay = aligned ? from : nextDay;
  // The day holding the window's last instant.
  const lastDay = dayStart(new Date(to.getTime() - 1));
  return { edge, firstDay: isoDay(firstDay), lastDay: isoDay(lastDay), hasDays: firstDay <= lastDay };
}

/**
 * The window's event figures from the rollups (migration 2026_12_05_a01_brand_rollups; docs/ledger.md,
 * "Brand rollups"), for a window `settleWindow` answered (nothing of the brand stamped at or after `to`).
 * A few hundred rollup rows, histogram sums, index ranges of one day, and the raw events of at most the
 * window's first partial day.
 */
export async function readRolledUpActivity(
  db: Database,
  brandId: string,
  window: Pick<TimeWindow, 'from' | 'to'>,
): Promise<BrandEventActivity> {
  const { from, to } = window;
  const span = spanOf(window);
  const inEdge = span.edge
    ? sql`brand_id = ${brandId} AND ${eventMember} AND created_at >= ${span.edge.from} AND created_at < ${span.edge.to}`
    : sql`FALSE`;
  const days = span.hasDays ? sql`day >= ${span.firstDay} AND day <= ${span.lastDay}` : sql`FALSE`;
  const firstWeek = mondayOf(from);
  // The first week is whole when the window starts at its Monday; otherwise its members are those whose last
  // event of that week is at or after `from`.
  const firstWeekWhole = firstWeek.getTime() === from.getTime();
  const firstWeekEnd = isoDay(new Date(firstWeek.getTime() + 6 * DAY_MS));
  const ago = (n: number) => new Date(to.getTime() - n * DAY_MS);

  // A count of members whose first/last event is at or after `at`: the histogram's days after `at`'s day,
  // plus an index range of the members whose event falls in `at`'s day from `at` on.
  const points = { from, day: ago(1), week: ago(7), month: ago(30) };
  const dayAfter = (at: Date) => isoDay(at);
  const dayEnd = (at: Date) => new Date(dayStart(at).getTime() + DAY_MS);
  const partial = (column: 'first_at' | 'last_at', at: Date) =>
    sql`(SELECT count(*) FROM brand_members
          WHERE brand_id = ${brandId} AND ${sql.ref(column)} >= ${at} AND ${sql.ref(column)} < ${dayEnd(at)})`;

  const [counts, histogram, partials, typePartials, dayMembers, weekMembers] = await Promise.all([
    sql<{ day: string; event_type: string; status: string; reason: string; events: string; pts: string }>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, event_type, status, reason, sum(events)::text AS events,
             sum(pts)::text AS pts
        FROM brand_event_days WHERE brand_id = ${brandId} AND ${days}
       GROUP BY 1, 2, 3, 4
      UNION ALL
      SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), event_type, status,
             CASE WHEN status = 'rejected' THEN coalesce(reason, 'unknown') ELSE '' END, count(*)::text,
             coalesce(sum(reward_amount), 0)::text
        FROM events WHERE ${inEdge}
       GROUP BY 1, 2, 3, 4`.execute(db),
    sql<{
      kind: 'first' | 'last' | 'week_last';
      event_type: string;
      total: string;
      from: string;
      first_week: string;
      day: string;
      week: string;
      month: string;
    }>`
      SELECT kind, event_type, sum(members)::text AS total,
             coalesce(sum(members) FILTER (WHERE day > ${dayAfter(points.from)}), 0)::text AS from,
             coalesce(sum(members) FILTER (WHERE day > ${dayAfter(points.from)} AND day <= ${firstWeekEnd}), 0)::text
               AS first_week,
             coalesce(sum(members) FILTER (WHERE day > ${dayAfter(points.day)}), 0)::text AS day,
             coalesce(sum(members) FILTER (WHERE day > ${dayAfter(points.week)}), 0)::text AS week,
             coalesce(sum(members) FILTER (WHERE day > ${dayAfter(points.month)}), 0)::text AS month
        FROM brand_member_counts WHERE brand_id = ${brandId}
       GROUP BY 1, 2`.execute(db),
    sql<{ new: number; window: number; first_week: number; day: number; week: number; month: number }>`
      SELECT ${partial('first_at', points.from)}::int AS new, ${partial('last_at', points.from)}::int AS window,
             (SELECT count(*) FROM brand_member_weeks
               WHERE brand_id = ${brandId} AND start = ${isoDay(firstWeek)}
                 AND last_at >= ${from} AND last_at < ${dayEnd(from)})::int AS first_week,
             ${partial('last_at', points.day)}::int AS day, ${partial('last_at', points.week)}::int AS week,
             ${partial('last_at', points.month)}::int AS month`.execute(db),
    sql<{ event_type: string; members: number }>`
      SELECT event_type, count(*)::int AS members
        FROM brand_member_types
       WHERE brand_id = ${brandId} AND last_at >= ${from} AND last_at < ${dayEnd(from)}
       GROUP BY 1`.execute(db),
    sql<{ start: string; members: string }>`
      SELECT to_char(start, 'YYYY-MM-DD') AS start, sum(members)::text AS members
        FROM brand_active_counts WHERE brand_id = ${brandId} AND unit = 'day'
         AND ${span.hasDays ? sql`start >= ${span.firstDay} AND start <= ${span.lastDay}` : sql`FALSE`}
       GROUP BY 1
      UNION ALL
      SELECT ${isoDay(from)}::text, count(DISTINCT user_email)::text
        FROM ${accountEvents} AS events WHERE ${inEdge} AND status = 'accepted'
      HAVING count(*) > 0`.execute(db),
    sql<{ start: string; members: string }>`
      SELECT to_char(start, 'YYYY-MM-DD') AS start, sum(members)::text AS members
        FROM brand_active_counts
       WHERE brand_id = ${brandId} AND unit = 'week'
         AND start >= ${isoDay(firstWeekWhole ? firstWeek : new Date(firstWeek.getTime() + 7 * DAY_MS))}
         AND start <= ${isoDay(mondayOf(new Date(to.getTime() - 1)))}
       GROUP BY 1
      `.execute(db),
  ]);

  const memberRow = histogram.rows.find((row) => row.kind === 'last' && row.event_type === '');
  const firstRow = histogram.rows.find((row) => row.kind === 'first' && row.event_type === '');
  const p = partials.rows[0] ?? { new: 0, window: 0, first_week: 0, day: 0, week: 0, month: 0 };
  const since = (value: string | undefined, edge: number) => Number(value ?? 0) + edge;
  const activity = emptyActivity();
  activity.memberCounts = {
    total: Number(firstRow?.total ?? 0),
    new: since(firstRow?.from, p.new),
    active: {
      day: since(memberRow?.day, p.day),
      week: since(memberRow?.week, p.week),
      month: since(memberRow?.month, p.month),
    },
  };
  activity.members = since(memberRow?.from, p.window);
  const refusals = new Map<string, number>();
  const typeRows = new Map<string, BrandEventActivity['types'][number]>();
  for (const row of counts.rows) {
    const events = Number(row.events);
    const pts = BigInt(row.pts);
    const accepted = row.status === 'accepted';
    const type = typeRows.get(row.event_type) ?? {
      eventType: row.event_type,
      accepted: 0,
      rejected: 0,
      members: 0,
      ptsIssued: 0n,
    };
    typeRows.set(row.event_type, type);
    if (accepted) {
      activity.accepted += events;
      activity.ptsIssued += pts;
      type.accepted += events;
      type.ptsIssued += pts;
    } else {
      activity.refused += events;
      type.rejected += events;
      refusals.set(row.reason, (refusals.get(row.reason) ?? 0) + events);
    }
    for (const [buckets, start] of [
      [activity.days, row.day],
      [activity.weeks, isoDay(mondayOf(new Date(`${row.day}T00:00:00Z`)))],
    ] as const) {
      const bucket = bucketIn(buckets, start);
      if (accepted) {
        bucket.accepted += events;
        bucket.issued += pts;
      } else bucket.refused += events;
    }
  }
  const typeEdges = new Map(typePartials.rows.map((row) => [row.event_type, row.members]));
  for (const row of histogram.rows) {
    const type = row.kind === 'last' && row.event_type !== '' ? typeRows.get(row.event_type) : undefined;
    if (type) type.members = since(row.from, typeEdges.get(row.event_type) ?? 0);
  }
  for (const [eventType, edge] of typeEdges) {
    const type = typeRows.get(eventType);
    if (type && !histogram.rows.some((row) => row.kind === 'last' && row.event_type === eventType)) type.members = edge;
  }
  for (const [buckets, rows] of [
    [activity.days, dayMembers.rows],
    [activity.weeks, weekMembers.rows],
  ] as const) {
    for (const row of rows) bucketIn(buckets, row.start).members += Number(row.members);
  }
  // The first, cut week: its members whose last event of the week is at or after `from`.
  const weekLast = histogram.rows.find((row) => row.kind === 'week_last');
  const firstWeekMembers = firstWeekWhole ? 0 : since(weekLast?.first_week, p.first_week);
  if (firstWeekMembers > 0) bucketIn(activity.weeks, isoDay(firstWeek)).members += firstWeekMembers;
  activity.refusals = sortedRefusals(refusals);
  activity.types = sortedTypes([...typeRows.values()]);
  return activity;
}

export function emptyActivity(): BrandEventActivity {
  return {
    accepted: 0,
    refused: 0,
    ptsIssued: 0n,
    members: 0,
    memberCounts: { total: 0, new: 0, active: { day: 0, week: 0, month: 0 } },
    refusals: [],
    days: new Map(),
    weeks: new Map(),
    types: [],
  };
}

export function bucketIn(buckets: Map<string, BucketEvents>, start: string): BucketEvents {
  const bucket = buckets.get(start) ?? { accepted: 0, refused: 0, members: 0, issued: 0n };
  buckets.set(start, bucket);
  return bucket;
}

export const sortedRefusals = (byReason: Map<string, number>) =>
  [...byReason]
    .map(([reason, count]) => ({ reason, count }))
    .sort(
      byCountThenName(
        (r) => r.count,
        (r) => r.reason,
      ),
    );

export const sortedTypes = (types: BrandEventActivity['types']) =>
  [...types].sort(
    byCountThenName(
      (t) => t.accepted,
      (t) => t.eventType,
    ),
  );

/**
 * The dashboard's member counts of several brands (or every brand with a member) from the rollups' member
 * rows, for a window `settleWindow` answered. A brand without members is absent.
 */
export async function readRolledUpMemberCounts(
  db: Database,
  window: Pick<TimeWindow, 'from' | 'to'>,
  brandIds?: readonly string[],
): Promise<Map<string, BrandMemberCounts>> {
  const { from, to } = window;
  const ago = (days: number) => new Date(to.getTime() - days * DAY_MS);
  const scope = brandIds === undefined ? sql`TRUE` : sql`brand_id IN (${sql.join(brandIds)})`;
  const result = await sql<{ brand_id: string; total: number; new: number; day: number; week: number; month: number }>`
    SELECT brand_id, count(*)::int AS total,
           count(*) FILTER (WHERE first_at >= ${from})::int AS new,
           count(*) FILTER (WHERE last_at >= ${ago(1)})::int AS day,
           count(*) FILTER (WHERE last_at >= ${ago(7)})::int AS week,
           count(*) FILTER (WHERE last_at >= ${ago(30)})::int AS month
      FROM brand_members WHERE ${scope}
     GROUP BY brand_id`.execute(db);
  return new Map(
    result.rows.map((row) => [
      row.brand_id,
      { total: row.total, new: row.new, active: { day: row.day, week: row.week, month: row.month } },
    ]),
  );
}

/** The appended rollup tables: their keys and the columns summed when rows are folded. */
const FOLDED = {
  brand_event_days: { keys: ['brand_id', 'day', 'event_type', 'status', 'reason'], sums: ['events', 'pts'] },
  brand_active_counts: { keys: ['brand_id', 'unit', 'start'], sums: ['members'] },
  brand_member_counts: { keys: ['brand_id', 'event_type', 'kind', 'day'], sums: ['members'] },
  brand_reversal_days: { keys: ['brand_id', 'day', 'kind'], sums: ['reversals', 'pts'] },
} as const;

/**
 * Folds the rollups' fresh rows (one per key and writing statement) into one row per key, so a reader sums a
 * handful of rows per day whatever the number of writes. Safe beside writers and other compactions: it
 * moves only committed rows, each exactly once (a row another compaction already moved is skipped).
 * Answers how many fresh rows each table had.
 */
export async function compactBrandRollups(db: Database): Promise<Record<keyof typeof FOLDED, number>> {
  const folded = {} as Record<keyof typeof FOLDED, number>;
  for (const [table, { keys, sums }] of Object.entries(FOLDED) as [
    keyof typeof FOLDED,
    (typeof FOLDED)[keyof typeof FOLDED],
  ][]) {
    const columns = [...keys, ...sums].join(', ');
    const keyList = keys.join(', ');
    const sameKey = keys.map((key) => `d.${key} = k.${key}`).join(' AND ');
    const result = await sql<{ n: number }>`
      WITH fresh AS (DELETE FROM ${sql.table(table)} WHERE NOT compacted RETURNING ${sql.raw(columns)}),
      keys AS (SELECT DISTINCT ${sql.raw(keyList)} FROM fresh),
      old AS (
        DELETE FROM ${sql.table(table)} d USING keys k WHERE d.compacted AND ${sql.raw(sameKey)}
        RETURNING ${sql.raw([...keys, ...sums].map((column) => `d.${column}`).join(', '))}),
      folded AS (
        INSERT INTO ${sql.table(table)} (${sql.raw(columns)}, compacted)
        SELECT ${sql.raw(keyList)}, ${sql.raw(sums.map((column) => `sum(${column})`).join(', '))}, true
          FROM (SELECT * FROM fresh UNION ALL SELECT * FROM old) AS rows
         GROUP BY ${sql.raw(keyList)}
        RETURNING 1)
      SELECT (SELECT count(*) FROM fresh)::int AS n`.execute(db);
    folded[table] = result.rows[0]?.n ?? 0;
  }
  return folded;
}

/** What reversals and manual deductions took back in a window (docs/ledger.md, "Brand rollups"). */
export interface BrandReversalTotals {
  count: number;
  ptsReversed: bigint;
  ptsDeducted: bigint;
}

type ReversalSumRow = { kind: string; n: string; pts: string };

function reversalTotalsOf(rows: ReversalSumRow[]): BrandReversalTotals {
  const totals: BrandReversalTotals = { count: 0, ptsReversed: 0n, ptsDeducted: 0n };
  for (const row of rows) {
    totals.count += Number(row.n);
    totals.ptsReversed += BigInt(row.pts);
    if (row.kind === 'deduction') totals.ptsDeducted += BigInt(row.pts);
  }
  return totals;
}

const reversalMember = isMemberKey(sql.ref('user_email'));

/** The window's reversals from the raw `reward_reversals` rows (any window). */
export async function readRawReversals(
  db: Database,
  brandId: string,
  window: Pick<TimeWindow, 'from' | 'to'>,
): Promise<BrandReversalTotals> {
  const result = await sql<ReversalSumRow>`
    SELECT kind, count(*)::text AS n, coalesce(sum(pts), 0)::text AS pts
      FROM reward_reversals
     WHERE brand_id = ${brandId} AND ${reversalMember} AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY kind`.execute(db);
  return reversalTotalsOf(result.rows);
}

/**
 * The window's reversals from the rollups (`brand_reversal_days`, migration 2026_12_08_c01_deductions): the
 * whole UTC days inside the window from the rollup rows, the partial first and last days from the raw rows
 * (an index range of at most two days), so the answer is exact whatever is written after the window.
 */
export async function readRolledUpReversals(
  db: Database,
  brandId: string,
  window: Pick<TimeWindow, 'from' | 'to'>,
): Promise<BrandReversalTotals> {
  const { from, to } = window;
  const firstWhole = from.getTime() === dayStart(from).getTime() ? from : new Date(dayStart(from).getTime() + DAY_MS);
  const endWhole = dayStart(to);
  if (firstWhole >= endWhole) return readRawReversals(db, brandId, window);
  const result = await sql<ReversalSumRow>`
    SELECT kind, sum(n)::text AS n, sum(pts)::text AS pts FROM (
      SELECT kind, sum(reversals) AS n, sum(pts) AS pts
        FROM brand_reversal_days
       WHERE brand_id = ${brandId} AND day >= ${isoDay(firstWhole)} AND day < ${isoDay(endWhole)}
       GROUP BY kind
      UNION ALL
      SELECT kind, count(*), coalesce(sum(pts), 0)
        FROM reward_reversals
       WHERE brand_id = ${brandId} AND ${reversalMember}
         AND ((created_at >= ${from} AND created_at < ${firstWhole}) OR (created_at >= ${endWhole} AND created_at < ${to}))
       GROUP BY kind) AS parts
     GROUP BY kind`.execute(db);
  return reversalTotalsOf(result.rows);
}
