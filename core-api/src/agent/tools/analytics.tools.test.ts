import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { readBrandAnalytics } from '../../modules/analytics/brand-analytics.ts';
import { agentTools } from '../agent-tools.ts';
import { analyticsTools } from './analytics.tools.ts';
import { createPerkViaAdmin, toolCaller, UNKNOWN_BRAND } from './tool-test-support.ts';

// Real events (brand-signed manual events and check-ins at controlled manual-clock times), real perks and a
// real redemption on anvil. Every expected number is computed by hand from the timeline below.
//
// T0 = noon UTC today; the assertions run at now = T0 + 1 min. 30d window = [now − 30d, now).
//  Alpha (earn 100, purchase 250, daily_checkin 10)        Beta (earn 50, visit 10)      Empty (nothing)
//  −45d earn bob    −40d earn alice   −35d earn erin       (previous 30-day window at Alpha: 3 events, 3 members)
//  −20d earn alice
//  −6d                                                     visit dave
//  −5d earn carol                                          −4d earn carol
//  −3d earn dave
//  −2d check-in alice (10)
//  −1d purchase alice (250), check-in alice (10, streak 2) −1d earn alice (after both)
//   T0 alice redeems Gold (200; max supply 10)

const DAY = 86_400_000;
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
const at = (days: number, minutes = 0) => new Date(T0.getTime() + days * DAY + minutes * 60_000);
let platform: TestPlatform;
let alpha: CreatedBrand;
let beta: CreatedBrand;
let empty: CreatedBrand;
const perks: Record<string, string> = {};
const { call, invoke } = toolCaller(
  () => platform,
  () => analyticsTools(platform.services.agent.toolDeps),
);

