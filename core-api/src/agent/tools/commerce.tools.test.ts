import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal } from '../agent-tool.ts';
import { commerceTools, intentTerms } from './commerce.tools.ts';
import {
  createCategorisedBrand,
  createPerkViaAdmin,
  sendBrandEvent,
  testPrincipal,
  toolCaller,
  UNKNOWN_BRAND,
} from './tool-test-support.ts';

// Real rules, events (brand-signed), check-ins (a real streak), perks on chain and redemptions on anvil.
// Every expected number is computed by hand from this timeline (T0 = noon UTC today, now = T0 + 5 min):
//  cafe  (dining; purchase 200 max 2/member, daily_checkin 10; perks Cookie 100, Mug 300, Hoodie 2000)
//  diner (dining; order 150, earn 50)      games (gaming; earn 300, cooldown 24 h; perk Skin 300, supply 1)
//  bare  (dining; visit 10 only: no purchase rule)
//  −40d noah earn@games   −10d, −9d noah purchase@cafe   −5d zoe order@diner
//  −3d mia purchase@cafe + check-in (10)   −2d mia check-in (10)   −1d mia check-in (streak 3 × 1.25 = 12)
//  −2h noah earn@games   T0 mia redeems Cookie, noah redeems Cookie and Skin (sold out)
// Spendable balances (the wallets, every mint confirmed): mia 200 + 10 + 10 + 12 − 100 = 132; noah 300 + 200 + 200 + 300 − 100 − 300 = 600.

const DAY = 86_400_000;
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
const at = (days: number, minutes = 0) => new Date(T0.getTime() + days * DAY + minutes * 60_000);
let platform: TestPlatform;
let cafe: CreatedBrand;
let diner: CreatedBrand;
let games: CreatedBrand;
let bare: CreatedBrand;
const perk: Record<string, number> = {};
const { call, invoke } = toolCaller(
  () => platform,
  () => commerceTools(platform.services.agent.toolDeps),
);
const MIA = 'mia@example.com';
const NOAH = 'noah@example.com';

const principal = testPrincipal;
let all: AgentPrincipal;

const event = (brand: CreatedBrand, when: Date, eventType: string, identityKey: string) =>
  sendBrandEvent(platform, brand, when, eventType, identityKey);

async function checkin(when: Date, identityKey: string) {
  platform.clock.set(when);
  const res = await platform.signedPost(
    '/services/checkin',
    { brandId: cafe.brandId, userIdentifier: identityKey, platform: 'web' },
    cafe.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function redeem(when: Date, brand: CreatedBrand, perkUuid: string, identityKey: string) {
  platform.clock.set(when);
  const res = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: brand.brandId, perkId: perkUuid, userIdentifier: identityKey, platform: 'web' },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const brandOf = (name: string, category: string, rules: Parameters<typeof createCategorisedBrand>[3]) =>
  createCategorisedBrand(platform, name, category, rules);

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    // Formulas on data the tests change and a clock they move: every answer computed on its call (the
    // answer store is tested in answer-cache.test.ts and agent-tools.http.test.ts).
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
  });
  platform.clock.set(at(-60));
  cafe = await brandOf('cafe', 'dining', [
    { eventType: 'purchase', reward: 200, max: 2 },
    { eventType: 'daily_checkin', reward: 10 },
  ]);
  diner = await brandOf('diner', 'dining', [
    { eventType: 'order', reward: 150 },
    { eventType: 'earn', reward: 50 },
  ]);
  games = await brandOf('games', 'gaming', [{ eventType: 'earn', reward: 300, cooldown: 24 }]);
  bare = await brandOf('bare', 'dining', [{ eventType: 'visit', reward: 10 }]);
  all = principal([cafe.brandId, diner.brandId, games.brandId, bare.brandId]);
  const cookie = await createPerkViaAdmin(platform, cafe.brandId, { name: 'Cookie', cost: 100, category: 'food' });
  const mug = await createPerkViaAdmin(platform, cafe.brandId, { name: 'Mug', cost: 300, category: 'merch' });
  const hoodie = await createPerkViaAdmin(platform, cafe.brandId, { name: 'Hoodie', cost: 2000, category: 'merch' });
  const skin = await createPerkViaAdmin(platform, games.brandId, { name: 'Skin', cost: 300, maxSupply: 1 });
  Object.assign(perk, { Cookie: cookie.perkId, Mug: mug.perkId, Hoodie: hoodie.perkId, Skin: skin.perkId });

  await event(games, at(-40), 'earn', NOAH);
  await event(cafe, at(-10), 'purchase', NOAH);
  await event(cafe, at(-9), 'purchase', NOAH);
  await event(diner, at(-5), 'order', 'zoe@example.com');
  await event(cafe, at(-3), 'purchase', MIA);
  await checkin(at(-3, 1), MIA);
  await checkin(at(-2), MIA);
  await checkin(at(-1), MIA);
  await waitForMintsSettled(platform);
  await event(games, at(0, -120), 'earn', NOAH);
  await waitForMintsSettled(platform);
  await redeem(at(0), cafe, cookie.uuid, MIA);
  await redeem(at(0, 1), cafe, cookie.uuid, NOAH);
  await redeem(at(0, 2), games, skin.uuid, NOAH);
  platform.clock.set(at(0, 5));
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

