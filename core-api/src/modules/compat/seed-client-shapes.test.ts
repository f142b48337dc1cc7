import { type CreatedBrand, createCoreClient, platformUserEmail, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// The request shapes of the seed system's own MCP server and WordPress demo (issue 25), each sent exactly as
// the client sends it (its field names and values; the base URL changed, the token renamed, the brand
// signature added), checking the fields the client reads (docs/compatibility.md). pts's own client is run
// beside them on the paths both share.

const SERVICE_DOMAIN = 'pts.local';

let platform: TestPlatform;
let brand: CreatedBrand;
let otherBrand: CreatedBrand;

const signedGet = (path: string, securityKey = brand.securityKey) => {
  platform.clock.advance(1_000);
  return platform.get(
    path,
    signRequest({
      securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );
};
/** A fresh signature per call (the clock moves a second). */
const signed = (path: string, body: unknown, securityKey = brand.securityKey) => {
  platform.clock.advance(1_000);
  return platform.signedPost(path, body, securityKey);
};
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const coreClient = () =>
  createCoreClient({
    baseUrl: platform.url,
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    clock: platform.clock,
    retries: 0,
  });

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '10000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '10000',
    PTS_SERVICE_DOMAIN: SERVICE_DOMAIN,
  });
  brand = await platform.createBrand({
    domain: 'seed-clients.example.com',
    rules: [
      { eventType: 'mee6_level_up', rewardAmount: 25, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'quiz_done', rewardAmount: 30, cooldownHours: 0, maxClaims: 2 },
      { eventType: 'daily_visit', rewardAmount: 5, cooldownHours: 24, maxClaims: -1 },
    ],
  });
  otherBrand = await platform.createBrand({ domain: 'other-seed.example.com' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('perk catalogue (WordPress demo)', () => {
  it('category=all lists every category with available as units left; pts’s own answer keeps its boolean', async () => {
    for (const perk of [
      { name: 'Mug', category: 'merch', cost: 40, maxSupply: 5 },
      { name: 'Coffee', category: 'food', cost: 10 },
    ]) {
      const res = await platform.post(
        '/admin/perks',
        { brandId: brand.brandId, description: `A ${perk.name}`, ...perk },
        admin(),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const seed = await platform.get(`/services/perks/${brand.brandId}?category=all`);
    expect(seed.status, JSON.stringify(seed.body)).toBe(200);
    expect(seed.body.success).toBe(true);
    const byName = new Map(seed.body.perks.map((p: { name: string }) => [p.name, p]));
    expect(byName.get('Mug')).toMatchObject({
      id: expect.anything(),
      name: 'Mug',
      description: 'A Mug',
      cost: 40,
      available: 5,
    });
    // Unlimited supply: the seed's own "unlimited" count (spec 2.3).
    expect(byName.get('Coffee')).toMatchObject({ name: 'Coffee', cost: 10, available: 999999 });

    // pts's own clients on the same path: `available` stays the boolean pts documents.
    const own = await platform.get(`/services/perks/${brand.brandId}`);
    expect(own.body.perks.map((p: { available: unknown }) => p.available)).toEqual([true, true]);
    const viaClient = await coreClient().perks({ available: true });
    expect(viaClient.perks.map((p) => [p.name, p.available]).sort()).toEqual([
      ['Coffee', true],
      ['Mug', true],
    ]);

    // A perk switched off has no units left for the demo, and is unavailable for pts.
    const mug = byName.get('Mug') as { id: number };
    const off = await fetch(`${platform.url}/admin/perks/${mug.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...admin() },
      body: JSON.stringify({ active: false }),
    });
    expect(off.status, await off.text()).toBe(200);
    const seedAfter = await platform.get(`/services/perks/${brand.brandId}?category=all`);
    expect(seedAfter.body.perks.find((p: { name: string }) => p.name === 'Mug')).toMatchObject({ available: 0 });
    const ownAfter = await coreClient().perks();
    expect(ownAfter.perks.find((p) => p.name === 'Mug')).toMatchObject({ available: false });
  });
});

describe('leaderboard (MCP get_leaderboard)', () => {
  it('answers rankings and userRank to the client’s query', async () => {
    const member = platformUserEmail('discord', '7001', SERVICE_DOMAIN);
    const earned = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'mee6_level_up',
      userEmail: member,
    });
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    await waitForMintsSettled(platform);
    const res = await platform.get(`/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time&limit=10`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.rankings).toEqual([expect.objectContaining({ rank: 1, value: 25, username: expect.any(String) })]);
    // No user asked for: no rank, but the field the client reads is there.
    expect(res.body).toHaveProperty('userRank', null);
    // pts's own client reads its own fields on the same path.
    const own = await coreClient().leaderboard({ metric: 'pts_earned', period: 'all_time', limit: 10 });
    expect(own.leaderboard[0]).toMatchObject({ rank: 1, value: 25, userIdentifier: member });
  });
});

describe('drops (MCP create_drop and claim_drop)', () => {
  const createBody = () => ({
    brandId: brand.brandId,
    platform: 'discord',
    serverId: '998877',
    eventType: 'reaction_drop',
    reward: 15,
    maxClaims: 3,
    expiresInSeconds: 3600,
    triggerType: 'reaction',
  });

  it('create_drop’s id is accepted by claim_drop as is; the member is named as the bots name it', async () => {
    const created = await signed('/services/drops/create', createBody());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const dropId = created.body.dropId as string;
    expect(dropId).toBe(created.body.drop.dropId);
    expect(created.body).toMatchObject({
      success: true,
      expiresAt: new Date(platform.clock.now().getTime() + 3600_000).toISOString(),
      drop: { amount: 15, totalSupply: 3, perUserLimit: 1, name: 'reaction_drop' },
    });

    const claim = await signed('/services/drops/claim', { dropId, platformUserId: '5550001', platform: 'discord' });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body).toMatchObject({ success: true, reward: 15, amount: 15, remainingClaims: 2, remaining: 2 });
    const event = await platform.deps.db
      .selectFrom('events')
      .select(['user_email', 'event_type', 'reward_amount'])
      .where('id', '=', claim.body.eventId)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ user_email: 'discord_5550001@pts.local', event_type: 'drop_claim' });
    expect(Number(event.reward_amount)).toBe(15);

    // The same member again: the drop's per-user limit holds (paid once).
    const again = await signed('/services/drops/claim', { dropId, platformUserId: '5550001', platform: 'discord' });
    expect(again.status).toBe(400);
    expect(again.body.details.reason).toBe('already_claimed');
  });

  it('is brand-signed: unsigned, wrongly signed or another brand’s key is refused', async () => {
    expect((await platform.post('/services/drops/create', createBody())).status).toBe(401);
    expect((await signed('/services/drops/create', createBody(), otherBrand.securityKey)).status).toBe(401);
    const created = await signed('/services/drops/create', createBody());
    const claimBody = { dropId: created.body.dropId, platformUserId: '5550002', platform: 'discord' };
    expect((await platform.post('/services/drops/claim', claimBody)).status).toBe(401);
    // A drop id names its brand: another brand's signature cannot claim it.
    expect((await signed('/services/drops/claim', claimBody, otherBrand.securityKey)).status).toBe(401);
    const unknown = await signed('/services/drops/claim', { ...claimBody, dropId: 'drop_0000000000000000' });
    expect(unknown.status).toBe(404);
    const badPlatform = await signed('/services/drops/claim', { ...claimBody, platform: 'carrier pigeon' });
    expect(badPlatform.status).toBe(400);
    expect(badPlatform.body.error).toMatch(/platform/);
  });

  it('concurrent claims by one member pay once; the supply holds across members', async () => {
    const created = await signed('/services/drops/create', { ...createBody(), maxClaims: 2 });
    const dropId = created.body.dropId as string;
    const claims = [];
    for (let i = 0; i < 6; i++) {
      platform.clock.advance(1_000);
      const member = i < 4 ? '6660001' : `666000${i}`;
      claims.push(
        platform.signedPost(
          '/services/drops/claim',
          { dropId, platformUserId: member, platform: 'discord' },
          brand.securityKey,
        ),
      );
    }
    const results = await Promise.all(claims);
    const paid = results.filter((r) => r.status === 200);
    expect(paid.length, JSON.stringify(results.map((r) => r.body))).toBe(2);
    const events = await platform.deps.db
      .selectFrom('events')
      .select('user_email')
      .where('event_type', '=', 'drop_claim')
      .where('status', '=', 'accepted')
      .where('user_email', 'like', 'discord_666000%')
      .execute();
    const perMember = new Map<string, number>();
    for (const e of events) perMember.set(e.user_email, (perMember.get(e.user_email) ?? 0) + 1);
    expect(events).toHaveLength(2);
    expect(Math.max(...perMember.values())).toBe(1);
  });
});

describe('third-party bot event (MCP process_third_party_event)', () => {
  it('a MEE6 level-up rewards the brand rule <sourceBot>_<eventType> for the platform member', async () => {
    const body = {
      brandId: brand.brandId,
      platform: 'discord',
      sourceBot: 'mee6',
      eventType: 'level_up',
      targetUserId: '4242',
      level: 5,
    };
    const res = await signed('/services/integrations/process', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      processed: true,
      reward: 25,
      eventTriggered: 'mee6_level_up',
      eventType: 'mee6_level_up',
      message: expect.any(String),
    });
    const event = await platform.deps.db
      .selectFrom('events')
      .select(['user_email', 'metadata'])
      .where('id', '=', res.body.eventId)
      .executeTakeFirstOrThrow();
    expect(event.user_email).toBe('discord_4242@pts.local');
    expect(event.metadata).toMatchObject({ integration: 'mee6', level: 5 });
    expect((await platform.post('/services/integrations/process', body)).status).toBe(401);
    expect((await signed('/services/integrations/process', body, otherBrand.securityKey)).status).toBe(401);
    // The rule's limits still judge it: the same level-up inside the duplicate window is refused.
    const repeat = await signed('/services/integrations/process', body);
    expect(repeat.status).toBe(409);
  });
});

describe('achievement progress (MCP update_achievement_progress)', () => {
  it('increment: true adds newValue; the answer carries currentProgress', async () => {
    const user = platformUserEmail('discord', '8181', SERVICE_DOMAIN);
    const body = {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'discord',
      achievementType: 'message_count',
      newValue: 4,
      increment: true,
    };
    const first = await signed('/services/achievements/update-progress', body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, achievementType: 'message_count', currentProgress: 4 });
    const second = await signed('/services/achievements/update-progress', body);
    expect(second.body.currentProgress).toBe(8);
    // increment: false sets the value (a high-water mark, as for levels).
    const level = await signed('/services/achievements/update-progress', {
      ...body,
      achievementType: 'level_reached',
      newValue: 7,
      increment: false,
    });
    expect(level.status, JSON.stringify(level.body)).toBe(200);
    expect(level.body).toMatchObject({ achievementType: 'level_reached', currentProgress: 7 });
    expect((await platform.post('/services/achievements/update-progress', body)).status).toBe(401);
    const wrongKey = await signed('/services/achievements/update-progress', body, otherBrand.securityKey);
    expect(wrongKey.status).toBe(401);
  });
});

describe('event eligibility (MCP check_eligibility)', () => {
  it('answers the event path’s own verdict: claims, max claims, cooldown', async () => {
    const user = 'quiz.taker@example.com';
    const check = (eventType: string) =>
      signed('/pts-api/check-eligibility', { brandId: brand.brandId, eventType, userEmail: user });
    const before = await check('quiz_done');
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body).toMatchObject({ eligible: true, claimCount: 0, maxClaims: 2, rewardAmount: 30 });
    for (let i = 0; i < 2; i++) {
      platform.clock.advance(120_000); // past the duplicate window
      const res = await signed('/pts-api/manual-event', {
        brandId: brand.brandId,
        eventType: 'quiz_done',
        userEmail: user,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    platform.clock.advance(120_000);
    const after = await check('quiz_done');
    expect(after.body).toMatchObject({ eligible: false, claimCount: 2, maxClaims: 2, reason: 'max_claims_reached' });
    // The event path agrees.
    const refused = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'quiz_done',
      userEmail: user,
    });
    expect(refused.body.code).toBe('MAX_CLAIMS_REACHED');

    const visit = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'daily_visit',
      userEmail: user,
    });
    expect(visit.status).toBe(200);
    platform.clock.advance(3600_000);
    const cooling = await check('daily_visit');
    expect(cooling.body).toMatchObject({
      eligible: false,
      claimCount: 1,
      maxClaims: -1,
      rewardAmount: 5,
      reason: 'cooldown_not_expired',
      cooldownEndsAt: expect.any(String),
    });
    expect(Date.parse(cooling.body.cooldownEndsAt)).toBeGreaterThan(platform.clock.now().getTime());

    const unknown = await check('nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('UNKNOWN_EVENT_TYPE');
    const unsigned = await platform.post('/pts-api/check-eligibility', {
      brandId: brand.brandId,
      eventType: 'quiz_done',
      userEmail: user,
    });
    expect(unsigned.status).toBe(401);
    const wrongKey = await signed(
      '/pts-api/check-eligibility',
      { brandId: brand.brandId, eventType: 'quiz_done', userEmail: user },
      otherBrand.securityKey,
    );
    expect(wrongKey.status).toBe(401);
  });
});

describe('user stats (MCP get_user_stats)', () => {
  it('balance, lifetime, streak and rank from the balance, streak and leaderboard services', async () => {
    const user = platformUserEmail('discord', '7002', SERVICE_DOMAIN);
    const earned = await signed('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'mee6_level_up',
      userEmail: user,
    });
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    await waitForMintsSettled(platform);
    const checkin = await signed('/services/streak/record-activity', {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'discord',
      streakType: 'daily',
    });
    expect(checkin.status, JSON.stringify(checkin.body)).toBe(200);
    const res = await signedGet(`/services/user-stats/${brand.brandId}/${encodeURIComponent(user)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const balance = await signedGet(`/services/balance/${brand.brandId}/${encodeURIComponent(user)}`);
    const board = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time&user=${encodeURIComponent(user)}`,
    );
    expect(res.body).toMatchObject({
      balance: balance.body.balance,
      lifetime: { earned: 25, spent: 0, claims: 0 },
      streak: { current: 1, longest: 1 },
      rank: board.body.me.rank,
    });
    expect(res.body.rank).toEqual(expect.any(Number));
    expect(res.body.balance).toBe(25);
    expect((await platform.get(`/services/user-stats/${brand.brandId}/${encodeURIComponent(user)}`)).status).toBe(401);
    const wrongKey = await signedGet(
      `/services/user-stats/${brand.brandId}/${encodeURIComponent(user)}`,
      otherBrand.securityKey,
    );
    expect(wrongKey.status).toBe(401);
  });
});

describe('client-reported stats (MCP update_leaderboard_stats)', () => {
  it('records the display name only: never mints, never moves a board', async () => {
    const user = platformUserEmail('discord', '7001', SERVICE_DOMAIN);
    const boardBefore = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time&user=${encodeURIComponent(user)}`,
    );
    const mintsBefore = await platform.deps.db.selectFrom('reward_mints').select('id').execute();
    const body = {
      brandId: brand.brandId,
      userIdentifier: user,
      platform: 'discord',
      ptsAmount: 500,
      claimType: 'daily_checkin',
      displayName: 'Ada L.',
    };
    const res = await signed('/services/leaderboard/update-stats', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ success: true, updated: true, counted: false });
    expect(res.body.message).toMatch(/manual-event/);
    const boardAfter = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time&user=${encodeURIComponent(user)}`,
    );
    expect(boardAfter.body.me.value).toBe(boardBefore.body.me.value);
    expect(boardAfter.body.me.username).toBe('Ada L.');
    expect(await platform.deps.db.selectFrom('reward_mints').select('id').execute()).toHaveLength(mintsBefore.length);
    // Nothing new to record: answered, not updated.
    const same = await signed('/services/leaderboard/update-stats', { ...body, displayName: undefined });
    expect(same.body).toMatchObject({ success: true, updated: false, counted: false });
    expect((await platform.post('/services/leaderboard/update-stats', body)).status).toBe(401);
    expect((await signed('/services/leaderboard/update-stats', body, otherBrand.securityKey)).status).toBe(401);
  });
});
