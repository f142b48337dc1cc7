import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { type ActivityInput, recordActivities } from './activity.repository.ts';
import { type LeaderboardRequest, readActivity, readLeaderboard } from './leaderboards.service.ts';

const BRAND = '0x00000000000000000000000000000000000000b1';
const OTHER_BRAND = '0x00000000000000000000000000000000000000b2';
// Sunday 22 November 2026, 18:00 UTC: its ISO week began on Monday the 16th.
const NOW = new Date('2026-11-22T18:00:00Z');

let database: TestDatabase;
let ref = 0;

const earned = (
  accountKey: string,
  amount: number,
  at: Date = NOW,
  extra: Partial<ActivityInput> = {},
): ActivityInput => ({
  brandId: BRAND,
  accountKey,
  platform: 'web',
  kind: 'earned',
  amount: BigInt(amount),
  ref: `ref-${++ref}`,
  occurredAt: at,
  ...extra,
});

const board = (overrides: Partial<LeaderboardRequest> = {}, now = NOW) =>
  readLeaderboard(
    database.db,
    {
      brandId: BRAND,
      metric: 'pts_earned',
      period: 'weekly',
      limit: 10,
      revealIdentifiers: true,
      logger: pino({ level: 'silent' }),
      ...overrides,
    },
    now,
  );

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});
beforeEach(async () => {
  await database.db.deleteFrom('leaderboard_scores').execute();
  await database.db.deleteFrom('leaderboard_value_counts').execute();
  await database.db.deleteFrom('activity_log').execute();
});

