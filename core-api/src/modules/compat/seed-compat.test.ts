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

describe('perks', () => {
  it('category=all lists every category', async () => {
    for (const [name, category] of [
      ['Mug', 'merch'],
      ['Coffee', 'food'],
    ] as const) {
      const res = await platform.post('/admin/perks', { brandId: brand.brandId, name, cost: 0, category }, admin());
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const all = await platform.get(`/services/perks/${brand.brandId}?category=all`);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.perks.map((p: { name: string }) => p.name).sort()).toEqual(['Coffee', 'Mug']);
    const food = await platform.get(`/services/perks/${brand.brandId}?category=food`);
    expect(food.body.perks.map((p: { name: string }) => p.name)).toEqual(['Coffee']);
  });

  it('check-eligibility takes the seed body {brandId, perkId (uuid), userIdentifier, platform}, signed', async () => {
    const created = await platform.post('/admin/perks', { brandId: brand.brandId, name: 'Gated', cost: 0 }, admin());
    const perk = created.body.perk as { perkId: number; uuid: string };
    const user = 'telegram_5001@pts.local'; // earned above, so it has a wallet
    const wallet = (
      await platform.deps.db
        .selectFrom('users')
        .select('wallet_address')
        .where('email', '=', user)
        .executeTakeFirstOrThrow()
    ).wallet_address;
    const seedBody = { brandId: brand.brandId, perkId: perk.uuid, userIdentifier: user, platform: 'telegram' };
    for (const path of ['/services/perks/check-eligibility', '/pts-api/check-eligibility']) {
      const res = await signed(path, seedBody);
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toMatchObject({ success: true, perkId: perk.perkId, userAddress: wallet, eligible: true });
      // Naming a user by identifier needs the brand's signature.
      const unsigned = await platform.post(path, seedBody);
      expect(unsigned.status).toBe(401);
    }
    // pts's own body stays public, also at the seed path.
    const own = await platform.post('/pts-api/check-eligibility', {
      brandId: brand.brandId,
      perkId: perk.perkId,
      userAddress: wallet,
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const noWallet = await signed('/services/perks/check-eligibility', {
      ...seedBody,
      userIdentifier: 'new@example.com',
    });
    expect(noWallet.status).toBe(400);
    expect(noWallet.body.code).toBe('NO_WALLET');
    const otherPerk = await signed('/services/perks/check-eligibility', {
      ...seedBody,
      perkId: '00000000-0000-4000-8000-000000000000',
    });
    expect(otherPerk.status).toBe(404);
  });
});

describe('achievements', () => {
  it('entries carry achievementType, currentProgress, isUnlocked; update-progress is the progress call', async () => {
    const user = 'discord_8080@pts.local';
    const progress = await signed('/services/achievements/update-progress', {
      brandId: brand.brandId,
      userIdentifier: user,
      achievementType: 'message_count',
      progress: 3,
    });
    expect(progress.status, JSON.stringify(progress.body)).toBe(200);
    expect(progress.body).toMatchObject({
      success: true,
      type: 'message_count',
      value: 3,
      achievementType: 'message_count',
      currentProgress: 3,
    });
    const unsigned = await platform.post('/services/achievements/update-progress', {
      brandId: brand.brandId,
      userIdentifier: user,
      achievementType: 'message_count',
      progress: 3,
    });
    expect(unsigned.status).toBe(401);
    const list = await signedGet(`/services/achievements/${brand.brandId}/${user}`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const messages = list.body.achievements.find((a: { type: string }) => a.type === 'message_count');
    expect(messages).toMatchObject({
      achievementType: 'message_count',
      currentProgress: 3,
      progress: 3,
      isUnlocked: messages.unlocked,
    });
  });
});

describe('endpoints the seed clients call', () => {
  it('user-balance, GET and POST, brand-signed', async () => {
    await waitForMintsSettled(platform);
    const user = 'telegram_5001@pts.local';
    const path = `/pts-api/user-balance?brandId=${brand.brandId}&userEmail=${encodeURIComponent(user)}`;
    const got = await signedGet(path);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body).toMatchObject({ success: true, userEmail: user, balance: 20, pending: 0 });
    const posted = await signed('/pts-api/user-balance', { brandId: brand.brandId, userEmail: user });
    expect(posted.body).toMatchObject({ balance: 20, walletAddress: got.body.walletAddress });
    expect((await platform.get(path)).status).toBe(401);
    const bad = await signed('/pts-api/user-balance', { brandId: brand.brandId });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/userEmail/);
  });

  it('activity/log counts on the activity board once per activityId; reserved kinds refused', async () => {
    const user = 'discord_9090@pts.local';
    const body = {
      brandId: brand.brandId,
      userIdentifier: user,
      activityType: 'message_sent',
      platform: 'discord',
      activityId: 'msg-1',
      metadata: { displayName: 'Chatty' },
    };
    const first = await signed('/services/activity/log', body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, logged: true, activityType: 'message_sent' });
    expect((await signed('/services/activity/log', body)).body.logged).toBe(false);
    const board = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=activity&period=all&user=${encodeURIComponent(user)}`,
    );
    expect(board.body.me).toMatchObject({ value: 1, username: 'Chatty', formattedValue: '1 activity' });
    const reserved = await signed('/services/activity/log', { ...body, activityType: 'earned', activityId: 'x' });
    expect(reserved.status).toBe(400);
    expect((await platform.post('/services/activity/log', body)).status).toBe(401);
  });

  it('reward/calculate: the rule amount × the daily streak multiplier, by eventType or eventId', async () => {
    const user = 'discord_424242@pts.local'; // a 7-day streak from the milestone test
    await platform.setRule(brand.brandId, {
      eventType: 'telegram_gm',
      rewardAmount: 20,
      cooldownHours: 0,
      maxClaims: -1,
    });
    const gm = (await eventConfig()).find((e) => e.eventType === 'telegram_gm')!;
    const status = await signedGet(`/services/streak/status/${brand.brandId}/${user}`);
    const res = await signed('/services/reward/calculate', {
      brandId: brand.brandId,
      userIdentifier: user,
      eventId: gm.eventId,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      eventType: 'telegram_gm',
      baseReward: 20,
      currentStreak: status.body.currentStreak,
      multiplier: status.body.multiplier,
      reward: Math.floor(20 * status.body.multiplier),
    });
    expect(status.body.multiplier).toBeGreaterThan(1);
    const unknown = await signed('/services/reward/calculate', {
      brandId: brand.brandId,
      userIdentifier: user,
      eventType: 'nope',
    });
    expect(unknown.body.code).toBe('UNKNOWN_EVENT_TYPE');
  });

  it('user-stats: earned, redeemed, streaks, achievements, rank', async () => {
    const user = 'discord_424242@pts.local';
    await waitForMintsSettled(platform);
    const res = await signedGet(`/services/user-stats/${brand.brandId}/${user}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      earned: expect.any(Number),
      redeemed: 0,
      streaks: [{ streakType: 'daily', currentStreak: expect.any(Number), longestStreak: 7 }],
      achievements: { unlocked: expect.any(Number), total: expect.any(Number) },
      rank: expect.any(Number),
    });
    expect(res.body.earned).toBeGreaterThanOrEqual(170); // 7 check-ins of ≥ 10 and the 100 bonus
    expect((await platform.get(`/services/user-stats/${brand.brandId}/${user}`)).status).toBe(401);
  });

  it('integrations/process records the brand event the third-party event maps to', async () => {
    const body = {
      brandId: brand.brandId,
      integration: 'shopify',
      event: 'order_created',
      userEmail: 'buyer@example.com',
      metadata: { orderId: 'o-1' },
    };
    const res = await signed('/services/integrations/process', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      eventType: 'shopify_order_created',
      rewardAmount: 40,
      integration: 'shopify',
      integrationEvent: 'order_created',
    });
    const unmapped = await signed('/services/integrations/process', { ...body, event: 'refund' });
    expect(unmapped.status).toBe(400);
    expect(unmapped.body.details.tried).toEqual(['shopify_refund', 'refund']);
    expect((await platform.post('/services/integrations/process', body)).status).toBe(401);
  });

  it("integrations/process passes an order's total as the event's value: a rate rule pays by it (issue 35 §1)", async () => {
    await platform.setRule(brand.brandId, {
      eventType: 'woocommerce_order_completed',
      rate: { pts: 5, per: '1.00', currency: 'USD' },
      cooldownHours: 0,
      maxClaims: -1,
    });
    const body = {
      brandId: brand.brandId,
      integration: 'woocommerce',
      event: 'order_completed',
      userEmail: 'shopper@example.com',
      value: { amount: '59.90', currency: 'USD' },
    };
    const res = await signed('/services/integrations/process', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      eventType: 'woocommerce_order_completed',
      rewardAmount: 299,
      value: { amount: '59.90', currency: 'USD' },
    });
    const stored = await platform.deps.db
      .selectFrom('events')
      .select(['value_minor', 'value_currency', 'reward_amount'])
      .where('id', '=', res.body.eventId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ value_minor: 5990n, value_currency: 'USD', reward_amount: 299n });
    const euros = await signed('/services/integrations/process', {
      ...body,
      value: { amount: '10.00', currency: 'EUR' },
    });
    expect(euros.status).toBe(400);
    expect(euros.body.details).toMatchObject({ reason: 'currency_mismatch' });
  });
});
