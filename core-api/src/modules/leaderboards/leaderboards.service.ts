import {
  type Clock,
  competitionRanks,
  type LeaderboardEntry,
  type LeaderboardMetric,
  type LeaderboardPeriod,
  maskEmail,
  parsePlatformIdentity,
  periodKey,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { accountIdentities, resolveAccountKey } from '../accounts/accounts.service.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { findDisplayNames } from '../display-names/display-names.ts';
import { loadStreakSettings } from '../streaks/streaks.service.ts';
import { ALL_PLATFORMS } from './activity.repository.ts';

export interface LeaderboardRequest {
  brandId: string;
  metric: LeaderboardMetric;
  period: LeaderboardPeriod;
  limit: number;
  platform?: string | undefined;
  /** The caller, whose own entry comes back as `me`. */
  user?: string | undefined;
  /** Show full identifiers (brand-signed requests); public requests see masked emails. */
  revealIdentifiers: boolean;
  /** Where a brand's unreadable streak settings are reported (the streak board). */
  logger: Logger;
}

export interface LeaderboardResult {
  leaderboard: LeaderboardEntry[];
  total: number;
  periodStart: string | null;
  me: LeaderboardEntry | null;
}

/**
 * Reads a leaderboard: the top `limit` entries of one period's aggregate (maintained incrementally by
 * recordActivities), ranked with ties sharing a rank, plus the caller's own rank. Every query is an index
 * range scan on `leaderboard_scores_rank_idx`; nothing is aggregated per request.
 */
export async function readLeaderboard(db: Database, input: LeaderboardRequest, now: Date): Promise<LeaderboardResult> {
  // A linked identity's entry is its account's (docs/identity-linking.md).
  const request = input.user ? { ...input, user: await resolveAccountKey(db, input.user) } : input;
  if (request.metric === 'streak') return readStreakBoard(db, request, now);
  const periodStart = periodKey(request.period, now);
  const partition = db
    .selectFrom('leaderboard_scores')
    .where('brand_id', '=', request.brandId)
    .where('metric', '=', request.metric)
    .where('period', '=', request.period)
    .where('period_start', '=', periodStart)
    .where('platform', '=', request.platform ?? ALL_PLATFORMS)
    .where('value', '>', 0n);

  const histogram = db
    .selectFrom('leaderboard_value_counts')
    .where('brand_id', '=', request.brandId)
    .where('metric', '=', request.metric)
    .where('period', '=', request.period)
    .where('period_start', '=', periodStart)
    .where('platform', '=', request.platform ?? ALL_PLATFORMS)
    .where('value', '>', 0n);

  const [top, mine] = await Promise.all([
    partition.select(['user_key', 'value']).orderBy('value', 'desc').orderBy('user_key').limit(request.limit).execute(),
    request.user
      ? partition.select(['user_key', 'value']).where('user_key', '=', request.user).executeTakeFirst()
      : Promise.resolve(undefined),
  ]);
  // Total and the caller's rank from the histogram of values: a sum over distinct values, not users.
  const counted = await histogram
    .select([
      sql<string | null>`sum(users)`.as('total'),
      sql<string | null>`sum(users) filter (where value > ${mine ? mine.value : -1n})`.as('above'),
    ])
    .executeTakeFirstOrThrow();
  const names = await usernames(db, request.brandId, [
    ...top.map((row) => row.user_key),
    ...(mine ? [mine.user_key] : []),
  ]);
  const ranks = competitionRanks(top.map((row) => row.value));
  const display = (accountKey: string) => (request.revealIdentifiers ? accountKey : publicIdentifier(accountKey));
  const leaderboard = top.map((row, i) => ({
    userIdentifier: display(row.user_key),
    username: names.get(row.user_key) ?? defaultUsername(row.user_key),
    value: Number(row.value),
    rank: ranks[i] as number,
  }));
  const me: LeaderboardEntry | null = mine
    ? {
        userIdentifier: display(mine.user_key),
        username: names.get(mine.user_key) ?? defaultUsername(mine.user_key),
        value: Number(mine.value),
        rank: Number(counted.above ?? 0) + 1,
      }
    : null;
  return {
    leaderboard,
    total: Number(counted.total ?? 0),
    periodStart: request.period === 'all_time' ? null : periodStart,
    me,
  };
}

/**
 * The streak board ranks live current streaks (days), whatever the period: a streak is already a measure
 * over time, and it is shared across platforms, so `platform` does not filter it. A stored streak whose
 * grace period and freezes ran out counts as 0 (the same rule as the streak status: it lapses when
 * `last activity + grace + one day per freeze` has passed).
 */
async function readStreakBoard(db: Database, request: LeaderboardRequest, now: Date): Promise<LeaderboardResult> {
  const { settings } = await loadStreakSettings({ db, logger: request.logger }, request.brandId);
  const alive = db
    .selectFrom('streaks')
    .where('brand_id', '=', request.brandId)
    .where('streak_type', '=', 'daily')
    .where('current', '>', 0)
    .where(
      sql<boolean>`last_activity_at + make_interval(hours => ${settings.graceHours}) + freezes * interval '1 day' >= ${now}`,
    );
  const [top, mine] = await Promise.all([
    alive.select(['user_key', 'current']).orderBy('current', 'desc').orderBy('user_key').limit(request.limit).execute(),
    request.user
      ? alive.select(['user_key', 'current']).where('user_key', '=', request.user).executeTakeFirst()
      : Promise.resolve(undefined),
  ]);
  const counted = await alive
    .select([
      sql<string>`count(*)`.as('total'),
      sql<string>`count(*) filter (where current > ${mine ? mine.current : -1})`.as('above'),
    ])
    .executeTakeFirstOrThrow();
  const names = await usernames(db, request.brandId, [
    ...top.map((row) => row.user_key),
    ...(mine ? [mine.user_key] : []),
  ]);
  const display = (accountKey: string) => (request.revealIdentifiers ? accountKey : publicIdentifier(accountKey));
  const ranks = competitionRanks(top.map((row) => row.current));
  return {
    leaderboard: top.map((row, i) => ({
      userIdentifier: display(row.user_key),
      username: names.get(row.user_key) ?? defaultUsername(row.user_key),
      value: row.current,
      rank: ranks[i] as number,
    })),
    total: Number(counted.total),
    periodStart: null,
    me: mine
      ? {
          userIdentifier: display(mine.user_key),
          username: names.get(mine.user_key) ?? defaultUsername(mine.user_key),
          value: mine.current,
          rank: Number(counted.above) + 1,
        }
      : null,
  };
}

/** Public boards never show an email in full; platform identities are shown as they are. */
function publicIdentifier(accountKey: string): string {
  return parsePlatformIdentity(accountKey) ? accountKey : maskEmail(accountKey);
}

function defaultUsername(accountKey: string): string {
  const identity = parsePlatformIdentity(accountKey);
  if (identity) return `${identity.platform} user ${identity.platformUserId.slice(-4)}`;
  return maskEmail(accountKey).split('@')[0] as string;
}

/**
 * Names to show: the display name the brand's clients last sent (`metadata.displayName`), else the username
 * a platform identity was pregenerated or seen with (oauth_identities).
 */
async function usernames(db: Database, brandId: string, userKeys: string[]): Promise<Map<string, string>> {
  const displayed = await findDisplayNames(db, brandId, userKeys);
  const names = await oauthUsernames(
    db,
    userKeys.filter((key) => !displayed.has(key)),
  );
  for (const [key, name] of displayed) names.set(key, name);
  return names;
}

/** Usernames that platform identities were pregenerated or seen with (oauth_identities). */
async function oauthUsernames(db: Database, userKeys: string[]): Promise<Map<string, string>> {
  const wanted = new Map<string, string>();
  const pairs: { provider: string; subject: string }[] = [];
  for (const key of new Set(userKeys)) {
    const identity = parsePlatformIdentity(key);
    if (!identity) continue;
    const provider = identity.platform === 'x' ? 'twitter' : identity.platform;
    wanted.set(`${provider}\u0000${identity.platformUserId}`, key);
    pairs.push({ provider, subject: identity.platformUserId });
  }
  const names = new Map<string, string>();
  if (pairs.length === 0) return names;
  const rows = await db
    .selectFrom('oauth_identities')
    .select(['provider', 'subject', 'username'])
    .where((eb) => eb.or(pairs.map((p) => eb.and([eb('provider', '=', p.provider), eb('subject', '=', p.subject)]))))
    .execute();
  for (const row of rows) {
    const key = wanted.get(`${row.provider}\u0000${row.subject}`);
    if (key && row.username) names.set(key, row.username);
  }
  return names;
}

export interface ActivityPage {
  items: {
    id: string;
    kind: string;
    amount: number;
    platform: string;
    occurredAt: string;
    detail: Record<string, unknown>;
  }[];
  nextCursor: string | null;
}

/**
 * A user's activity with one brand, newest first, across the identities linked to their account; `before` is
 * the previous page's `nextCursor`.
 */
export async function readActivity(
  db: Database,
  input: { brandId: string; accountKey: string; limit: number; before?: number | undefined },
): Promise<ActivityPage> {
  let query = db
    .selectFrom('activity_log')
    .select(['id', 'kind', 'amount', 'platform', 'occurred_at', 'detail'])
    .where('brand_id', '=', input.brandId)
    // The account's activity and what its linked identities earned before they were linked.
    .where(
      'user_key',
      'in',
      (await accountIdentities(db, input.accountKey)).identities.map((i) => i.identityKey),
    );
  if (input.before !== undefined) query = query.where('id', '<', BigInt(input.before));
  const rows = await query
    .orderBy('id', 'desc')
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    items: page.map((row) => ({
      id: String(row.id),
      kind: row.kind,
      amount: Number(row.amount),
      platform: row.platform,
      occurredAt: row.occurred_at.toISOString(),
      detail: row.detail,
    })),
    nextCursor: rows.length > input.limit && page.length > 0 ? String(page[page.length - 1]?.id) : null,
  };
}

/** Leaderboards and member activity (`/services/leaderboard`, `/services/activity`). */
export interface LeaderboardService {
  /** The board of a brand now, or BRAND_NOT_FOUND; a brand's unreadable streak settings go to the log. */
  read(input: Omit<LeaderboardRequest, 'logger'>): Promise<LeaderboardResult>;
  /** One page of a member's activity with the brand, newest first. */
  activity(input: {
    brandId: string;
    accountKey: string;
    limit: number;
    before?: number | undefined;
  }): Promise<ActivityPage>;
}

export function createLeaderboardService(deps: { db: Database; clock: Clock; logger: Logger }): LeaderboardService {
  const { db, clock, logger } = deps;
  return {
    read: async (input) => {
      await requireBrandExists(db, input.brandId);
      return readLeaderboard(db, { ...input, logger }, clock.now());
    },
    activity: (input) => readActivity(db, input),
  };
}