async function earn(brand: CreatedBrand, when: Date, eventType: string, identityKey: string) {
  platform.clock.set(when);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: identityKey, domain: `${brand.name}.example.com`, metadata: {} },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function checkin(when: Date, identityKey: string) {
  platform.clock.set(when);
  const res = await platform.signedPost(
    '/services/checkin',
    { brandId: alpha.brandId, userIdentifier: identityKey, platform: 'web' },
    alpha.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    // Formulas on data the tests change and a clock they move: every answer computed on its call (the
    // answer store is tested in answer-cache.test.ts and agent-tools.http.test.ts).
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
  });
  platform.clock.set(at(-60));
  alpha = await platform.createBrand({
    name: 'alpha',
    domain: 'alpha.example.com',
    rules: [
      { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'purchase', rewardAmount: 250, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  beta = await platform.createBrand({
    name: 'beta',
    domain: 'beta.example.com',
    rules: [
      // The spec's other spelling of unlimited, stored as given: the agent answers -1 all the same.
      { eventType: 'earn', rewardAmount: 50, cooldownHours: 0, maxClaims: 999999 },
      { eventType: 'visit', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  empty = await platform.createBrand({ name: 'empty', domain: 'empty.example.com' });
  const gold = await createPerkViaAdmin(platform, alpha.brandId, { name: 'Gold', cost: 200, maxSupply: 10 });
  perks.Gold = String(gold.perkId);
  perks.Sticker = String((await createPerkViaAdmin(platform, alpha.brandId, { name: 'Sticker', cost: 50 })).perkId);

  await earn(alpha, at(-45), 'earn', 'bob@example.com');
  await earn(alpha, at(-40), 'earn', 'alice@example.com');
  await earn(alpha, at(-35), 'earn', 'erin@example.com');
  await earn(alpha, at(-20), 'earn', 'alice@example.com');
  await earn(beta, at(-6), 'visit', 'dave@example.com');
  await earn(alpha, at(-5), 'earn', 'carol@example.com');
  await earn(beta, at(-4), 'earn', 'carol@example.com');
  await earn(alpha, at(-3), 'earn', 'dave@example.com');
  await checkin(at(-2), 'alice@example.com');
  await earn(alpha, at(-1), 'purchase', 'alice@example.com');
  await checkin(at(-1, 1), 'alice@example.com');
  await earn(beta, at(-1, 2), 'earn', 'alice@example.com');
  await waitForMintsSettled(platform);
  platform.clock.set(T0);
  const res = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: alpha.brandId, perkId: gold.uuid, userIdentifier: 'alice@example.com', platform: 'web' },
    alpha.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  platform.clock.set(at(0, 1));
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

/** One entry of a trending list, as the assertions read it. */
type TrendItem = { id: string; current: number; previous: number; momentum: number; growthPercent: number | null };

const ALPHA_30D = {
  // −20d alice, −5d carol, −3d dave, two check-ins and the purchase of alice: 6 events, 3 members.
  acceptedEvents: 6,
  rejectedEvents: 0,
  members: 3,
  newMembers: 2, // carol, dave (alice's first Alpha event was −40d)
  ptsIssued: '570', // 3 × 100 + 250 + 2 × 10
  redemptions: 1,
  redeemers: 1,
  ptsRedeemed: '200',
  eventsPerMember: 2,
  redemptionRatePercent: 33.3,
};

describe('get_network_analytics', () => {
  it('30d: both brands, growth against the 30 days before (hand-computed)', async () => {
    const r = await call('get_network_analytics', { query: {} });
    // Alpha 6 + Beta 3 events; members alice, carol, dave; 570 + 10 + 50 + 50 pts.
    expect(r.current).toEqual({
      acceptedEvents: 9,
      rejectedEvents: 0,
      members: 3,
      newMembers: 2,
      ptsIssued: '680',
      redemptions: 1,
      redeemers: 1,
      ptsRedeemed: '200',
      eventsPerMember: 3,
      redemptionRatePercent: 33.3,
    });
    expect(r.previous).toMatchObject({
      acceptedEvents: 3,
      members: 3,
      newMembers: 3,
      ptsIssued: '300',
      redemptions: 0,
    });
    expect(r.growth).toEqual({ acceptedEvents: 200, members: 0, ptsIssued: 126.7, redemptions: null });
    expect(r.activeBrands).toBe(2);
    // earn: Alpha 3 + Beta 2 = 5 of 9 → 55.6 %.
    expect(r.topEventTypes[0]).toEqual({
      eventType: 'earn',
      accepted: 5,
      rejected: 0,
      members: 3,
      ptsIssued: '400',
      sharePercent: 55.6,
    });
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 10 });
  });

  it('a period with no data answers zeros, nulls and a note (no NaN)', async () => {
    platform.clock.set(at(400));
    try {
      const r = await call('get_network_analytics', { query: { period: '7d' } });
      expect(r.current).toMatchObject({
        acceptedEvents: 0,
        members: 0,
        eventsPerMember: 0,
        redemptionRatePercent: null,
      });
      expect(r.growth).toEqual({ acceptedEvents: null, members: null, ptsIssued: null, redemptions: null });
      expect(r.basis.sampleSize).toBe(0);
      expect(r.basis.note).toMatch(/No accepted event/);
      expect(JSON.stringify(r)).not.toMatch(/NaN/);
    } finally {
      platform.clock.set(at(0, 1));
    }
  });

  it('period 1d or 365d → 400 naming period', async () => {
    for (const period of ['1d', '365d', '']) {
      await expect(invoke('get_network_analytics', { query: { period } })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    }
  });
});

describe('get_brand_analytics', () => {
  it('Alpha over 30 days (hand-computed), streak of alice', async () => {
    const r = await call('get_brand_analytics', { params: { brandId: alpha.brandId }, query: { period: '30d' } });
    expect(r.current).toEqual(ALPHA_30D);
    expect(r.previous).toMatchObject({ acceptedEvents: 3, members: 3, ptsIssued: '300' });
    // events 6 vs 3 → +100 %; members 3 vs 3 → 0; pts 570 vs 300 → +90 %.
    expect(r.growth).toEqual({ acceptedEvents: 100, members: 0, ptsIssued: 90, redemptions: null });
    expect(r.streaks).toEqual({ members: 1, longestCurrent: 2 });
    expect(r.topEventTypes.map((t: { eventType: string; accepted: number }) => [t.eventType, t.accepted])).toEqual([
      ['earn', 3],
      ['daily_checkin', 2],
      ['purchase', 1],
    ]);
  });

  it('7d: nothing the week before → growth null', async () => {
    const r = await call('get_brand_analytics', { params: { brandId: alpha.brandId }, query: { period: '7d' } });
    expect(r.current).toMatchObject({ acceptedEvents: 5, members: 3, newMembers: 2 });
    expect(r.growth.acceptedEvents).toBeNull();
  });

  it('a brand without activity answers zeros with sampleSize 0; unknown brand 404', async () => {
    const r = await call('get_brand_analytics', { params: { brandId: empty.brandId }, query: {} });
    expect(r.current).toMatchObject({ acceptedEvents: 0, members: 0, eventsPerMember: 0, redemptionRatePercent: null });
    expect(r.basis).toMatchObject({ sampleSize: 0 });
    expect(r.basis.note).toBeTruthy();
    await expect(
      invoke('get_brand_analytics', { params: { brandId: UNKNOWN_BRAND }, query: {} }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(invoke('get_brand_analytics', { params: { brandId: 'nope' }, query: {} })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('get_brand_event_analytics', () => {
  it('per rule: accepted, members, pts, share, previous and growth', async () => {
    const r = await call('get_brand_event_analytics', { params: { brandId: alpha.brandId }, query: {} });
    const byType = Object.fromEntries(r.eventTypes.map((t: { eventType: string }) => [t.eventType, t]));
    expect(byType.earn).toMatchObject({
      accepted: 3,
      members: 3,
      ptsIssued: '300',
      sharePercent: 50,
      acceptancePercent: 100,
      previousAccepted: 3,
      growthPercent: 0,
      rule: { rewardAmount: '100', cooldownHours: 0, active: true },
    });
    expect(byType.daily_checkin).toMatchObject({ accepted: 2, members: 1, ptsIssued: '20', sharePercent: 33.3 });
    expect(byType.purchase).toMatchObject({ accepted: 1, ptsIssued: '250', sharePercent: 16.7, growthPercent: null });
    expect(r.basis.sampleSize).toBe(6);
  });

  it('a brand with rules but no events lists every rule at 0', async () => {
    platform.clock.set(at(400));
    try {
      const r = await call('get_brand_event_analytics', { params: { brandId: beta.brandId }, query: {} });
      expect(r.eventTypes.map((t: { eventType: string; accepted: number }) => [t.eventType, t.accepted])).toEqual([
        ['earn', 0],
        ['visit', 0],
      ]);
      expect(r.eventTypes[0]).toMatchObject({ sharePercent: null, acceptancePercent: null });
      expect(r.basis.sampleSize).toBe(0);
    } finally {
      platform.clock.set(at(0, 1));
    }
  });
});

describe('get_brand_perk_analytics', () => {
  it('Gold sold 1 of 10; Sticker never redeemed; 1 of 5 members redeemed', async () => {
    const r = await call('get_brand_perk_analytics', { params: { brandId: alpha.brandId } });
    expect(r.totals).toEqual({
      perks: 2,
      activePerks: 2,
      redemptions: 1,
      ptsRedeemed: '200',
      redeemers: 1,
      members: 5, // bob, alice, erin, carol, dave
      redeemerPercent: 20,
    });
    expect(r.perks[0]).toMatchObject({
      perkId: perks.Gold,
      cost: '200',
      redemptions: 1,
      redemptions7d: 1,
      redemptions30d: 1,
      ptsRedeemed: '200',
      redeemers: 1,
      failed: 0,
      supply: { max: '10', remaining: '9' },
      sellThroughPercent: 10,
    });
    expect(r.perks[1]).toMatchObject({ perkId: perks.Sticker, redemptions: 0, sellThroughPercent: null });
    expect(r.basis).toMatchObject({ period: 'all_time', from: null, sampleSize: 1 });
  });

  it('a brand without perks: empty list and a note', async () => {
    const r = await call('get_brand_perk_analytics', { params: { brandId: empty.brandId } });
    expect(r.perks).toEqual([]);
    expect(r.totals).toMatchObject({ perks: 0, members: 0, redeemerPercent: null });
    expect(r.basis.note).toBe('The brand has no perk');
  });
});

describe('get_brand_health', () => {
  it('Alpha: 10 + 6.7 + 10 + 20 + 20 = 66.7 → 67, D (hand-computed)', async () => {
    const r = await call('get_brand_health', { params: { brandId: alpha.brandId } });
    // members 3 (alice, carol, dave), before 3 (bob, alice, erin), retained alice; 6 events; 1 redeemer;
    // alice on a 2-day streak; 3 active rules; Gold and Sticker available.
    expect(r.inputs).toEqual({
      members: 3,
      previousMembers: 3,
      retainedMembers: 1,
      events: 6,
      redeemers: 1,
      streakMembers: 1,
      activeRules: 3,
      availablePerks: 2,
    });
    // engagement 20 × (2 ÷ 4) = 10; retention 20 × 1/3 = 6.7; growth flat = 10;
    // redemption 20 × min(1, 0.333 ÷ 0.2) = 20; program 5 + 5 + 10 × min(1, 0.333 ÷ 0.25) = 20.
    expect(r.components.map((c: { score: number }) => c.score)).toEqual([10, 6.7, 10, 20, 20]);
    expect(r.score).toBe(67);
    expect(r.grade).toBe('D');
    expect(r.strengths).toHaveLength(2);
    expect(r.weaknesses).toEqual(['Members of the previous 30 days are not coming back']);
    expect(r.recommendations).toHaveLength(1);
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 3 });
  });

  it('a brand without members or program scores 0, F, with a note', async () => {
    const r = await call('get_brand_health', { params: { brandId: empty.brandId } });
    expect(r.score).toBe(0);
    expect(r.grade).toBe('F');
    // Retention cannot be measured without previous members: not a weakness, not scored.
    expect(r.weaknesses).toHaveLength(4);
    expect(r.notEnoughHistory).toEqual(['retention']);
    expect(r.basis).toMatchObject({ sampleSize: 0 });
    expect(r.basis.note).toMatch(/No active member/);
  });
});

describe('compare_brands', () => {
  it('Alpha vs Beta over 30 days: totals, growth and leaders', async () => {
    const r = await call('compare_brands', {
      query: { brandIds: `${alpha.brandId},${beta.brandId.toUpperCase().replace('0X', '0x')}` },
    });
    expect(r.brands.map((b: { brandId: string }) => b.brandId)).toEqual([alpha.brandId, beta.brandId]);
    expect(r.brands[0].totals).toEqual(ALPHA_30D);
    // Beta: dave visit, carol earn, alice earn → 3 events, 3 members, 110 pts; nobody the month before.
    expect(r.brands[1].totals).toMatchObject({ acceptedEvents: 3, members: 3, ptsIssued: '110', redemptions: 0 });
    expect(r.brands[1].memberGrowthPercent).toBeNull();
    expect(r.leaders).toEqual({
      members: alpha.brandId, // 3 = 3: first listed
      acceptedEvents: alpha.brandId,
      ptsIssued: alpha.brandId,
      redemptions: alpha.brandId,
      eventsPerMember: alpha.brandId,
      redemptionRatePercent: alpha.brandId,
      memberGrowthPercent: null, // Alpha 0, Beta null
    });
    expect(r.basis.sampleSize).toBe(10);
  });

  it('1 or 6 ids, a bad id → 400; an unknown brand → 404 naming it', async () => {
    const six = Array.from({ length: 6 }, (_, i) => `0x${String(i + 1).padStart(40, '0')}`).join(',');
    for (const brandIds of [alpha.brandId, `${alpha.brandId},${alpha.brandId}`, six, `${alpha.brandId},zz`]) {
      await expect(invoke('compare_brands', { query: { brandIds } })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    }
    await expect(invoke('compare_brands', { query: {} })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(
      invoke('compare_brands', { query: { brandIds: `${alpha.brandId},${UNKNOWN_BRAND}` } }),
    ).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining(UNKNOWN_BRAND),
      details: { field: 'brandIds', value: UNKNOWN_BRAND },
    });
  });
});

describe('compare_cashback', () => {
  it('25 USD: Alpha purchase 250 pts = 1 %, Beta earn 50 pts = 0.2 %, Empty none', async () => {
    const r = await call('compare_cashback', {
      query: { brandIds: `${beta.brandId},${empty.brandId},${alpha.brandId}`, purchaseAmount: '25' },
    });
    expect(r.purchaseAmountUsd).toBe('25.00');
    expect(r.ptsPerUsd).toBe(1000);
    expect(r.brands).toEqual([
      {
        brandId: alpha.brandId,
        name: 'alpha',
        eventType: 'purchase',
        eventId: expect.any(String),
        rewardPts: '250',
        rewardUsd: '0.250',
        cashbackPercent: 1, // 250 ÷ 25 000
        maxClaimsPerUser: -1,
        cooldownHours: 0,
        acceptedLast30d: 1,
      },
      expect.objectContaining({
        brandId: beta.brandId,
        eventType: 'earn',
        rewardPts: '50',
        rewardUsd: '0.050',
        cashbackPercent: 0.2,
        maxClaimsPerUser: -1,
        acceptedLast30d: 2,
      }),
      expect.objectContaining({
        brandId: empty.brandId,
        eventType: null,
        rewardPts: null,
        cashbackPercent: null,
        acceptedLast30d: 0,
      }),
    ]);
    expect(r.basis.sampleSize).toBe(3);
    const cents = await call('compare_cashback', {
      query: { brandIds: `${alpha.brandId},${beta.brandId}`, purchaseAmount: '19.99' },
    });
    // 250 ÷ 19 990 = 1.2506 % → 1.25
    expect(cents.brands[0].cashbackPercent).toBe(1.25);
  });

  it('category alone: brands of that category (none are categorised here) → empty list and a note', async () => {
    const r = await call('compare_cashback', { query: { category: 'Retail', purchaseAmount: '10' } });
    expect(r.category).toBe('retail');
    expect(r.brands).toEqual([]);
    expect(r.basis).toMatchObject({ sampleSize: 0, note: expect.stringMatching(/No brand matches/) });
  });

  it('neither brandIds nor category, bad amounts, 11 ids, bad category → 400', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `0x${String(i + 1).padStart(40, '0')}`).join(',');
    const bad = [
      { purchaseAmount: '10' },
      { brandIds: `${alpha.brandId},${beta.brandId}` },
      { brandIds: `${alpha.brandId},${beta.brandId}`, purchaseAmount: 'ten' },
      { brandIds: `${alpha.brandId},${beta.brandId}`, purchaseAmount: '0' },
      { brandIds: `${alpha.brandId},${beta.brandId}`, purchaseAmount: '1.234' },
      { brandIds: `${alpha.brandId},${beta.brandId}`, purchaseAmount: '-5' },
      { brandIds: eleven, purchaseAmount: '10' },
      { category: 'pets', purchaseAmount: '10' },
    ];
    for (const query of bad) {
      await expect(invoke('compare_cashback', { query }), JSON.stringify(query)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    }
  });
});

describe('get_brand_rankings', () => {
  it('by 30-day members, then events: Alpha (3, 6), Beta (3, 3), Empty last', async () => {
    const r = await call('get_brand_rankings', { query: {} });
    expect(r.rankings.map((x: { brandId: string; rank: number }) => [x.rank, x.brandId])).toEqual([
      [1, alpha.brandId],
      [2, beta.brandId],
      [3, empty.brandId],
    ]);
    expect(r.rankings[0]).toMatchObject({ members: 3, acceptedEvents: 6, ptsIssued: '570', memberGrowthPercent: 0 });
    expect(r.rankings[2]).toMatchObject({ members: 0, acceptedEvents: 0, memberGrowthPercent: null });
    expect(r.totalBrands).toBe(3);
    expect((await call('get_brand_rankings', { query: { limit: '2' } })).rankings).toHaveLength(2);
  });

  it('limit 11 or 0 → 400; an unknown category → 400; a category without brands → empty with a note', async () => {
    for (const query of [{ limit: '11' }, { limit: '0' }, { category: 'pets' }]) {
      await expect(invoke('get_brand_rankings', { query })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    const r = await call('get_brand_rankings', { query: { category: 'gaming' } });
    expect(r.rankings).toEqual([]);
    expect(r.basis.note).toBe('No brand of category gaming');
  });

  it('GET /api/v1/brands/rankings reaches the rankings tool, not /brands/:brandId', async () => {
    // The full list, as the router mounts it.
    const names = agentTools(platform.services.agent.toolDeps).map((t) => t.name);
    expect(names.indexOf('get_brand_rankings')).toBeLessThan(names.indexOf('get_brand'));
    const res = await agentRequest(platform, { method: 'get', path: '/brands/rankings', query: { limit: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      meta: { tool: 'get_brand_rankings' },
      data: { rankings: [{ brandId: alpha.brandId }] },
    });
    const tooMany = await agentRequest(platform, { method: 'get', path: '/brands/rankings', query: { limit: 11 } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ error: { code: 'validation', status: 400 } });
    // The brand route still answers brands.
    const brand = await agentRequest(platform, { method: 'get', path: `/brands/${alpha.brandId}` });
    expect(brand.body).toMatchObject({ meta: { tool: 'get_brand' } });
  });
});

describe('get_network_flows', () => {
  it('alice and carol went Alpha → Beta, dave Beta → Alpha', async () => {
    const r = await call('get_network_flows', { query: {} });
    expect(r).toMatchObject({ members: 3, multiBrandMembers: 3, multiBrandPercent: 100 });
    expect(
      r.flows.map(
        (f: { from: { brandId: string }; to: { brandId: string }; members: number; sharePercent: number }) => [
          f.from.brandId,
          f.to.brandId,
          f.members,
          f.sharePercent,
        ],
      ),
    ).toEqual([
      [alpha.brandId, beta.brandId, 2, 66.7],
      [beta.brandId, alpha.brandId, 1, 33.3],
    ]);
    expect(r.flows[0].from.name).toBe('alpha');
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 3 });
  });

  it('no data in the window: no flows, a note, nulls not NaN', async () => {
    platform.clock.set(at(400));
    try {
      const r = await call('get_network_flows', { query: { period: '90d' } });
      expect(r).toMatchObject({ members: 0, multiBrandMembers: 0, multiBrandPercent: null, flows: [] });
      expect(r.basis.note).toMatch(/No member/);
    } finally {
      platform.clock.set(at(0, 1));
    }
    await expect(invoke('get_network_flows', { query: { period: '14d' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('get_trending', () => {
  it('7d (default): everything is new against the week before; momentum = current', async () => {
    const r = await call('get_trending', { query: {} });
    // Alpha: carol, dave, 2 check-ins, purchase = 5; Beta: dave, carol, alice = 3.
    expect(r.brands.map((b: TrendItem) => [b.id, b.current, b.previous, b.momentum])).toEqual([
      [alpha.brandId, 5, 0, 5],
      [beta.brandId, 3, 0, 3],
    ]);
    expect(r.brands[0]).toMatchObject({ name: 'alpha', growthPercent: null });
    expect(r.eventTypes.map((t: { id: string; current: number }) => [t.id, t.current])).toEqual([
      ['earn', 4],
      ['daily_checkin', 2],
      ['purchase', 1],
      ['visit', 1],
    ]);
    expect(r.perks).toEqual([
      {
        id: perks.Gold,
        name: 'Gold',
        brandId: alpha.brandId,
        current: 1,
        previous: 0,
        growthPercent: null,
        momentum: 1,
      },
    ]);
    expect(r.basis).toMatchObject({ period: '7d', sampleSize: 9 });
  });

  it('30d: Beta new (3 → momentum 3) beats Alpha 3 → 6 (3 ÷ 4 = 0.75, +100 %)', async () => {
    const r = await call('get_trending', { query: { period: '30d', limit: '5' } });
    expect(
      r.brands.map((b: { id: string; momentum: number; growthPercent: number | null }) => [
        b.id,
        b.momentum,
        b.growthPercent,
      ]),
    ).toEqual([
      [beta.brandId, 3, null],
      [alpha.brandId, 0.75, 100],
    ]);
    // earn 5 vs 3 → 2 ÷ 4 = 0.5, last; visit and purchase tie at 1 (current 1) → by id.
    expect(r.eventTypes.map((t: { id: string; momentum: number }) => [t.id, t.momentum])).toEqual([
      ['daily_checkin', 2],
      ['purchase', 1],
      ['visit', 1],
      ['earn', 0.5],
    ]);
    const one = await call('get_trending', { query: { period: '30d', limit: '1' } });
    expect(one.eventTypes).toHaveLength(1);
  });

  it('nothing grew: empty lists and a note; limit 51 → 400', async () => {
    platform.clock.set(at(400));
    try {
      const r = await call('get_trending', { query: {} });
      expect(r).toMatchObject({ brands: [], perks: [], eventTypes: [] });
      expect(r.basis).toMatchObject({ sampleSize: 0, note: 'Nothing grew against the previous period' });
    } finally {
      platform.clock.set(at(0, 1));
    }
    for (const limit of ['51', '0', 'x']) {
      await expect(invoke('get_trending', { query: { limit } })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });
});

// Issue 23: a brand opened 100 days on. Gamma's members m1–m4 earn; x1–x3 earn only at Delta and spend their
// pts on Gamma's Mug, as does m1. Nobody used Gamma in the 30 days before.
//  +101d  earn m1 m2 m3 m4 (100 each) at Gamma; daily m1 (5), daily m1 again → refused (cooldown)
//         earn x1 x2 x3 at Delta
//  +102d  m1, x1, x2, x3 redeem the Mug (10) at Gamma;          now = +103d
describe('redeemers who are members, and a brand without history (issue 23)', () => {
  let gamma: CreatedBrand;
  let delta: CreatedBrand;
  let mug: { perkId: number; uuid: string };
  const gammaMembers = ['m1', 'm2', 'm3', 'm4'].map((name) => `${name}@example.com`);
  const outsiders = ['x1', 'x2', 'x3'].map((name) => `${name}@example.com`);

  beforeAll(async () => {
    platform.clock.set(at(100));
    gamma = await platform.createBrand({
      name: 'gamma',
      domain: 'gamma.example.com',
      rules: [
        { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
        { eventType: 'daily', rewardAmount: 5, cooldownHours: 24, maxClaims: -1 },
      ],
    });
    delta = await platform.createBrand({
      name: 'delta',
      domain: 'delta.example.com',
      rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
    });
    mug = await createPerkViaAdmin(platform, gamma.brandId, { name: 'Mug', cost: 10 });
    for (const [i, member] of gammaMembers.entries()) await earn(gamma, at(101, i), 'earn', member);
    await earn(gamma, at(101, 30), 'daily', 'm1@example.com');
    platform.clock.set(at(101, 31));
    const refused = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: gamma.brandId, eventType: 'daily', userEmail: 'm1@example.com', domain: 'gamma.example.com' },
      gamma.securityKey,
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    for (const [i, outsider] of outsiders.entries()) await earn(delta, at(101, 40 + i), 'earn', outsider);
    await waitForMintsSettled(platform);
    for (const [i, user] of ['m1@example.com', ...outsiders].entries()) {
      platform.clock.set(at(102, i));
      const res = await platform.signedPost(
        '/services/perks/redeem',
        { brandId: gamma.brandId, perkId: mug.uuid, userIdentifier: user, platform: 'web' },
        gamma.securityKey,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    platform.clock.set(at(103));
  }, 180_000);

  afterAll(() => {
    platform.clock.set(at(0, 1));
  });

  it('redemption rates count only redeemers who are members of the brand', async () => {
    const r = await call('get_brand_analytics', { params: { brandId: gamma.brandId }, query: { period: '30d' } });
    // 4 redemptions, but only m1 is a Gamma member: 1 of 4 members redeemed (not 4 of 4).
    expect(r.current).toMatchObject({ members: 4, redemptions: 4, redeemers: 1, ptsRedeemed: '40' });
    expect(r.current.redemptionRatePercent).toBe(25);
    const perksAnswer = await call('get_brand_perk_analytics', { params: { brandId: gamma.brandId } });
    expect(perksAnswer.totals).toMatchObject({ redemptions: 4, redeemers: 1, members: 4, redeemerPercent: 25 });
  });

  it('get_brand_health: no members in the previous period is not enough history, not a retention of 0', async () => {
    const r = await call('get_brand_health', { params: { brandId: gamma.brandId } });
    expect(r.inputs).toMatchObject({ previousMembers: 0, members: 4, redeemers: 1 });
    expect(r.components[1]).toMatchObject({ name: 'retention', score: null, value: null });
    expect(r.components[1].note).toMatch(/Not enough history/);
    expect(r.notEnoughHistory).toEqual(['retention']);
    expect(r.weaknesses).not.toContain('Members of the previous 30 days are not coming back');
    expect(r.recommendations).not.toContain('Reward returning members: a streak milestone or a comeback bonus');
  });

  it('the brand analytics read model (the portal dashboard reads it): totals, refusals, series, tops', async () => {
    const r = await readBrandAnalytics(platform.deps, { brandId: gamma.brandId, from: at(100), to: at(103) });
    expect(r.members).toEqual({ total: 4, new: 4, inWindow: 4, active: { day: 0, week: 4, month: 4 } });
    expect(r.events).toEqual({
      accepted: 5,
      refused: 1,
      refusedByReason: [{ reason: 'COOLDOWN_ACTIVE', count: 1 }],
    });
    expect(r.ptsIssued).toBe('405');
    expect(r.redemptions).toEqual({ count: 4, ptsSpent: '40', redeemers: 1, ratePercent: 25 });
    // The window touches four UTC days (it starts and ends at noon).
    expect(r.series.day.map((b) => b.start)).toEqual([100, 101, 102, 103].map((d) => at(d).toISOString().slice(0, 10)));
    expect(r.series.day[1]).toEqual({
      start: at(101).toISOString().slice(0, 10),
      acceptedEvents: 5,
      refusedEvents: 1,
      activeMembers: 4,
      ptsIssued: '405',
      redemptions: 0,
      ptsSpent: '0',
    });
    expect(r.series.day[2]).toMatchObject({ acceptedEvents: 0, redemptions: 4, ptsSpent: '40' });
    const weeks = r.series.week;
    expect(weeks.every((w) => new Date(`${w.start}T00:00:00Z`).getUTCDay() === 1)).toBe(true);
    expect(weeks.reduce((n, w) => n + w.acceptedEvents, 0)).toBe(5);
    expect(weeks.reduce((n, w) => n + w.redemptions, 0)).toBe(4);
    expect(r.topEventTypes).toEqual([
      { eventType: 'earn', accepted: 4, refused: 0, members: 4, ptsIssued: '400' },
      { eventType: 'daily', accepted: 1, refused: 1, members: 1, ptsIssued: '5' },
    ]);
    expect(r.topPerks).toEqual([{ perkId: mug.uuid, name: 'Mug', redemptions: 4, redeemers: 4, ptsSpent: '40' }]);
    // The agent's brand analytics read the same figures.
    const agent = await call('get_brand_analytics', { params: { brandId: gamma.brandId }, query: { period: '7d' } });
    expect(agent.current).toMatchObject({
      acceptedEvents: r.events.accepted,
      rejectedEvents: r.events.refused,
      ptsIssued: r.ptsIssued,
      redeemers: r.redemptions.redeemers,
      redemptionRatePercent: r.redemptions.ratePercent,
    });
  });

  it('the read model refuses a bad window with a message saying what to fix', async () => {
    await expect(
      readBrandAnalytics(platform.deps, { brandId: gamma.brandId, from: at(103), to: at(100) }),
    ).rejects.toThrow(/from must be before to/);
    await expect(
      readBrandAnalytics(platform.deps, { brandId: gamma.brandId, from: at(-400), to: at(100) }),
    ).rejects.toThrow(/at most 366 days/);
  });
});
