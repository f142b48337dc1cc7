import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

let platform: TestPlatform;
let brand: CreatedBrand;

const signedGet = (path: string, securityKey = brand.securityKey) =>
  platform.get(
    path,
    signRequest({
      securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    domain: 'shop.example.com',
    rules: [{ eventType: 'bench_reward', rewardAmount: 30, cooldownHours: 0, maxClaims: -1 }],
  });
  const earn = (identityKey: string, metadata?: Record<string, unknown>) =>
    platform.signedPost(
      '/pts-api/manual-event',
      {
        brandId: brand.brandId,
        eventType: 'bench_reward',
        userEmail: identityKey,
        domain: 'shop.example.com',
        ...(metadata ? { metadata } : {}),
      },
      brand.securityKey,
    );
  for (const [email, times] of [
    ['alice@example.com', 3],
    ['bob@example.com', 1],
    ['discord_123456789012345678@pts.example', 2],
  ] as const) {
    for (let i = 0; i < times; i++) {
      // Distinct metadata: the same user and type within the duplicate window would be a duplicate.
      platform.clock.advance(61_000);
      const res = await earn(email, { n: i, ...(email.startsWith('discord') ? { platform: 'discord' } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  }
  await waitForMintsSettled(platform);
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('GET /services/leaderboard/:brandId', () => {
  it('ranks confirmed earnings; public answers mask emails', async () => {
    const res = await platform.get(`/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all&limit=10`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      metric: 'pts_earned',
      period: 'all_time',
      total: 3,
      periodStart: null,
    });
    expect(res.body.leaderboard).toEqual([
      // displayName and formattedValue: the seed clients' names for username and value (docs/compatibility.md).
      {
        userIdentifier: 'al***@example.com',
        username: 'al***',
        value: 90,
        rank: 1,
        displayName: 'al***',
        formattedValue: '90 pts',
      },
      {
        userIdentifier: 'discord_123456789012345678@pts.example',
        username: 'discord user 5678',
        value: 60,
        rank: 2,
        displayName: 'discord user 5678',
        formattedValue: '60 pts',
      },
      {
        userIdentifier: 'bo***@example.com',
        username: 'bo***',
        value: 30,
        rank: 3,
        displayName: 'bo***',
        formattedValue: '30 pts',
      },
    ]);
  });

  it('a brand-signed request sees full identifiers and its user rank', async () => {
    const path = `/services/leaderboard/${brand.brandId}?period=all_time&user=bob%40example.com`;
    const res = await signedGet(path);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.leaderboard[0].userIdentifier).toBe('alice@example.com');
    expect(res.body.me).toEqual({
      userIdentifier: 'bob@example.com',
      username: 'bo***',
      value: 30,
      rank: 3,
      displayName: 'bo***',
      formattedValue: '30 pts',
    });
    expect(res.body.userRank).toBe(3);
  });

  it('filters by platform and counts activity', async () => {
    const discord = await platform.get(`/services/leaderboard/${brand.brandId}?period=week&platform=discord`);
    expect(discord.body.leaderboard.map((e: { value: number }) => e.value)).toEqual([60]);
    const activity = await platform.get(`/services/leaderboard/${brand.brandId}?metric=activity&period=weekly`);
    expect(activity.body.leaderboard.map((e: { value: number }) => e.value)).toEqual([3, 2, 1]);
  });

  it.each([
    ['metric=karma', 'metric must be one of'],
    ['period=year', 'period must be one of'],
    ['limit=101', 'limit must be at most 100'],
    ['limit=0', 'limit must be at least 1'],
    ['limit=abc', 'limit'],
  ])('400 for %s', async (query, message) => {
    const res = await platform.get(`/services/leaderboard/${brand.brandId}?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toContain(message);
  });

  it('404 for an unknown brand, 400 for a malformed one', async () => {
    expect((await platform.get('/services/leaderboard/0x000000000000000000000000000000000000dead')).status).toBe(404);
    expect((await platform.get('/services/leaderboard/not-a-brand')).status).toBe(400);
  });
});

describe('GET /services/activity/:brandId/:userIdentifier', () => {
  it('is private: unsigned or wrongly signed requests get 401', async () => {
    const path = `/services/activity/${brand.brandId}/alice%40example.com`;
    expect((await platform.get(path)).status).toBe(401);
    expect((await signedGet(path, 'not-the-key')).status).toBe(401);
  });

  it('lists what the user earned, newest first, in pages', async () => {
    const path = `/services/activity/${brand.brandId}/alice%40example.com?limit=2`;
    const first = await signedGet(path);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.items[0]).toMatchObject({ kind: 'earned', amount: 30, platform: 'web' });
    expect(first.body.items[0].detail.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const second = await signedGet(`${path}&before=${first.body.nextCursor}`);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
  });
});
