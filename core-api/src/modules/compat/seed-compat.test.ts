import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// Each request is sent as the seed system's clients send it (their field names, paths and values), plus the
// brand signature pts requires: docs/compatibility.md.

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
const signed = (path: string, body: unknown) => {
  platform.clock.advance(1_000); // a fresh signature per call
  return platform.signedPost(path, body, brand.securityKey);
};
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

async function eventConfig() {
  const res = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
  return res.body.events as { eventId: string; eventType: string; isCustom: boolean }[];
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    domain: 'seed.example.com',
    rules: [
      { eventType: 'telegram_gm', rewardAmount: 20, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'custom_quiz', rewardAmount: 15, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'streak_milestone', rewardAmount: 0, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'shopify_order_created', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 },
    ],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('custom event ids (spec 2.3)', () => {
  it('gives every custom rule a custom_ id, kept across updates', async () => {
    const events = await eventConfig();
    const byType = new Map(events.map((e) => [e.eventType, e]));
    expect(byType.get('telegram_gm')).toMatchObject({
      eventId: expect.stringMatching(/^custom_[0-9a-f]{16}$/),
      isCustom: true,
    });
    expect(byType.get('custom_quiz')).toMatchObject({ eventId: 'custom_quiz', isCustom: true });
    await platform.setRule(brand.brandId, {
      eventType: 'telegram_gm',
      rewardAmount: 20,
      cooldownHours: 0,
      maxClaims: -1,
    });
    // An update keeps the id seed clients already hold.
    expect((await eventConfig()).find((e) => e.eventType === 'telegram_gm')?.eventId).toBe(
      byType.get('telegram_gm')?.eventId,
    );
  });

  it('manual-event takes a rule eventId where eventType is expected (the seed Telegram bot)', async () => {
    const gm = (await eventConfig()).find((e) => e.eventType === 'telegram_gm')!;
    const asField = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventId: gm.eventId,
      userEmail: 'telegram_5001@pts.local',
      metadata: { platform: 'telegram' },
    });
    expect(asField.status, JSON.stringify(asField.body)).toBe(200);
    expect(asField.body).toMatchObject({ success: true, eventType: 'telegram_gm', rewardAmount: 20 });
    const asValue = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: gm.eventId,
      userEmail: 'telegram_5002@pts.local',
    });
    expect(asValue.status, JSON.stringify(asValue.body)).toBe(200);
    expect(asValue.body.eventType).toBe('telegram_gm');
    const bulk = await signed('/pts-api/bulk-events', {
      events: [{ brandId: brand.brandId, eventId: gm.eventId, userEmail: 'telegram_5003@pts.local' }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(JSON.stringify(bulk.body)).toContain('telegram_gm');
    const unknown = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventId: 'custom_0000000000000000',
      userEmail: 'telegram_5004@pts.local',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('UNKNOWN_EVENT_TYPE');
  });
});

describe('streaks', () => {
  it('record-activity: other streak types are their own streak; seed fields at the top level', async () => {
    const user = 'x_777@pts.local';
    const engagement = await signed('/services/streak/record-activity', {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'twitter',
      streakType: 'engagement',
    });
    expect(engagement.status, JSON.stringify(engagement.body)).toBe(200);
    expect(engagement.body).toMatchObject({
      streakType: 'engagement',
      isNew: true,
      isNewActivity: true,
      currentStreak: 1,
      multiplier: 1,
      nextMilestone: { days: 7, daysRemaining: 6 },
      unclaimedMilestones: [],
      reward: 0,
      streak: { currentStreak: 1 },
    });
    // The daily streak is untouched by the engagement one.
    const daily = await signedGet(`/services/streak/status/${brand.brandId}/${user}`);
    expect(daily.body).toMatchObject({ currentStreak: 0, daysToNextMilestone: 7 });
    const status = await signedGet(`/services/streak/status/${brand.brandId}/${user}?streakType=engagement`);
    expect(status.body).toMatchObject({
      currentStreak: 1,
      daysToNextMilestone: 6,
      nextMilestone: { daysRemaining: 6 },
    });
    const again = await signed('/services/streak/record-activity', {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'twitter',
      streakType: 'engagement',
    });
    expect(again.body).toMatchObject({ isNew: false, isNewActivity: false, currentStreak: 1 });
    const bad = await signed('/services/streak/record-activity', {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'x',
      streakType: 'Bad Type!',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/streakType/);
    const unsigned = await platform.post('/services/streak/record-activity', {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'x',
      streakType: 'engagement',
    });
    expect(unsigned.status).toBe(401);
  });

  it('claim-milestone also answers bonus', async () => {
    const user = 'discord_424242@pts.local';
    for (let day = 0; day < 7; day++) {
      platform.clock.advance(24 * 3600 * 1000);
      const res = await signed('/services/checkin', {
        brandId: brand.brandId,
        userIdentifier: user,
        platform: 'discord',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const claim = await signed('/services/streak/claim-milestone', {
      brandId: brand.brandId,
      userIdentifier: user,
      milestoneDays: 7,
    });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body).toMatchObject({ bonusPts: 100, bonus: 100, milestone: 7 });
    await waitForMintsSettled(platform);
  });
});

describe('leaderboards', () => {
  it('entries carry displayName and formattedValue; rankings, userRank and the seed platform values', async () => {
    const big = 'telegram_9001@pts.local';
    await platform.setRule(brand.brandId, {
      eventType: 'custom_quiz',
      rewardAmount: 1250,
      cooldownHours: 0,
      maxClaims: -1,
    });
    const res = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'custom_quiz',
      userEmail: big,
      metadata: { platform: 'telegram', displayName: 'Big Spender' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await waitForMintsSettled(platform);
    const board = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all&platform=all&userId=${encodeURIComponent(big)}`,
    );
    expect(board.status, JSON.stringify(board.body)).toBe(200);
    const top = board.body.leaderboard[0];
    expect(top).toMatchObject({
      username: 'Big Spender',
      displayName: 'Big Spender',
      formattedValue: expect.stringMatching(/^[\d,]+ pts$/),
    });
    expect(board.body.rankings).toEqual(board.body.leaderboard);
    expect(board.body.userRank).toBe(1);
    expect(board.body.me).toMatchObject({ userIdentifier: big, rank: 1 });
    expect(board.body.platform).toBeNull();
    const telegram = await platform.get(`/services/leaderboard/${brand.brandId}?period=all&platform=telegram`);
    expect(telegram.body.leaderboard.map((e: { userIdentifier: string }) => e.userIdentifier)).toContain(big);
    const twitter = await platform.get(`/services/leaderboard/${brand.brandId}?period=all&platform=twitter`);
    expect(twitter.body.platform).toBe('x');
    const streaks = await platform.get(`/services/leaderboard/${brand.brandId}?metric=streak`);
    expect(streaks.body.leaderboard[0].formattedValue).toMatch(/^\d+ days?$/);
  });
});