type Deal = { id: number; name: string; score: number; affordable: boolean | null; missingPts: string | null };
const names = (list: { name: string }[]) => list.map((x) => x.name);

describe('intentTerms', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['a MUG, please', ['mug', 'please']],
    ['Café au lait 2x caf\u00e9', ['café', 'lait']],
    ['go to the gym', ['the', 'gym']],
    [
      'one two three four five six seven eight nine ten eleven',
      ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'],
    ],
  ] as const)('%s → %j', (text, terms) => {
    expect(intentTerms(text)).toEqual(terms);
  });
});

describe('find_deals', () => {
  it('unsigned: available perks by 30-day popularity (Cookie 2 of max 2), then cheaper; Skin is sold out', async () => {
    const r = await call('find_deals', { query: {} });
    expect(names(r.deals)).toEqual(['Cookie', 'Mug', 'Hoodie']);
    expect(r.deals.map((d: Deal) => d.score)).toEqual([100, 0, 0]);
    expect(r.deals[0]).toMatchObject({
      brandName: 'cafe',
      brandCategory: 'dining',
      redemptions30d: 2,
      affordable: null,
      missingPts: null,
    });
    expect(r).toMatchObject({ personalised: false, balance: null, candidates: 3 });
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 2 });
  });

  it('intent, budget, category and limit filter; nothing left → empty with a note', async () => {
    expect(names((await call('find_deals', { query: { intent: 'a MUG, please' } })).deals)).toEqual(['Mug']);
    expect(names((await call('find_deals', { query: { intent: 'merch' } })).deals)).toEqual(['Mug', 'Hoodie']);
    expect(names((await call('find_deals', { query: { budget: '200' } })).deals)).toEqual(['Cookie']);
    expect(names((await call('find_deals', { query: { limit: '1' } })).deals)).toEqual(['Cookie']);
    const none = await call('find_deals', { query: { category: 'Gaming' } });
    expect(none.deals).toEqual([]);
    expect(none.basis).toMatchObject({ sampleSize: 0, note: 'No available perk matches these filters' });
  });

  it('signed with userId: 50 × affordability + 30 × popularity + 20 × novelty on the spendable balance (132)', async () => {
    const r = await call('find_deals', { query: { userId: MIA } }, all);
    expect(r).toMatchObject({ personalised: true, userId: MIA, balance: '132' });
    // Cookie is left out: mia holds 1 of 1 (its per-member limit). Mug 50 × 0.44 + 0 + 20; Hoodie 50 × 0.066 + 0 + 20.
    expect(r.deals.map((d: Deal) => [d.name, d.score, d.affordable, d.missingPts])).toEqual([
      ['Mug', 42, false, '168'],
      ['Hoodie', 23.3, false, '1868'],
    ]);
    expect(r.deals.map((d: { alreadyRedeemed: boolean }) => d.alreadyRedeemed)).toEqual([false, false]);
  });

  it('never offers a perk the member already holds at its per-member limit: redeem_perk would answer 409', async () => {
    // The rule itself: redeeming the Cookie again is refused…
    platform.clock.set(at(0, 5));
    const again = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: cafe.brandId, perkId: perk.Cookie, userIdentifier: MIA, platform: 'web' },
      cafe.securityKey,
    );
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({ code: 'CLAIM_LIMIT_REACHED' });
    // …so no deal offers it to mia, with or without intent, while everyone else still sees it.
    const cookie = await call('find_deals', { query: { userId: MIA, intent: 'cookie' } }, all);
    expect(cookie.deals).toEqual([]);
    expect(cookie.basis.note).toMatch(/already holds the per-member maximum of every matching perk \(1\)/);
    expect(names((await call('find_deals', { query: { userId: NOAH, intent: 'cookie' } }, all)).deals)).toEqual([]);
    expect(names((await call('find_deals', { query: { intent: 'cookie' } })).deals)).toEqual(['Cookie']);
    const zoe = await call('find_deals', { query: { userId: 'zoe@example.com', intent: 'cookie' } }, all);
    expect(zoe.deals.map((d: Deal) => [d.name, d.affordable, d.missingPts])).toEqual([['Cookie', true, '0']]);
    // The same for stack_commerce: mia can afford the Cookie but cannot redeem it again.
    const stack = await call(
      'stack_commerce',
      { query: { brandId: cafe.brandId, purchaseAmount: '20', userId: MIA } },
      all,
    );
    expect(names(stack.perks.affordableNow)).toEqual([]);
    expect(names(stack.perks.unlockedByThisPurchase)).toEqual(['Mug']);
  });

  it('userId unsigned → 401; a key without brands → 403; a member unknown at the key’s brands → 404', async () => {
    await expect(invoke('find_deals', { query: { userId: MIA } })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(invoke('find_deals', { query: { userId: MIA } }, principal([]))).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(invoke('find_deals', { query: { userId: MIA } }, principal([diner.brandId]))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('bad limit, budget, category or userId → 400 naming the field', async () => {
    for (const [query, field] of [
      [{ limit: '0' }, /limit/],
      [{ limit: '51' }, /limit/],
      [{ budget: '-1' }, /budget/],
      [{ budget: 'lots' }, /budget/],
      [{ category: 'pets' }, /category/],
      [{ userId: 'nobody' }, /userId/],
      [{ intent: 'x'.repeat(201) }, /intent/],
    ] as const) {
      const error = await invoke('find_deals', { query }, all).catch((e: unknown) => e);
      expect(error, JSON.stringify(query)).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(error)).toMatch(field);
    }
  });

  it('over HTTP: unsigned is public, signed is personalised', async () => {
    const key = await createFixtureKey(platform, { name: 'deals', brandIds: [cafe.brandId], ratePerMinute: 1000 });
    const open = await agentRequest(platform, { method: 'GET', path: '/deals' });
    expect(open.status).toBe(200);
    expect(open.body.data.personalised).toBe(false);
    const refused = await agentRequest(platform, { method: 'GET', path: '/deals', query: { userId: MIA } });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('auth_required');
    const signed = await agentRequest(platform, { method: 'GET', path: '/deals', query: { userId: MIA }, key });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body.data).toMatchObject({ personalised: true, balance: '132' });
  });
});

