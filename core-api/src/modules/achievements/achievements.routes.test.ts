import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { advanceAchievements } from './achievements.service.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
const DAY = 86_400_000;

const signedGet = (path: string) => {
  // Each signature once: the same path signed in the same second would be a replay.
  platform.clock.advance(1000);
  return platform.get(
    path,
    signRequest({
      securityKey: brand.securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );
};
const report = (body: Record<string, unknown>) =>
  platform.signedPost('/services/achievements/progress', { brandId: brand.brandId, ...body }, brand.securityKey);
const achievementsOf = async (user: string) => {
  const res = await signedGet(`/services/achievements/${brand.brandId}/${encodeURIComponent(user)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return new Map<string, { unlocked: boolean; progress: number; fraction: number }>(
    res.body.achievements.map((a: { id: string }) => [a.id, a]),
  );
};

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    domain: 'shop.example.com',
    rules: [
      { eventType: 'big_purchase', rewardAmount: 60, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'good_morning', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
    ],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('achievements', () => {
  it('unlock from confirmed rewards: first reward, 100 tokens, good mornings', async () => {
    for (const [eventType, n] of [
      ['big_purchase', 2],
      ['good_morning', 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        platform.clock.advance(61_000);
        const res = await platform.signedPost(
          '/pts-api/manual-event',
          {
            brandId: brand.brandId,
            eventType,
            userEmail: 'ach@example.com',
            domain: 'shop.example.com',
            metadata: { i },
          },
          brand.securityKey,
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
    }
    await waitForMintsSettled(platform);
    const list = await achievementsOf('ach@example.com');
    expect(list.get('events_claimed_1')).toMatchObject({ unlocked: true });
    expect(list.get('events_claimed_10')).toMatchObject({ unlocked: false, progress: 3, fraction: 0.3 });
    expect(list.get('tokens_earned_100')).toMatchObject({ unlocked: true, progress: 100 });
    expect(list.get('tokens_earned_1000')).toMatchObject({ unlocked: false, progress: 125 });
    expect(list.get('good_morning_count_10')).toMatchObject({ unlocked: false, progress: 1 });
    const unlocks = await platform.deps.db
      .selectFrom('achievement_unlocks')
      .select('achievement_id')
      .where('user_key', '=', 'ach@example.com')
      .orderBy('achievement_id')
      .execute();
    expect(unlocks.map((u) => u.achievement_id)).toEqual(['events_claimed_1', 'tokens_earned_100']);
  });

  it('reported progress unlocks once, even under 20 concurrent reports', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => {
        // A fresh signature each (the same body signed in the same second would be a replay).
        platform.clock.advance(1000);
        return report({ userIdentifier: 'chatty@example.com', type: 'message_count', increment: 5 });
      }),
    );
    expect(results.map((r) => (r.status === 200 ? 200 : JSON.stringify(r.body)))).toEqual(results.map(() => 200));
    const unlockedBy = results.filter((r) => r.body.unlocked.length > 0);
    expect(unlockedBy).toHaveLength(1);
    expect(unlockedBy[0]?.body.unlocked).toEqual([{ id: 'message_count_100', name: 'Chatty', threshold: 100 }]);
    const list = await achievementsOf('chatty@example.com');
    expect(list.get('message_count_100')).toMatchObject({ unlocked: true });
    expect(list.get('message_count_1000')).toMatchObject({ progress: 100 });
  });

  it('levels are high-water marks', async () => {
    expect(
      (await report({ userIdentifier: 'lvl@example.com', type: 'level_reached', value: 6 })).body.unlocked,
    ).toEqual([{ id: 'level_reached_5', name: 'Rising', threshold: 5 }]);
    const lower = await report({ userIdentifier: 'lvl@example.com', type: 'level_reached', value: 2 });
    expect(lower.body).toMatchObject({ value: 6, unlocked: [] });
  });

  it.each([
    [{ userIdentifier: 'x@example.com', type: 'tokens_earned', increment: 1000 }, 'computed by the platform'],
    [{ userIdentifier: 'x@example.com', type: 'message_count' }, 'exactly one of increment or value'],
    [
      { userIdentifier: 'x@example.com', type: 'message_count', increment: 1, value: 3 },
      'exactly one of increment or value',
    ],
    [{ userIdentifier: 'x@example.com', type: 'message_count', increment: -4 }, 'increment'],
  ])('400 for %j', async (body, message) => {
    const res = await report(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
  });

  it('reads and reports need the brand signature', async () => {
    expect((await platform.get(`/services/achievements/${brand.brandId}/ach%40example.com`)).status).toBe(401);
    const unsigned = await platform.post('/services/achievements/progress', {
      brandId: brand.brandId,
      userIdentifier: 'x@example.com',
      type: 'message_count',
      increment: 1,
    });
    expect(unsigned.status).toBe(401);
  });

  it('a brand defines its own achievements (custom types too) through the admin API', async () => {
    const auth = { authorization: `Bearer ${platform.deps.adminToken}` };
    const put = await fetch(`${platform.url}/admin/brands/${brand.brandId}/achievements`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({
        definitions: [
          { id: 'quiz_3', type: 'custom_quiz', threshold: 3, name: 'Quiz whiz', description: 'Answer 3 quizzes' },
          { id: 'msgs_10', type: 'message_count', threshold: 10, name: 'Talker' },
        ],
      }),
    });
    expect(put.status).toBe(200);
    const got = await (
      await fetch(`${platform.url}/admin/brands/${brand.brandId}/achievements`, { headers: auth })
    ).json();
    expect(got).toMatchObject({ defaults: false, definitions: [{ id: 'quiz_3' }, { id: 'msgs_10' }] });
    const res = await report({ userIdentifier: 'quiz@example.com', type: 'custom_quiz', increment: 3 });
    expect(res.body.unlocked).toEqual([{ id: 'quiz_3', name: 'Quiz whiz', threshold: 3 }]);
    // The earlier unlock of a removed definition stays listed.
    const chatty = await achievementsOf('chatty@example.com');
    expect([...chatty.keys()]).toEqual(['quiz_3', 'msgs_10', 'message_count_100']);
    expect(chatty.get('msgs_10')).toMatchObject({ unlocked: false, progress: 10, fraction: 1 });
    const bad = await fetch(`${platform.url}/admin/brands/${brand.brandId}/achievements`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ definitions: [{ id: 'x', type: 'karma', threshold: 1, name: 'X' }] }),
    });
    expect(bad.status).toBe(400);
    // Back to the defaults.
    await fetch(`${platform.url}/admin/brands/${brand.brandId}/achievements`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ definitions: [] }),
    });
  });

  it('announces each unlock once as achievement.unlocked when the brand has a webhook endpoint', async () => {
    await platform.deps.db
      .insertInto('webhook_endpoints')
      .values({
        brand_id: brand.brandId,
        url: 'https://hooks.example.com/pts',
        secret_encrypted: platform.deps.secrets.encrypt('whsec_test'),
        active: true,
      })
      .execute();
    const now = platform.clock.now();
    const update = [{ brandId: brand.brandId, accountKey: 'hook@example.com', type: 'voice_hours', increment: 2n }];
    await platform.deps.db.transaction().execute((trx) => advanceAchievements(trx, update, now));
    await platform.deps.db.transaction().execute((trx) => advanceAchievements(trx, update, now));
    const deliveries = await platform.deps.db
      .selectFrom('webhook_deliveries')
      .select(['type', 'body'])
      .where('type', '=', 'achievement.unlocked')
      .execute();
    const payloads = deliveries.map((d) => d.body);
    expect(payloads.filter((p) => p.includes('hook@example.com') && p.includes('voice_hours_1'))).toHaveLength(1);
  });
});

describe('streak leaderboard', () => {
  it('ranks live streaks; a lapsed streak drops off', async () => {
    const activity = (identityKey: string) =>
      platform.signedPost(
        '/services/streak/record-activity',
        { brandId: brand.brandId, userIdentifier: identityKey, platform: 'discord', streakType: 'daily' },
        brand.securityKey,
      );
    // Three days for a, one for b and c.
    for (let day = 0; day < 3; day++) {
      const res = await activity('streaker-a@example.com');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      if (day === 2) {
        await activity('streaker-b@example.com');
        await activity('streaker-c@example.com');
      }
      platform.clock.advance(DAY);
    }
    platform.clock.advance(-DAY + 3_600_000);
    const board = await signedGet(`/services/leaderboard/${brand.brandId}?metric=streak&user=streaker-c%40example.com`);
    expect(board.status, JSON.stringify(board.body)).toBe(200);
    expect(
      board.body.leaderboard.map((e: { userIdentifier: string; value: number; rank: number }) => [
        e.userIdentifier,
        e.value,
        e.rank,
      ]),
    ).toEqual([
      ['streaker-a@example.com', 3, 1],
      ['streaker-b@example.com', 1, 2],
      ['streaker-c@example.com', 1, 2],
    ]);
    expect(board.body).toMatchObject({ total: 3, metric: 'streak', periodStart: null, me: { rank: 2, value: 1 } });
    // Far past every grace period and freeze: nobody has a live streak.
    platform.clock.advance(30 * DAY);
    const later = await platform.get(`/services/leaderboard/${brand.brandId}?metric=streak`);
    expect(later.body).toMatchObject({ leaderboard: [], total: 0 });
    // The streak achievement followed the longest streak.
    expect((await achievementsOf('streaker-a@example.com')).get('streak_days_7')).toMatchObject({ progress: 3 });
  });
});
