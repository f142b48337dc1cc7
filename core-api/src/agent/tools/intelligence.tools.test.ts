import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type AgentPrincipal, type AgentTool, type AgentToolContext, invokeAgentTool } from '../agent-tool.ts';
import { intelligenceTools } from './intelligence.tools.ts';

// Real events (brand-signed manual events at controlled manual-clock times), real perks and a real
// redemption on anvil; every expected number below is computed by hand in the comments.

const DAY = 86_400_000;
// Noon UTC today: near the chain's real time (permits carry a deadline from the clock), and day boundaries
// stay where the comments put them.
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
let platform: TestPlatform;
let brand: CreatedBrand;
let empty: CreatedBrand;
/** A second brand with members on chat platforms and a dormant one (audience, suggestions). */
let aud: CreatedBrand;
let tools: Map<string, AgentTool>;
const perks: Record<string, string> = {};

const principal = (brandIds: string[]): AgentPrincipal => ({
  keyId: 'k',
  name: 'test key',
  brandIds,
  canManageProgram: false,
  canOnboard: false,
  tier: 'free',
  ratePerMinute: 20,
});

/** One row of a list answer (recommendations, perks, goals), as the assertions read it. */
type Item = Record<string, unknown>;

function call(name: string, raw: { params?: unknown; query?: unknown }, brandIds = [brand.brandId]) {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const context: AgentToolContext = {
    principal: principal(brandIds),
    clock: platform.clock,
    logger: pino({ level: 'silent' }),
  };
  // biome-ignore lint/suspicious/noExplicitAny: answers are compared with hand-computed literals field by field
  return invokeAgentTool(tool, raw, context) as Promise<any>;
}