describe('route_commerce', () => {
  it('ranks brands by their purchase rule for 20 USD: games 300, cafe 200, diner 150; bare has none', async () => {
    const r = await call('route_commerce', { query: { purchaseAmount: '20' } });
    expect(
      r.routes.map((x: { name: string; rewardPts: string; cashbackPercent: number }) => [
        x.name,
        x.rewardPts,
        x.cashbackPercent,
      ]),
    ).toEqual([
      ['games', '300', 1.5],
      ['cafe', '200', 1],
      ['diner', '150', 0.75],
    ]);
    expect(r.routes[1]).toMatchObject({
      rank: 2,
      eventType: 'purchase',
      rewardUsd: '0.200',
      acceptedLast30d: 3,
      member: null,
      totalPts: '200',
    });
    expect(r.routes[0].acceptedLast30d).toBe(1); // noah −2h (−40d is outside)
    expect(r).toMatchObject({
      purchaseAmountUsd: '20.00',
      ptsPerUsd: 1000,
      brandsConsidered: 4,
      withoutPurchaseRule: 1,
      personalised: false,
    });
    expect(r.basis.sampleSize).toBe(5); // 1 + 3 + 1
  });

  it('category and intent narrow the brands; none left → a note', async () => {
    const dining = await call('route_commerce', { query: { purchaseAmount: '20', category: 'dining' } });
    expect(names(dining.routes)).toEqual(['cafe', 'diner']);
    const games_ = await call('route_commerce', { query: { purchaseAmount: '20', intent: 'video games' } });
    expect(names(games_.routes)).toEqual(['games']);
    const bareOnly = await call('route_commerce', { query: { purchaseAmount: '20', intent: 'bare' } });
    expect(bareOnly.routes).toEqual([]);
    expect(bareOnly.basis.note).toBe('None of the matching brands has an active purchase rule');
    const nothing = await call('route_commerce', { query: { purchaseAmount: '20', intent: 'shoes' } });
    expect(nothing.basis).toMatchObject({ sampleSize: 0, note: 'No brand matches the category and intent' });
  });

  it('signed with userId: the member’s own totals — noah is capped at cafe and in cooldown at games', async () => {
    const noah = await call('route_commerce', { query: { purchaseAmount: '20', userId: NOAH } }, all);
    expect(noah.routes.map((x: { name: string; totalPts: string }) => [x.name, x.totalPts])).toEqual([
      ['diner', '150'],
      ['cafe', '10'], // capped purchase 0 + today's check-in 10 × 1
      ['games', '0'],
    ]);
    expect(noah.routes[1].member).toMatchObject({
      purchaseEligible: false,
      reason: 'already claimed 2 of 2 times',
      purchasePts: '0',
      streak: { current: 0, multiplier: 1, checkedInToday: false, checkinBonusPts: '10' },
    });
    expect(noah.routes[2].member.reason).toBe(`in cooldown until ${at(1, -120).toISOString()}`);
    const mia = await call('route_commerce', { query: { purchaseAmount: '20', userId: MIA } }, all);
    // games 300; cafe 200 + ⌊10 × 1.25⌋ (streak 3); diner 150.
    expect(mia.routes.map((x: { name: string; totalPts: string }) => [x.name, x.totalPts])).toEqual([
      ['games', '300'],
      ['cafe', '212'],
      ['diner', '150'],
    ]);
    // Outside the key's brands there is no member data.
    const cafeOnly = await call(
      'route_commerce',
      { query: { purchaseAmount: '20', userId: MIA } },
      principal([cafe.brandId]),
    );
    expect(cafeOnly.routes.find((x: { name: string }) => x.name === 'games').member).toBeNull();
  });

  it('userId unsigned → 401; bad purchaseAmount → 400', async () => {
    await expect(invoke('route_commerce', { query: { purchaseAmount: '20', userId: MIA } })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    for (const purchaseAmount of [undefined, '0', '1.234', '-5', 'ten']) {
      const error = await invoke('route_commerce', { query: { purchaseAmount } }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(error)).toMatch(/purchaseAmount/);
    }
  });
});

describe('stack_commerce', () => {
  it('mia at cafe for 20 USD: purchase 200 + check-in 12 = 212; 132 → 344 unlocks the Mug', async () => {
    const r = await call(
      'stack_commerce',
      { query: { brandId: cafe.brandId, purchaseAmount: '20', userId: MIA } },
      all,
    );
    expect(r.purchase).toMatchObject({
      eventType: 'purchase',
      rewardPts: '200',
      rewardUsd: '0.200',
      cashbackPercent: 1,
      eligible: true,
      reason: null,
      previousClaims: 1,
    });
    expect(r.streak).toEqual({ current: 3, multiplier: 1.25, checkedInToday: false, checkinBonusPts: '12' });
    expect(r.earn).toEqual({ purchasePts: '200', checkinBonusPts: '12', totalPts: '212', totalUsd: '0.212' });
    expect(r.balance).toEqual({ now: '132', afterPurchase: '344' });
    expect(names(r.perks.affordableNow)).toEqual([]); // the Cookie: mia holds 1 of 1 already
    expect(names(r.perks.unlockedByThisPurchase)).toEqual(['Mug']);
    expect(r.perks.next).toMatchObject({ name: 'Hoodie', missingPts: '1656' });
    expect(r.basis.sampleSize).toBe(5); // 2 active rules + 3 available perks
  });

  it('a capped member earns the check-in only; a new member starts from zero; a brand without a purchase rule says so', async () => {
    const noah = await call(
      'stack_commerce',
      { query: { brandId: cafe.brandId, purchaseAmount: '20', userId: NOAH } },
      all,
    );
    expect(noah.purchase).toMatchObject({ eligible: false, reason: 'already claimed 2 of 2 times', previousClaims: 2 });
    expect(noah.earn).toMatchObject({ purchasePts: '0', checkinBonusPts: '10', totalPts: '10' });
    const fresh = await call(
      'stack_commerce',
      { query: { brandId: cafe.brandId, purchaseAmount: '5', userId: 'new@example.com' } },
      all,
    );
    expect(fresh.earn.totalPts).toBe('210');
    expect(fresh.balance).toEqual({ now: '0', afterPurchase: '210' });
    expect(fresh.purchase.cashbackPercent).toBe(4); // 200 ÷ 5000
    expect(names(fresh.perks.unlockedByThisPurchase)).toEqual(['Cookie']);
    expect(fresh.perks.next).toMatchObject({ name: 'Mug', missingPts: '90' });
    const b = await call('stack_commerce', { query: { brandId: bare.brandId, purchaseAmount: '5', userId: MIA } }, all);
    expect(b.purchase).toBeNull();
    expect(b.earn.totalPts).toBe('0');
    expect(b.basis.note).toMatch(/no active purchase rule/);
  });

  it('403 for a brand the key does not act for; 404 for an unknown brand; 400 naming the field', async () => {
    await expect(
      invoke(
        'stack_commerce',
        { query: { brandId: cafe.brandId, purchaseAmount: '5', userId: MIA } },
        principal([diner.brandId]),
      ),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      invoke(
        'stack_commerce',
        { query: { brandId: UNKNOWN_BRAND, purchaseAmount: '5', userId: MIA } },
        principal([UNKNOWN_BRAND]),
      ),
    ).rejects.toMatchObject({ code: 'BRAND_NOT_FOUND' });
    for (const [query, field] of [
      [{ brandId: 'cafe', purchaseAmount: '5', userId: MIA }, /brandId/],
      [{ brandId: cafe.brandId, purchaseAmount: '0', userId: MIA }, /purchaseAmount/],
      [{ brandId: cafe.brandId, purchaseAmount: '5', userId: 'mia' }, /userId/],
      [{ brandId: cafe.brandId, purchaseAmount: '5' }, /userId/],
    ] as const) {
      const error = await invoke('stack_commerce', { query }, all).catch((e: unknown) => e);
      expect(error, JSON.stringify(query)).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(error)).toMatch(field);
    }
  });

  it('over HTTP: unsigned → 401 auth_required', async () => {
    const res = await agentRequest(platform, {
      method: 'GET',
      path: '/commerce/stack',
      query: { brandId: cafe.brandId, purchaseAmount: '5', userId: MIA },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('auth_required');
  });
});

describe('the event judge decides what a purchase pays', () => {
  it('a purchase rule at its global limit pays no member: route_commerce and stack_commerce say so, as the event would be refused', async () => {
    const trip = await platform.createBrand({
      name: 'trip',
      domain: 'trip.example.com',
      rules: [{ eventType: 'purchase', rewardAmount: 500, cooldownHours: 0, maxClaims: -1, maxTotal: 1 }],
    });
    await platform.deps.db
      .updateTable('brands')
      .set({ category: 'travel' })
      .where('address', '=', trip.brandId)
      .execute();
    platform.services.brands.invalidate(trip.brandId);
    await event(trip, at(0, 3), 'purchase', 'zoe@example.com'); // the one claim the rule allows
    platform.clock.set(at(0, 5));
    // The event path itself refuses mia's purchase…
    const refusal = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: trip.brandId, eventType: 'purchase', userEmail: MIA, domain: 'trip.example.com', metadata: {} },
      trip.securityKey,
    );
    expect(refusal.body).toMatchObject({ code: 'MAX_TOTAL_CLAIMS_REACHED' });
    // …so neither tool promises her the 500 pts.
    const key = principal([trip.brandId]);
    const route = await call(
      'route_commerce',
      { query: { purchaseAmount: '20', category: 'travel', userId: MIA } },
      key,
    );
    expect(route.routes.map((x: { name: string; totalPts: string }) => [x.name, x.totalPts])).toEqual([['trip', '0']]);
    expect(route.routes[0].member).toMatchObject({
      purchaseEligible: false,
      reason: 'the rule reached its limit of 1 claims for all members',
      purchasePts: '0',
    });
    const stack = await call(
      'stack_commerce',
      { query: { brandId: trip.brandId, purchaseAmount: '20', userId: MIA } },
      key,
    );
    expect(stack.purchase).toMatchObject({ eligible: false, previousClaims: 0 });
    expect(stack.earn).toMatchObject({ purchasePts: '0', totalPts: '0' });
  });
});
