import { LEADERBOARD_PERIODS, type LeaderboardMetric, periodKey } from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/** The aggregate row for every platform together. */
export const ALL_PLATFORMS = '*';

/** What happened: `earned` a confirmed reward, `claimed` a perk, `spent` tokens, anything else. */
export type ActivityKind = 'earned' | 'claimed' | 'spent' | (string & {});

export interface ActivityInput {
  brandId: string;
  /** The account: email or `<platform>_<id>@<service domain>`. */
  userKey: string;
  platform: string;
  kind: ActivityKind;
  amount: bigint;
  /** Unique per kind (event id, transaction id): recording the same activity again changes nothing. */
  ref: string | null;
  detail?: Record<string, unknown>;
  occurredAt: Date;
}

/** How an activity moves the leaderboards (the streak board reads the streaks themselves). */
function metricDeltas(activity: ActivityInput): [Exclude<LeaderboardMetric, 'streak'>, bigint][] {
  switch (activity.kind) {
    case 'earned':
      return [
        ['pts_earned', activity.amount],
        ['activity', 1n],
      ];
    case 'claimed':
      return [
        ['claims', 1n],
        ['activity', 1n],
      ];
    case 'spent':
      return [];
    default:
      return [['activity', 1n]];
  }
}

/**
 * Appends activities to the log and adds them to the leaderboard aggregates (every period, the activity's
 * platform and all platforms together) in the caller's transaction, so the boards are maintained
 * incrementally and never recomputed per request. An activity whose (kind, ref) is already logged is
 * skipped entirely, so a replayed confirmation counts once. Returns the activities that counted.
 */
export async function recordActivities(
  trx: Database,
  activities: ActivityInput[],
  now: Date,
): Promise<ActivityInput[]> {
  if (activities.length === 0) return [];
  const inserted = await trx
    .insertInto('activity_log')
    .values(
      activities.map((a) => ({
        brand_id: a.brandId,
        user_key: a.userKey,
        platform: a.platform,
        kind: a.kind,
        amount: a.amount,
        ref: a.ref,
        detail: JSON.stringify(a.detail ?? {}),
        occurred_at: a.occurredAt,
      })),
    )
    .onConflict((oc) => oc.columns(['kind', 'ref']).doNothing())
    .returning(['kind', 'ref'])
    .execute();
  const fresh = new Set(inserted.map((row) => `${row.kind}\u0000${row.ref ?? ''}`));
  // Rows without a ref are always new; rows with one only when this call inserted them.
  const counted = activities.filter((a) => a.ref === null || fresh.has(`${a.kind}\u0000${a.ref}`));

  const deltas = new Map<string, { key: ScoreKey; delta: bigint }>();
  for (const activity of counted) {
    for (const [metric, delta] of metricDeltas(activity)) {
      if (delta === 0n) continue;
      for (const period of LEADERBOARD_PERIODS) {
        const periodStart = periodKey(period, activity.occurredAt);
        for (const platform of [activity.platform, ALL_PLATFORMS]) {
          const key: ScoreKey = {
            brand_id: activity.brandId,
            metric,
            period,
            period_start: periodStart,
            platform,
            user_key: activity.userKey,
          };
          const id = Object.values(key).join('\u0000');
          const entry = deltas.get(id);
          if (entry) entry.delta += delta;
          else deltas.set(id, { key, delta });
        }
      }
    }
  }
  if (deltas.size === 0) return counted;
  // A fixed order of row locks: concurrent writers never deadlock on the aggregates.
  const rows = [...deltas.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, { key, delta }]) => ({ ...key, value: delta, updated_at: now }));
  // Each user's score moves from `value - delta` (absent when the row is new) to `value`; the histogram of
  // values per board follows, so a rank is a sum over distinct values rather than a count over users.
  const histogram = new Map<string, { key: Omit<ScoreKey, 'user_key'> & { value: bigint }; users: bigint }>();
  const bump = (key: Omit<ScoreKey, 'user_key'>, value: bigint, users: bigint) => {
    const id = [key.brand_id, key.metric, key.period, key.period_start, key.platform, value].join('\u0000');
    const entry = histogram.get(id);
    if (entry) entry.users += users;
    else histogram.set(id, { key: { ...key, value }, users });
  };
  // One statement over column arrays (unnest): its size does not grow with the rows, so neither does the
  // cost of building, sending, parsing and planning it (a VALUES list of 16 rows per reward did).
  const column = <K extends keyof (typeof rows)[number]>(name: K) => rows.map((row) => String(row[name]));
  const { rows: updated } = await sql<ScoreKey & { value: string; inserted: boolean }>`
    INSERT INTO leaderboard_scores (brand_id, metric, period, period_start, platform, user_key, value, updated_at)
    SELECT brand_id, metric, period, period_start, platform, user_key, value, ${now}::timestamptz
    FROM unnest(${column('brand_id')}::text[], ${column('metric')}::text[], ${column('period')}::text[],
      ${column('period_start')}::text[], ${column('platform')}::text[], ${column('user_key')}::text[],
      ${column('value')}::bigint[]) AS t(brand_id, metric, period, period_start, platform, user_key, value)
    ON CONFLICT (brand_id, metric, period, period_start, platform, user_key)
      DO UPDATE SET value = leaderboard_scores.value + excluded.value, updated_at = excluded.updated_at
    RETURNING brand_id, metric, period, period_start, platform, user_key, value, (xmax = 0) AS inserted`.execute(trx);
  const deltaOf = new Map(rows.map((row) => [scoreId(row), row.value]));
  for (const row of updated) {
    const key = {
      brand_id: row.brand_id,
      metric: row.metric,
      period: row.period,
      period_start: row.period_start,
      platform: row.platform,
    };
    const value = BigInt(row.value);
    if (!row.inserted) bump(key, value - (deltaOf.get(scoreId(row)) ?? 0n), -1n);
    bump(key, value, 1n);
  }
  const counts = [...histogram.entries()]
    .filter(([, entry]) => entry.users !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, entry]) => ({ ...entry.key, users: entry.users }));
  if (counts.length > 0) {
    const column = <K extends keyof (typeof counts)[number]>(name: K) => counts.map((row) => String(row[name]));
    await sql`
      INSERT INTO leaderboard_value_counts (brand_id, metric, period, period_start, platform, value, users)
      SELECT * FROM unnest(${column('brand_id')}::text[], ${column('metric')}::text[], ${column('period')}::text[],
        ${column('period_start')}::text[], ${column('platform')}::text[], ${column('value')}::bigint[],
        ${column('users')}::bigint[])
      ON CONFLICT (brand_id, metric, period, period_start, platform, value)
        DO UPDATE SET users = leaderboard_value_counts.users + excluded.users`.execute(trx);
  }
  return counted;
}

function scoreId(row: ScoreKey): string {
  return [row.brand_id, row.metric, row.period, row.period_start, row.platform, row.user_key].join('\u0000');
}

interface ScoreKey {
  brand_id: string;
  metric: string;
  period: string;
  period_start: string;
  platform: string;
  user_key: string;
}