async function event(at: Date, eventType: string, identityKey: string, b = brand, metadata: object = {}) {
  platform.clock.set(at);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    {
      brandId: b.brandId,
      eventType,
      userEmail: identityKey,
      domain: b === brand ? 'intel.example.com' : 'aud.example.com',
      metadata: { at: at.toISOString(), ...metadata },
    },
    b.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function createPerk(name: string, cost: number, maxSupply: number | null, category = 'general', b = brand) {
  const res = await platform.post(
    '/admin/perks',
    { brandId: b.brandId, name, cost, category, ...(maxSupply ? { maxSupply } : {}) },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  perks[name] = String(res.body.perk.perkId);
  return res.body.perk as { perkId: number; uuid: string };
}

/** A member redeems a perk of `b` (by uuid or integer id) through the services API: 200 expected. */
async function redeem(b: CreatedBrand, perkId: string, identityKey: string) {
  const res = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: b.brandId, perkId, userIdentifier: identityKey },
    b.securityKey,
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
  platform.clock.set(new Date(T0.getTime() - 45 * DAY));
  brand = await platform.createBrand({
    domain: 'intel.example.com',
    rules: [
      { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'visit', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'share', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  empty = await platform.createBrand({ domain: 'empty.example.com', name: 'Empty' });
  aud = await platform.createBrand({
    domain: 'aud.example.com',
    name: 'Aud',
    rules: [
      { eventType: 'earn', rewardAmount: 50, cooldownHours: 24, maxClaims: -1 },
      { eventType: 'purchase', rewardAmount: 20, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'first_purchase', rewardAmount: 300, cooldownHours: 0, maxClaims: 1 },
    ],
  });
  tools = new Map(intelligenceTools(platform.services.agent.toolDeps).map((t) => [t.name, t]));
  const gold = await createPerk('Gold', 200, 10, 'merch');
  await createPerk('Sticker', 50, null, 'merch');
  await createPerk('Trip', 1000, null, 'travel');
  await createPerk('Coffee', 40, null, 'dining', aud);
  // aud: dave −40 d (web, dormant); carol −5 d and −4 d on discord (declared); telegram_42 −3 d (identity).
  await event(new Date(T0.getTime() - 40 * DAY), 'earn', 'dave@example.com', aud);
  // (Chronological, across both brands.)
  // alice: earn at −20d, −10d, −2d; visit −2d; share −1d → 5 events, 3 types, 4 active days, 315 pts.
  await event(new Date(T0.getTime() - 20 * DAY), 'earn', 'alice@example.com');
  await event(new Date(T0.getTime() - 10 * DAY), 'earn', 'alice@example.com');
  await event(new Date(T0.getTime() - 5 * DAY), 'earn', 'carol@example.com', aud, { platform: 'discord' });
  await event(new Date(T0.getTime() - 4 * DAY), 'earn', 'carol@example.com', aud, { platform: 'discord' });
  await event(new Date(T0.getTime() - 3 * DAY), 'earn', 'bob@example.com'); // bob: 1 event, 100 pts
  await event(new Date(T0.getTime() - 3 * DAY + 3_600_000), 'earn', 'telegram_42@example.com', aud);
  await event(new Date(T0.getTime() - 2 * DAY), 'earn', 'alice@example.com');
  await event(new Date(T0.getTime() - 2 * DAY + 60_000), 'visit', 'alice@example.com');
  await event(new Date(T0.getTime() - 1 * DAY), 'share', 'alice@example.com');
  await waitForMintsSettled(platform);
  platform.clock.set(T0);
  await redeem(brand, gold.uuid, 'alice@example.com');
  platform.clock.set(new Date(T0.getTime() + 60_000));
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('get_user_persona', () => {
  it('profiles alice from her real events and redemption (hand-computed)', async () => {
    const p = await call('get_user_persona', { params: { userId: 'alice@example.com' } });
    expect(p.behaviour).toMatchObject({
      events: 5,
      activeDays: 4,
      eventsPerActiveDay: 1.25,
      daysSinceLastEvent: 1,
      redemptions: 1,
      earned: '315',
      spent: '200',
    });
    expect(p.behaviour.eventTypeMix).toEqual([
      { eventType: 'earn', count: 3, share: 60 },
      { eventType: 'share', count: 1, share: 20 },
      { eventType: 'visit', count: 1, share: 20 },
    ]);
    // 200 × 2 ≥ 315 and one redemption → redeemer (before streaker/explorer).
    expect(p.archetype).toBe('redeemer');
    // alice 315, bob 100: one member below her out of two → 50 %.
    expect(p.network).toEqual({ brands: 1, earningsPercentile: 50, population: 2 });
    expect(p.brandAffinities).toEqual([{ brandId: brand.brandId, events: 5, earned: '315', share: 100 }]);
    expect(p.basis).toMatchObject({ period: '30d', sampleSize: 5 });
  });

  it('bob with one event is a newcomer at the 0th percentile', async () => {
    const p = await call('get_user_persona', { params: { userId: 'bob@example.com' } });
    expect(p.archetype).toBe('newcomer');
    expect(p.network.earningsPercentile).toBe(0);
  });

  it('404 for an unknown member; a hostile key (other brand) learns nothing: same 404', async () => {
    await expect(call('get_user_persona', { params: { userId: 'nobody@example.com' } })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(
      call('get_user_persona', { params: { userId: 'alice@example.com' } }, [empty.brandId]),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(call('get_user_persona', { params: { userId: 'alice@example.com' } }, [])).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});

describe('get_user_recommendations', () => {
  it('ranks by 50·afford + 30·popularity + 20·novelty for bob (balance 100)', async () => {
    const r = await call('get_user_recommendations', { params: { userId: 'bob@example.com' }, query: {} });
    expect(r.balance).toBe('100');
    // Gold: 50·0.5 + 30·1 + 20 = 75; Sticker: 50 + 0 + 20 = 70; Trip: 50·0.1 + 0 + 20 = 25.
    expect(r.recommendations.map((x: Item) => [x.perkId, x.score, x.affordable])).toEqual([
      [perks.Gold, 75, false],
      [perks.Sticker, 70, true],
      [perks.Trip, 25, false],
    ]);
    const one = await call('get_user_recommendations', {
      params: { userId: 'bob@example.com' },
      query: { limit: '1' },
    });
    expect(one.recommendations).toHaveLength(1);
  });

  it('leaves out a perk the member already holds the per-user maximum of (alice redeemed Gold, 1 per user)', async () => {
    const r = await call('get_user_recommendations', { params: { userId: 'alice@example.com' }, query: {} });
    expect(r.recommendations.map((x: Item) => x.perkId)).not.toContain(perks.Gold);
    expect(r.recommendations.map((x: Item) => x.perkId)).toEqual([perks.Sticker, perks.Trip]);
  });

  it('limit 21 and 0 → 400, saying the bound in words', async () => {
    for (const [limit, says] of <[string, string][]>[
      ['21', 'limit must be at most 20'],
      ['0', 'limit must be at least 1'],
      ['x', 'limit must be a number'],
    ]) {
      await expect(
        call('get_user_recommendations', { params: { userId: 'bob@example.com' }, query: { limit } }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(says) });
    }
  });
});

describe('get_brand_perk_intelligence', () => {
  it('heat, funnel and depletion from the one real redemption', async () => {
    const r = await call('get_brand_perk_intelligence', { params: { brandId: brand.brandId } });
    expect(r.members).toBe(2);
    const gold = r.perks[0];
    // heat (2·1 + 0)/30 = 0.07; velocity 1/30 = 0.03; afford ≥ 200: alice only; 9 left at 1 per 30 d → 270 d.
    expect(gold).toMatchObject({
      perkId: perks.Gold,
      heatScore: 0.07,
      velocityPerDay: 0.03,
      redemptions7d: 1,
      redemptions30d: 1,
      funnel: { couldAfford: 1, redeemers30d: 1, conversionPercent: 100 },
      supply: { max: '10', sold: '1', remaining: '9', daysToSellOut: 270 },
    });
    const sticker = r.perks.find((p: Item) => p.perkId === perks.Sticker);
    expect(sticker).toMatchObject({ heatScore: 0, funnel: { couldAfford: 2, redeemers30d: 0, conversionPercent: 0 } });
    expect(sticker.supply).toMatchObject({ max: '-1', remaining: null, daysToSellOut: null });
    expect(r.basis.sampleSize).toBe(1);
  });

  it('empty brand: empty list with a note; unknown brand: 404; bad id: 400', async () => {
    const r = await call('get_brand_perk_intelligence', { params: { brandId: empty.brandId } });
    expect(r).toMatchObject({ members: 0, perks: [], basis: { sampleSize: 0, note: 'The brand has no perk' } });
    await expect(
      call('get_brand_perk_intelligence', { params: { brandId: `0x${'1'.repeat(40)}` } }),
    ).rejects.toMatchObject({ code: 'BRAND_NOT_FOUND' });
    await expect(call('get_brand_perk_intelligence', { params: { brandId: 'nope' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('get_user_goals', () => {
  it('bob: missing pts and days at 100 pts per 30 days', async () => {
    const g = await call('get_user_goals', {
      params: { userId: 'bob@example.com' },
      query: { brandId: brand.brandId },
    });
    expect(g.balance).toBe('100');
    expect(g.dailyEarningRate).toBe(3.33);
    // Sticker affordable (0 d); Gold 100 missing → ceil(100·30/100) = 30 d; Trip 900 → 270 d.
    expect(g.goals.map((x: Item) => [x.perkId, x.missing, x.progressPercent, x.estimatedDays])).toEqual([
      [perks.Sticker, '0', 100, 0],
      [perks.Gold, '100', 50, 30],
      [perks.Trip, '900', 10, 270],
    ]);
    const one = await call('get_user_goals', {
      params: { userId: 'bob@example.com' },
      query: { targetPerkId: perks.Trip },
    });
    expect(one.goals).toHaveLength(1);
  });

  it('leaves out a perk the member already holds the per-user maximum of, with a note', async () => {
    const g = await call('get_user_goals', { params: { userId: 'alice@example.com' }, query: {} });
    expect(g.goals.map((x: Item) => x.perkId)).toEqual([perks.Sticker, perks.Trip]);
    expect(g.basis.note).toContain(`(${perks.Gold}: the member already holds the per-user maximum)`);
    const gold = await call('get_user_goals', {
      params: { userId: 'alice@example.com' },
      query: { targetPerkId: perks.Gold },
    });
    expect(gold.goals).toEqual([]);
    expect(gold.basis.note).toContain('per-user maximum');
  });

  it('403 for a brand the key does not hold; 404 for an unknown perk', async () => {
    await expect(
      call('get_user_goals', { params: { userId: 'bob@example.com' }, query: { brandId: brand.brandId } }, [
        empty.brandId,
      ]),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      call('get_user_goals', { params: { userId: 'bob@example.com' }, query: { targetPerkId: '999999' } }),
    ).rejects.toMatchObject({ code: 'PERK_NOT_FOUND' });
  });

  it('400 for a targetPerkId that is not an integer id, saying what to send (not a regular expression)', async () => {
    const refused = call('get_user_goals', { params: { userId: 'bob@example.com' }, query: { targetPerkId: 'abc' } });
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    const message = await refused.catch((error: Error) => error.message);
    expect(message).toContain("targetPerkId: must be a perk's integer id");
    expect(message).not.toContain('pattern');
  });
});

/** The six archetypes with these member counts (others 0), as `archetypeDistribution` lists them. */
function personas(counts: Record<string, number>, of: number) {
  return ['dormant', 'newcomer', 'redeemer', 'streaker', 'explorer', 'collector'].map((archetype) => ({
    archetype,
    members: counts[archetype] ?? 0,
    share: of > 0 ? Math.round(((counts[archetype] ?? 0) / of) * 1000) / 10 : 0,
  }));
}

describe('get_perk_audience', () => {
  it('Gold: alice redeemed it and is the only member who earned 200 at the brand (redeemer, 100 %)', async () => {
    const r = await call('get_perk_audience', { params: { brandId: brand.brandId, collectionId: perks.Gold } }, []);
    expect(r).toMatchObject({ perkId: perks.Gold, name: 'Gold', cost: '200' });
    expect(r.redeemers).toEqual({ members: 1, personas: personas({ redeemer: 1 }, 1) });
    expect(r.couldAfford).toEqual({ members: 1, personas: personas({ redeemer: 1 }, 1) });
    const redeemer = r.conversionByArchetype.find((c: Item) => c.archetype === 'redeemer');
    expect(redeemer).toEqual({ archetype: 'redeemer', couldAfford: 1, redeemed: 1, conversionPercent: 100 });
    const newcomer = r.conversionByArchetype.find((c: Item) => c.archetype === 'newcomer');
    expect(newcomer).toEqual({ archetype: 'newcomer', couldAfford: 0, redeemed: 0, conversionPercent: null });
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 1 });
    expect(r.basis.note).toBeUndefined();
  });

  it('Sticker (50): alice 315 and bob 100 could afford it, nobody redeemed it (50/50, 0 %)', async () => {
    const r = await call('get_perk_audience', { params: { brandId: brand.brandId, collectionId: perks.Sticker } });
    expect(r.redeemers).toEqual({ members: 0, personas: personas({}, 0) });
    expect(r.couldAfford).toEqual({ members: 2, personas: personas({ redeemer: 1, newcomer: 1 }, 2) });
    expect(r.conversionByArchetype.filter((c: Item) => c.couldAfford)).toEqual([
      { archetype: 'newcomer', couldAfford: 1, redeemed: 0, conversionPercent: 0 },
      { archetype: 'redeemer', couldAfford: 1, redeemed: 0, conversionPercent: 0 },
    ]);
    expect(r.basis).toMatchObject({ sampleSize: 2, note: 'Nobody redeemed this perk yet' });
  });

  it('Trip (1000): nobody could afford it → zeros and a note', async () => {
    const r = await call('get_perk_audience', { params: { brandId: brand.brandId, collectionId: perks.Trip } });
    expect(r.couldAfford.members).toBe(0);
    expect(r.basis).toMatchObject({
      sampleSize: 0,
      note: 'Nobody redeemed this perk and no member has earned its cost at the brand',
    });
  });

  it('400 on a bad id, 404 for an unknown perk, another brand’s perk or an unknown brand', async () => {
    await expect(
      call('get_perk_audience', { params: { brandId: brand.brandId, collectionId: 'abc' } }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(
      call('get_perk_audience', { params: { brandId: brand.brandId, collectionId: '999999' } }),
    ).rejects.toMatchObject({ code: 'PERK_NOT_FOUND' });
    await expect(
      call('get_perk_audience', { params: { brandId: aud.brandId, collectionId: perks.Gold } }),
    ).rejects.toMatchObject({ code: 'PERK_NOT_FOUND' });
    await expect(
      call('get_perk_audience', { params: { brandId: `0x${'1'.repeat(40)}`, collectionId: perks.Gold } }),
    ).rejects.toMatchObject({ code: 'BRAND_NOT_FOUND' });
  });
});

describe('get_brand_audience', () => {
  it('intel brand: alice (redeemer) and bob (newcomer), 6 events on the web', async () => {
    const r = await call('get_brand_audience', { params: { brandId: brand.brandId } }, []);
    expect(r.members).toBe(2);
    expect(r.personas).toEqual(personas({ redeemer: 1, newcomer: 1 }, 2));
    // alice 5 events on 4 days, bob 1 on 1 day: 6/2 = 3 events and 5/2 = 2.5 days per active member.
    expect(r.engagement).toEqual({
      activeMembers30d: 2,
      newMembers30d: 2,
      events30d: 6,
      eventsPerActiveMember: 3,
      activeDaysPerActiveMember: 2.5,
      earned30d: '415',
      redemptions30d: 1,
      redeemers30d: 1,
    });
    expect(r.platforms).toEqual([{ platform: 'web', events: 6, members: 2, share: 100 }]);
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 2 });
  });

  it('aud brand: dave dormant (−40 d), carol on discord (declared), telegram_42 by identity', async () => {
    const r = await call('get_brand_audience', { params: { brandId: aud.brandId } });
    expect(r.members).toBe(3);
    expect(r.personas).toEqual(personas({ dormant: 1, newcomer: 2 }, 3));
    expect(r.engagement).toMatchObject({
      activeMembers30d: 2,
      newMembers30d: 2,
      events30d: 3,
      eventsPerActiveMember: 1.5,
      activeDaysPerActiveMember: 1.5,
      earned30d: '150',
      redemptions30d: 0,
    });
    // 2 of 3 events on discord = 66.7 %, 1 of 3 on telegram = 33.3 %; dave's event is outside the window.
    expect(r.platforms).toEqual([
      { platform: 'discord', events: 2, members: 1, share: 66.7 },
      { platform: 'telegram', events: 1, members: 1, share: 33.3 },
    ]);
  });

  it('a brand without members: zeros and a note; unknown brand 404; bad id 400', async () => {
    const r = await call('get_brand_audience', { params: { brandId: empty.brandId } });
    expect(r).toMatchObject({
      members: 0,
      platforms: [],
      engagement: { activeMembers30d: 0, eventsPerActiveMember: 0, earned30d: '0' },
      basis: { sampleSize: 0, note: 'The brand has no member yet' },
    });
    await expect(call('get_brand_audience', { params: { brandId: `0x${'1'.repeat(40)}` } })).rejects.toMatchObject({
      code: 'BRAND_NOT_FOUND',
    });
    await expect(call('get_brand_audience', { params: { brandId: 'nope' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('suggest_brand_events', () => {
  it('a brand with no rule: earn, share, visit from the two peers (lower medians, most common max)', async () => {
    const r = await call('suggest_brand_events', { params: { brandId: empty.brandId } }, []);
    expect(r.peers).toBe(2);
    // earn: intel 100 pts/0 h (4 events, alice+bob), aud 50 pts/24 h (3 events, carol+telegram_42; dave is
    // 40 d old) → reward lower median 50, cooldown 0, (2+2)/2 = 2 members and 7/2 = 3.5 events per brand.
    expect(r.suggestions).toEqual([
      {
        eventType: 'earn',
        rewardAmount: 50,
        maxClaims: -1,
        cooldownHours: 0,
        network: {
          brands: 2,
          events30d: 7,
          membersPerBrand: 2,
          eventsPerBrand: 3.5,
          rewardRange: { min: 50, max: 100 },
        },
        reason: '2 other brand(s) run earn; it reached 2 member(s) per brand in 30 days; this brand has no such rule',
      },
      expect.objectContaining({
        eventType: 'share',
        rewardAmount: 5,
        network: expect.objectContaining({ brands: 1, membersPerBrand: 1 }),
      }),
      expect.objectContaining({
        eventType: 'visit',
        rewardAmount: 10,
        network: expect.objectContaining({ brands: 1, membersPerBrand: 1 }),
      }),
    ]);
    // purchase and first_purchase (aud) reached nobody: not suggested. 4 + 1 + 1 + 3 peer events.
    expect(r.current).toEqual([]);
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 9 });
  });

  it('aud: compares its own rules with the peer (intel) and suggests share and visit', async () => {
    const r = await call('suggest_brand_events', { params: { brandId: aud.brandId } });
    expect(r.peers).toBe(1);
    expect(r.suggestions.map((x: Item) => x.eventType)).toEqual(['share', 'visit']);
    expect(r.current).toEqual([
      {
        eventType: 'earn',
        rewardAmount: 50,
        cooldownHours: 24,
        maxClaims: -1,
        events30d: 3,
        members30d: 2,
        network: { brands: 1, medianReward: 100, membersPerBrand: 2 },
      },
      {
        eventType: 'first_purchase',
        rewardAmount: 300,
        cooldownHours: 0,
        maxClaims: 1,
        events30d: 0,
        members30d: 0,
        network: { brands: 0, medianReward: null, membersPerBrand: 0 },
      },
      expect.objectContaining({ eventType: 'purchase', events30d: 0 }),
    ]);
  });

  it('intel lacks only types that reached nobody: empty list with a note; 404 and 400', async () => {
    const r = await call('suggest_brand_events', { params: { brandId: brand.brandId } });
    expect(r.suggestions).toEqual([]);
    expect(r.basis.note).toBe('No event type this brand lacks reached a member at other brands in the last 30 days');
    await expect(call('suggest_brand_events', { params: { brandId: `0x${'1'.repeat(40)}` } })).rejects.toMatchObject({
      code: 'BRAND_NOT_FOUND',
    });
    await expect(call('suggest_brand_events', { params: { brandId: 'x' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('suggest_brand_perks', () => {
  it('intel: balances 100 (bob) and 115 (alice) → 100/100/115; merch redeems best; nothing it lacks redeemed', async () => {
    const r = await call('suggest_brand_perks', { params: { brandId: brand.brandId } }, []);
    expect(r.members).toBe(2);
    expect(r.pricePoints).toEqual([
      { tier: 'entry', percentile: 25, priceInPoints: 100, membersCanAffordNow: 2, share: 100 },
      { tier: 'core', percentile: 50, priceInPoints: 100, membersCanAffordNow: 2, share: 100 },
      { tier: 'premium', percentile: 75, priceInPoints: 115, membersCanAffordNow: 1, share: 50 },
    ]);
    // merch: Gold 200 + Sticker 50, one redemption → 0.5 per perk, lower median cost 50.
    expect(r.categories).toEqual([
      {
        category: 'merch',
        perks: 2,
        brands: 1,
        redemptions30d: 1,
        redemptionsPerPerk30d: 0.5,
        medianCost: 50,
        brandHas: true,
      },
      {
        category: 'dining',
        perks: 1,
        brands: 1,
        redemptions30d: 0,
        redemptionsPerPerk30d: 0,
        medianCost: 40,
        brandHas: false,
      },
      {
        category: 'travel',
        perks: 1,
        brands: 1,
        redemptions30d: 0,
        redemptionsPerPerk30d: 0,
        medianCost: 1000,
        brandHas: true,
      },
    ]);
    expect(r.suggestions).toEqual([]);
    expect(r.basis).toMatchObject({
      sampleSize: 2,
      note: 'No category this brand lacks had a redemption in the last 30 days',
    });
  });

  it('aud: balances 50, 50, 100 → merch suggested at the core price 50', async () => {
    const r = await call('suggest_brand_perks', { params: { brandId: aud.brandId } });
    expect(r.pricePoints.map((p: Item) => [p.priceInPoints, p.membersCanAffordNow, p.share])).toEqual([
      [50, 3, 100],
      [50, 3, 100],
      [100, 1, 33.3],
    ]);
    expect(r.suggestions).toEqual([
      {
        category: 'merch',
        priceInPoints: 50,
        maxSupply: -1,
        reason:
          '1 redemption(s) of 2 merch perk(s) at 1 brand(s) in 30 days; this brand has none; priced at the median balance of its members (3 of 3 can afford it now)',
      },
    ]);
  });

  it('a brand without members: no price points, merch at its median cost, a note', async () => {
    const r = await call('suggest_brand_perks', { params: { brandId: empty.brandId } });
    expect(r).toMatchObject({ members: 0, pricePoints: [], basis: { sampleSize: 0 } });
    expect(r.suggestions.map((x: Item) => [x.category, x.priceInPoints])).toEqual([['merch', 50]]);
    expect(r.basis.note).toBe('The brand has no member yet: no price points');
  });
});

describe('routes', () => {
  it('/brands/:brandId/suggestions/... reach the suggestion tools, not another /brands route', async () => {
    for (const [path, tool] of [
      [`/brands/${brand.brandId}/suggestions/events`, 'suggest_brand_events'],
      [`/brands/${brand.brandId}/suggestions/perks`, 'suggest_brand_perks'],
      [`/intelligence/brands/${brand.brandId}/audience`, 'get_brand_audience'],
      [`/intelligence/brands/${brand.brandId}/perks/${perks.Gold}/audience`, 'get_perk_audience'],
    ]) {
      const res = await agentRequest(platform, { method: 'GET', path: path as string });
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.meta.tool).toBe(tool);
    }
  });
});

// Last: a brand of its own would change the peers the suggestion tests above compute from.
describe('get_user_recommendations, every perk held', () => {
  it('says so when the member already holds the per-member maximum of every available perk', async () => {
    const held = await platform.createBrand({
      domain: 'held.example.com',
      name: 'Held',
      rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
    });
    const cap = await createPerk('Cap', 50, null, 'merch', held);
    const earned = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: held.brandId, eventType: 'earn', userEmail: 'held@example.com', domain: 'held.example.com' },
      held.securityKey,
    );
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    await waitForMintsSettled(platform);
    await redeem(held, cap.uuid, 'held@example.com');
    platform.clock.advance(60_000);
    const r = await call('get_user_recommendations', { params: { userId: 'held@example.com' }, query: {} }, [
      held.brandId,
    ]);
    expect(r.recommendations).toEqual([]);
    expect(r.basis.note).toBe(
      'The member already holds the per-member maximum of every available perk (1) at the brands this key acts for',
    );
  });
});

// Last: a redemption the tests above do not expect.
describe('get_brand_perk_intelligence, a visitor redeems', () => {
  it('counts the redemption but not the visitor in the funnel: conversion is over members of the brand only', async () => {
    // carol earned 100 at aud and never had an event at intel: she spends 50 on intel's Sticker.
    const sticker = (await call('get_brand_perk_intelligence', { params: { brandId: brand.brandId } })).perks.find(
      (p: Item) => p.perkId === perks.Sticker,
    );
    await redeem(brand, sticker.perkId, 'carol@example.com');
    platform.clock.advance(60_000);
    const r = await call('get_brand_perk_intelligence', { params: { brandId: brand.brandId } });
    const after = r.perks.find((p: Item) => p.perkId === perks.Sticker);
    expect(after).toMatchObject({
      redemptions30d: 1,
      funnel: { couldAfford: 2, redeemers30d: 0, conversionPercent: 0 },
      supply: { sold: '1' },
    });
  });
});
