/**
 * Leaderboard periods. Two vocabularies occur in the spec (`week|month|all` in the plugin API,
 * `daily|weekly|monthly|all_time` for the services); both are accepted and normalized to the second.
 * Periods are calendar periods in UTC: a day starts at midnight UTC, a week on Monday (ISO 8601), a month on
 * its first day. `all_time` has one period that starts at the epoch.
 */
export const LEADERBOARD_PERIODS = ['daily', 'weekly', 'monthly', 'all_time'] as const;
export type LeaderboardPeriod = (typeof LEADERBOARD_PERIODS)[number];

/** Every accepted spelling, mapped to its canonical period. */
export const PERIOD_ALIASES: Readonly<Record<string, LeaderboardPeriod>> = {
  day: 'daily',
  daily: 'daily',
  today: 'daily',
  week: 'weekly',
  weekly: 'weekly',
  month: 'monthly',
  monthly: 'monthly',
  all: 'all_time',
  all_time: 'all_time',
  alltime: 'all_time',
};

/** The canonical period for an accepted spelling (case-insensitive), or undefined. */
export function normalizePeriod(value: string): LeaderboardPeriod | undefined {
  return PERIOD_ALIASES[value.trim().toLowerCase()];
}

const DAY_MS = 86_400_000;

/** Start (UTC midnight) of the period that contains `at`. */
export function periodStart(period: LeaderboardPeriod, at: Date): Date {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  switch (period) {
    case 'daily':
      return new Date(day);
    case 'weekly': {
      // getUTCDay: Sunday 0 … Saturday 6; ISO weeks start on Monday.
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      return new Date(day - sinceMonday * DAY_MS);
    }
    case 'monthly':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    case 'all_time':
      return new Date(0);
  }
}

/** Start of the period after the one that contains `at` (when a board of that period turns over); none for `all_time`. */
export function nextPeriodStart(period: LeaderboardPeriod, at: Date): Date | undefined {
  const start = periodStart(period, at);
  switch (period) {
    case 'daily':
      return new Date(start.getTime() + DAY_MS);
    case 'weekly':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'monthly':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    case 'all_time':
      return undefined;
  }
}

/** `YYYY-MM-DD` of the period start, the key the aggregates are stored under. */
export function periodKey(period: LeaderboardPeriod, at: Date): string {
  return periodStart(period, at).toISOString().slice(0, 10);
}

/**
 * Standard competition ranking ("1224") of values sorted from best to worst: equal values share a rank and
 * the next distinct value skips the tied places. `firstRank` is the rank of `values[0]` (1 at the top of
 * the board; larger when the list is a later page).
 */
export function competitionRanks(values: readonly number[] | readonly bigint[], firstRank = 1): number[] {
  const ranks: number[] = [];
  for (let i = 0; i < values.length; i++) {
    ranks.push(i > 0 && values[i] === values[i - 1] ? (ranks[i - 1] as number) : firstRank + i);
  }
  return ranks;
}