describe('leaderboard aggregates', () => {
  it('ranks by value with ties sharing a rank (1224)', async () => {
    await recordActivities(
      database.db,
      [
        earned('a@example.com', 50),
        earned('b@example.com', 40),
        earned('c@example.com', 40),
        earned('d@example.com', 10),
        earned('d@example.com', 20),
      ],
      NOW,
    );
    const result = await board();
    expect(result.leaderboard.map((e) => [e.userIdentifier, e.value, e.rank])).toEqual([
      ['a@example.com', 50, 1],
      ['b@example.com', 40, 2],
      ['c@example.com', 40, 2],
      ['d@example.com', 30, 4],
    ]);
    expect(result.total).toBe(4);
    expect(result.periodStart).toBe('2026-11-16');
    // The value histogram follows every move (d went 10 → 30).
    const histogram = await database.db
      .selectFrom('leaderboard_value_counts')
      .select(['value', 'users'])
      .where('metric', '=', 'pts_earned')
      .where('period', '=', 'weekly')
      .where('platform', '=', '*')
      .where('users', '!=', 0n)
      .orderBy('value')
      .execute();
    expect(histogram.map((row) => [Number(row.value), Number(row.users)])).toEqual([
      [30, 1],
      [40, 2],
      [50, 1],
    ]);
  });

  it('gives the caller their own rank even below the limit', async () => {
    await recordActivities(
      database.db,
      [
        earned('a@example.com', 50),
        earned('b@example.com', 40),
        earned('c@example.com', 40),
        earned('d@example.com', 5),
      ],
      NOW,
    );
    const result = await board({ limit: 1, user: 'c@example.com' });
    expect(result.leaderboard).toHaveLength(1);
    expect(result.me).toMatchObject({ userIdentifier: 'c@example.com', value: 40, rank: 2 });
    expect((await board({ user: 'nobody@example.com' })).me).toBeNull();
  });

  it('keeps periods apart: last week, this week, this month, all time, today', async () => {
    await recordActivities(
      database.db,
      [
        earned('a@example.com', 100, new Date('2026-11-15T23:59:59Z')), // Sunday of the previous week
        earned('a@example.com', 7, new Date('2026-11-16T00:00:00Z')), // Monday: this week
        earned('b@example.com', 30, new Date('2026-10-31T12:00:00Z')), // last month
        earned('b@example.com', 3, NOW),
      ],
      NOW,
    );
    const values = async (period: LeaderboardRequest['period']) =>
      Object.fromEntries((await board({ period })).leaderboard.map((e) => [e.userIdentifier, e.value]));
    expect(await values('weekly')).toEqual({ 'a@example.com': 7, 'b@example.com': 3 });
    expect(await values('monthly')).toEqual({ 'a@example.com': 107, 'b@example.com': 3 });
    expect(await values('all_time')).toEqual({ 'a@example.com': 107, 'b@example.com': 33 });
    expect(await values('daily')).toEqual({ 'b@example.com': 3 });
    // Next Monday the weekly board starts empty.
    expect((await board({ period: 'weekly' }, new Date('2026-11-23T00:00:00Z'))).leaderboard).toEqual([]);
    expect((await board({ period: 'all_time' })).periodStart).toBeNull();
  });

  it('filters by platform and counts activity and claims separately', async () => {
    await recordActivities(
      database.db,
      [
        earned('discord_111111111111111111@pts.example', 25, NOW, { platform: 'discord' }),
        earned('discord_111111111111111111@pts.example', 10, NOW, { platform: 'telegram' }),
        earned('a@example.com', 5),
        { ...earned('a@example.com', 0), kind: 'claimed' },
        { ...earned('a@example.com', 300), kind: 'spent' },
      ],
      NOW,
    );
    const discord = await board({ platform: 'discord' });
    expect(discord.leaderboard.map((e) => [e.userIdentifier, e.value])).toEqual([
      ['discord_111111111111111111@pts.example', 25],
    ]);
    const activity = await board({ metric: 'activity' });
    expect(activity.leaderboard.map((e) => [e.userIdentifier, e.value])).toEqual([
      ['a@example.com', 2],
      ['discord_111111111111111111@pts.example', 2],
    ]);
    const claims = await board({ metric: 'claims' });
    expect(claims.leaderboard.map((e) => [e.userIdentifier, e.value])).toEqual([['a@example.com', 1]]);
  });

  it('records a replayed activity (same kind and ref) once', async () => {
    const once = earned('a@example.com', 10);
    expect(await recordActivities(database.db, [once], NOW)).toHaveLength(1);
    expect(await recordActivities(database.db, [once, { ...once }], NOW)).toHaveLength(0);
    expect((await board()).leaderboard).toEqual([expect.objectContaining({ value: 10 })]);
    expect(await database.db.selectFrom('activity_log').select('id').execute()).toHaveLength(1);
  });

  it('keeps brands apart', async () => {
    await recordActivities(
      database.db,
      [earned('a@example.com', 10), { ...earned('z@example.com', 99), brandId: OTHER_BRAND }],
      NOW,
    );
    expect((await board()).leaderboard.map((e) => e.userIdentifier)).toEqual(['a@example.com']);
  });

  it('masks emails on public boards but shows platform identities', async () => {
    await recordActivities(
      database.db,
      [earned('alice@example.com', 10), earned('telegram_42@pts.example', 5, NOW, { platform: 'telegram' })],
      NOW,
    );
    await database.db
      .insertInto('oauth_identities')
      .values({
        id: 990_001n,
        provider: 'telegram',
        subject: '42',
        username: 'tg_fan',
        wallet_address: '0x00000000000000000000000000000000000000aa',
        idp_user_id: 'did:pts:local:identity:1',
      })
      .execute();
    const result = await board({ revealIdentifiers: false });
    expect(result.leaderboard).toEqual([
      { userIdentifier: 'al***@example.com', username: 'al***', value: 10, rank: 1 },
      { userIdentifier: 'telegram_42@pts.example', username: 'tg_fan', value: 5, rank: 2 },
    ]);
  });

  it('concurrent writers add up exactly', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        database.db
          .transaction()
          .execute((trx) => recordActivities(trx, [earned('a@example.com', 1), earned('b@example.com', 2)], NOW)),
      ),
    );
    const result = await board({ period: 'all_time' });
    expect(result.leaderboard.map((e) => [e.userIdentifier, e.value])).toEqual([
      ['b@example.com', 40],
      ['a@example.com', 20],
    ]);
  });
});

describe('activity log', () => {
  it('pages newest first', async () => {
    await recordActivities(
      database.db,
      Array.from({ length: 5 }, (_, i) => earned('a@example.com', i + 1, new Date(NOW.getTime() + i * 1000))),
      NOW,
    );
    const first = await readActivity(database.db, { brandId: BRAND, accountKey: 'a@example.com', limit: 3 });
    expect(first.items.map((item) => item.amount)).toEqual([5, 4, 3]);
    expect(first.nextCursor).not.toBeNull();
    const second = await readActivity(database.db, {
      brandId: BRAND,
      accountKey: 'a@example.com',
      limit: 3,
      before: Number(first.nextCursor),
    });
    expect(second.items.map((item) => item.amount)).toEqual([2, 1]);
    expect(second.nextCursor).toBeNull();
  });
});
