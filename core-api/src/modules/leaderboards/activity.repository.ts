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
  accountKey: string;
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
    // A reversal settled on chain (modules/reversals): what it burned comes off the tokens-earned boards.
    case 'reversed':
      return [['pts_earned', -activity.amount]];
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
        user_key: a.accountKey,
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

  // Each activity once, with its deltas per metric and its period starts; the database fans it out to every
  // (metric, period, platform) row, adds it to the scores and moves the histogram of values per board, in
  // one statement with no per-row work here. Each user's score moves from `value - delta` (absent when the
  // row is new) to `value`, so a rank is a sum over distinct values rather than a count over users.
  const metricsOf = counted.map((activity) => new Map(metricDeltas(activity)));
  const periods = counted.flatMap((activity, index) =>
    LEADERBOARD_PERIODS.map((period) => ({ index, period, start: periodKey(period, activity.occurredAt) })),
  );
  const delta = (metric: Exclude<LeaderboardMetric, 'streak'>) =>
    metricsOf.map((deltas) => String(deltas.get(metric) ?? 0n));
  await sql`
    WITH a AS (
      SELECT * FROM unnest(${counted.map((_, i) => i)}::int[], ${counted.map((c) => c.brandId)}::text[],
        ${counted.map((c) => c.accountKey)}::text[], ${counted.map((c) => c.platform)}::text[],
        ${delta('pts_earned')}::bigint[], ${delta('activity')}::bigint[], ${delta('claims')}::bigint[])
        AS a(idx, brand_id, user_key, platform, pts_earned, activity, claims)
    ), p AS (
      SELECT * FROM unnest(${periods.map((p) => p.index)}::int[], ${periods.map((p) => p.period)}::text[],
        ${periods.map((p) => p.start)}::text[]) AS p(idx, period, period_start)
    ), input AS (
      SELECT a.brand_id, m.metric, p.period, p.period_start, pl.platform, a.user_key, sum(m.delta)::bigint AS delta
      FROM a JOIN p USING (idx)
      CROSS JOIN LATERAL (VALUES ('pts_earned', a.pts_earned), ('activity', a.activity), ('claims', a.claims))
        AS m(metric, delta)
      CROSS JOIN LATERAL (VALUES (a.platform), (${ALL_PLATFORMS})) AS pl(platform)
      WHERE m.delta <> 0
      GROUP BY 1, 2, 3, 4, 5, 6
    ), upserted AS (
      INSERT INTO leaderboard_scores (brand_id, metric, period, period_start, platform, user_key, value, updated_at)
      SELECT brand_id, metric, period, period_start, platform, user_key, delta, ${now}::timestamptz FROM input
      -- A fixed order of row locks: concurrent writers never deadlock on the aggregates.
      ORDER BY brand_id COLLATE "C", metric COLLATE "C", period COLLATE "C", period_start COLLATE "C",
        platform COLLATE "C", user_key COLLATE "C"
      ON CONFLICT (brand_id, metric, period, period_start, platform, user_key)
        DO UPDATE SET value = leaderboard_scores.value + excluded.value, updated_at = excluded.updated_at
      RETURNING brand_id, metric, period, period_start, platform, user_key, value, (xmax = 0) AS inserted
    ), moves AS (
      SELECT brand_id, metric, period, period_start, platform, value, 1::bigint AS users FROM upserted
      UNION ALL
      SELECT u.brand_id, u.metric, u.period, u.period_start, u.platform, u.value - i.delta, -1::bigint
      FROM upserted u JOIN input i USING (brand_id, metric, period, period_start, platform, user_key)
      WHERE NOT u.inserted
    )
    INSERT INTO leaderboard_value_counts (brand_id, metric, period, period_start, platform, value, users)
    SELECT brand_id, metric, period, period_start, platform, value, sum(users)::bigint FROM moves
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(users) <> 0
    ORDER BY brand_id COLLATE "C", metric COLLATE "C", period COLLATE "C", period_start COLLATE "C",
      platform COLLATE "C", value
    ON CONFLICT (brand_id, metric, period, period_start, platform, value)
      DO UPDATE SET users = leaderboard_value_counts.users + excluded.users`.execute(trx);
  return counted;
}
