import type { CreatedBrand } from '@pts/shared';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentTool } from '../agent-tool.ts';
import { discoveryTools, normalizeBrandQuery } from './discovery.tools.ts';
import { createPerkViaAdmin, toolCaller, UNKNOWN_BRAND } from './tool-test-support.ts';

// The discovery tools on the real platform: brands, rules and perks made through the real services and the
// admin API, earnings through the real event API, perk supply read from anvil.

let platform: TestPlatform;
let shop: CreatedBrand;
let cafe: CreatedBrand;
let bare: CreatedBrand;
let tools: AgentTool[];
let cheapPerk: { perkId: number; uuid: string };
let dearPerk: { perkId: number; uuid: string };
const { call, invoke } = toolCaller(
  () => platform,
  () => tools,
);
const createPerk = (brand: CreatedBrand, body: Record<string, unknown>) =>
  createPerkViaAdmin(platform, brand.brandId, body);

async function earn(brand: CreatedBrand, identityKey: string, times: number) {
  for (let i = 0; i < times; i++) {
    platform.clock.advance(61_000);
    const res = await platform.signedPost(
      '/pts-api/manual-event',
      {
        brandId: brand.brandId,
        eventType: 'earn',
        userEmail: identityKey,
        domain: 'shop.example.com',
        metadata: { i },
      },
      brand.securityKey,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  tools = discoveryTools(platform.services.agent.toolDeps);
  shop = await platform.createBrand({
    name: 'Shop Co',
    domain: 'shop.example.com',
    rules: [
      { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_visit', rewardAmount: 5, cooldownHours: 24, maxClaims: 3, maxTotal: 10 },
    ],
  });
  platform.clock.advance(1_000); // brands list oldest first
  cafe = await platform.createBrand({
    name: 'Corner Cafe',
    domain: 'cafe.example.org',
    rules: [{ eventType: 'coffee', rewardAmount: 10, cooldownHours: 1, maxClaims: -1 }],
  });
  platform.clock.advance(1_000);
  bare = await platform.createBrand({ name: 'Bare Brand', domain: 'bare.example.net' });
  await platform.database.db
    .updateTable('brands')
    .set({ verified_domains: JSON.stringify(['coffee-corner.example']) })
    .where('address', '=', cafe.brandId)
    .execute();
  cheapPerk = await createPerk(shop, { cost: 50, maxSupply: 2, category: 'merch' });
  dearPerk = await createPerk(shop, { cost: 500, category: 'travel' });
  await createPerk(cafe, { cost: 30, category: 'merch' });
  await earn(shop, 'alice@example.com', 3);
  await earn(shop, 'bob@example.com', 1);
  await waitForMintsSettled(platform);
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('list_brands', () => {
  it('lists every brand oldest first with its program size; pages with limit and offset', async () => {
    const all = await call('list_brands', {});
    expect(all.total).toBe(3);
    expect(all.limit).toBe(50);
    expect(all.brands.map((b: { brandId: string }) => b.brandId)).toEqual([shop.brandId, cafe.brandId, bare.brandId]);
    expect(all.brands[0]).toMatchObject({
      name: 'Shop Co',
      domain: 'shop.example.com',
      category: null,
      acceptingEvents: true,
      activeEvents: 2,
      activePerks: 2,
    });
    // No active rule: listed, but it does not reward events.
    expect(all.brands[2]).toMatchObject({ acceptingEvents: false, activeEvents: 0, activePerks: 0 });
    const page = await call('list_brands', { query: { limit: '1', offset: '1' } });
    expect(page.brands.map((b: { brandId: string }) => b.brandId)).toEqual([cafe.brandId]);
    expect(page.total).toBe(3);
    const past = await call('list_brands', { query: { offset: '10' } });
    expect(past.brands).toEqual([]);
    expect(past.note).toMatch(/past the last of 3/);
  });

  it('refuses limits outside 1–200, negative offsets and unknown categories with 400', async () => {
    for (const query of [{ limit: '201' }, { limit: '0' }, { limit: 'ten' }, { offset: '-1' }, { category: 'cars' }]) {
      await expect(invoke('list_brands', { query })).rejects.toMatchObject({ status: 400 });
    }
    expect((await call('list_brands', { query: { limit: '200' } })).limit).toBe(200);
  });

  it('filters by category once brands carry one; uncategorised brands only appear unfiltered', async () => {
    const none = await call('list_brands', { query: { category: 'dining' } });
    expect(none).toMatchObject({ brands: [], total: 0 });
    expect(none.note).toMatch(/no brand has category dining/);
    // The column onboarding adds (agent-program's migration), simulated here on this test's own database.
    await sql`alter table brands add column if not exists category text`.execute(platform.database.db);
    await sql`update brands set category = 'dining' where address = ${cafe.brandId}`.execute(platform.database.db);
    // As onboarding does after its write: brand reads are remembered until a brand change is announced.
    platform.services.changes.emit({ kind: 'brand', brandId: cafe.brandId });
    const dining = await call('list_brands', { query: { category: 'Dining' } });
    expect(dining.brands.map((b: { brandId: string }) => b.brandId)).toEqual([cafe.brandId]);
    expect(dining.brands[0].category).toBe('dining');
    expect(dining.total).toBe(1);
    expect((await call('list_brands', {})).total).toBe(3);
  });
});

describe('check_brand', () => {
  it('normalises URLs, domains, names and Brand IDs', () => {
    expect(normalizeBrandQuery('https://WWW.Shop.Example.com/cart?x=1')).toEqual({
      brandId: null,
      domain: 'www.shop.example.com',
      name: 'https://WWW.Shop.Example.com/cart?x=1',
    });
    expect(normalizeBrandQuery(' shop.example.com/path ').domain).toBe('shop.example.com');
    expect(normalizeBrandQuery('Corner Cafe')).toEqual({ brandId: null, domain: null, name: 'Corner Cafe' });
    expect(normalizeBrandQuery(shop.brandId.toUpperCase().replace('0X', '0x')).brandId).toBe(shop.brandId);
  });

  it('finds a brand by URL (subdomains included), verified domain, name and Brand ID', async () => {
    const byUrl = await call('check_brand', { query: { query: 'https://www.shop.example.com/checkout' } });
    expect(byUrl).toMatchObject({ found: true, runsProgram: true });
    expect(byUrl.matches).toEqual([expect.objectContaining({ brandId: shop.brandId, matchedBy: 'domain' })]);
    const verified = await call('check_brand', { query: { query: 'coffee-corner.example' } });
    expect(verified.matches).toEqual([expect.objectContaining({ brandId: cafe.brandId, matchedBy: 'domain' })]);
    const byName = await call('check_brand', { query: { query: 'corner cafe' } });
    expect(byName.matches).toEqual([expect.objectContaining({ brandId: cafe.brandId, matchedBy: 'name' })]);
    const byId = await call('check_brand', { query: { query: bare.brandId } });
    expect(byId).toMatchObject({ found: true, runsProgram: false });
    expect(byId.matches).toEqual([expect.objectContaining({ brandId: bare.brandId, matchedBy: 'brandId' })]);
  });

  it('answers found false for a look-alike domain and an unknown name', async () => {
    for (const query of ['https://evilshop.example.com', 'example.com', 'Nobody Inc']) {
      const result = await call('check_brand', { query: { query } });
      expect(result, query).toMatchObject({ found: false, runsProgram: false, matches: [] });
    }
  });

  it('refuses an empty or oversized query with 400', async () => {
    for (const query of [{}, { query: '  ' }, { query: 'x'.repeat(2049) }]) {
      await expect(invoke('check_brand', { query })).rejects.toMatchObject({ status: 400 });
    }
  });
});

describe('get_brand', () => {
  it('shows the active events with amounts, cooldowns and caps', async () => {
    const result = await call('get_brand', { params: { brandId: shop.brandId.toUpperCase().replace('0X', '0x') } });
    expect(result.brand).toMatchObject({ brandId: shop.brandId, name: 'Shop Co', acceptingEvents: true });
    const byType = Object.fromEntries(result.events.map((e: { eventType: string }) => [e.eventType, e]));
    expect(byType.earn).toMatchObject({
      rewardAmount: 100,
      cooldownHours: 0,
      // Unlimited reads -1, as every agent tool takes it; what is left of no cap is null.
      maxClaimsPerUser: -1,
      maxTotalClaims: -1,
      remainingTotalClaims: null,
    });
    expect(byType.daily_visit).toMatchObject({
      rewardAmount: 5,
      cooldownHours: 24,
      maxClaimsPerUser: 3,
      maxTotalClaims: 10,
      remainingTotalClaims: 10,
    });
    expect(byType.earn.eventId).toEqual(expect.any(String));
  });

  it('404 for an unknown brand, 400 for a malformed id', async () => {
    await expect(invoke('get_brand', { params: { brandId: UNKNOWN_BRAND } })).rejects.toMatchObject({ status: 404 });
    await expect(invoke('get_brand', { params: { brandId: 'shop' } })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe('get_brand_perks', () => {
  it("lists the brand's perks with live supply, filtered by category", async () => {
    const all = await call('get_brand_perks', { params: { brandId: shop.brandId } });
    expect(all.count).toBe(2);
    expect(all.perks.map((p: { uuid: string }) => p.uuid)).toEqual([cheapPerk.uuid, dearPerk.uuid]);
    expect(all.perks[0]).toMatchObject({
      cost: 50,
      maxSupply: 2,
      totalClaimed: 0,
      remainingSupply: 2,
      available: true,
    });
    // dearPerk has no supply cap: -1, as create_brand_perk takes it; nothing to count down (null).
    expect(all.perks[1]).toMatchObject({ maxSupply: -1, remainingSupply: null });
    const merch = await call('get_brand_perks', { params: { brandId: shop.brandId }, query: { category: 'MERCH' } });
    expect(merch.perks.map((p: { uuid: string }) => p.uuid)).toEqual([cheapPerk.uuid]);
    const none = await call('get_brand_perks', { params: { brandId: bare.brandId } });
    expect(none).toMatchObject({ perks: [], count: 0 });
  });

  it('404 for an unknown brand, 400 for a malformed category', async () => {
    await expect(invoke('get_brand_perks', { params: { brandId: UNKNOWN_BRAND } })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      invoke('get_brand_perks', { params: { brandId: shop.brandId }, query: { category: 'a b' } }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('browse_perks', () => {
  it('lists perks of every brand cheapest first, with maxPrice, category, brandId and limit', async () => {
    const all = await call('browse_perks', {});
    expect(all.perks.map((p: { cost: number }) => p.cost)).toEqual([30, 50, 500]);
    expect(all.perks[0]).toMatchObject({ brandId: cafe.brandId, brandName: 'Corner Cafe' });
    expect(all.limit).toBe(20);
    const cheap = await call('browse_perks', { query: { maxPrice: '50' } });
    expect(cheap.perks.map((p: { cost: number }) => p.cost)).toEqual([30, 50]);
    const merchAtShop = await call('browse_perks', { query: { category: 'merch', brandId: shop.brandId } });
    expect(merchAtShop.perks.map((p: { uuid: string }) => p.uuid)).toEqual([cheapPerk.uuid]);
    const one = await call('browse_perks', { query: { limit: '1' } });
    expect(one.count).toBe(1);
    const nothing = await call('browse_perks', { query: { maxPrice: '10' } });
    expect(nothing).toMatchObject({ perks: [], count: 0, note: expect.any(String) });
  });

  it('refuses limit > 100, negative or fractional maxPrice with 400; 404 for an unknown brandId', async () => {
    for (const query of [{ limit: '101' }, { maxPrice: '-1' }, { maxPrice: '1.5' }, { brandId: 'nope' }]) {
      await expect(invoke('browse_perks', { query })).rejects.toMatchObject({ status: 400 });
    }
    expect((await call('browse_perks', { query: { limit: '100' } })).limit).toBe(100);
    await expect(invoke('browse_perks', { query: { brandId: UNKNOWN_BRAND } })).rejects.toMatchObject({ status: 404 });
  });
});

describe('get_leaderboard', () => {
  it('ranks pts earned all time by default, masked; activity counts rewarded actions', async () => {
    const board = await call('get_leaderboard', { params: { brandId: shop.brandId } });
    expect(board).toMatchObject({ metric: 'pts_earned', period: 'all_time', total: 2 });
    expect(
      board.leaderboard.map((e: { userIdentifier: string; value: number; rank: number }) => [
        e.userIdentifier,
        e.value,
        e.rank,
      ]),
    ).toEqual([
      ['al***@example.com', 300, 1],
      ['bo***@example.com', 100, 2],
    ]);
    const activity = await call('get_leaderboard', {
      params: { brandId: shop.brandId },
      query: { metric: 'activity', period: 'monthly', limit: '1' },
    });
    expect(activity.leaderboard).toEqual([expect.objectContaining({ value: 3, rank: 1 })]);
    expect(activity.periodStart).toEqual(expect.any(String));
    const empty = await call('get_leaderboard', { params: { brandId: cafe.brandId } });
    expect(empty).toMatchObject({ leaderboard: [], total: 0, note: expect.any(String) });
  });

  it('refuses limit > 100, unknown metrics and periods with 400; 404 for an unknown brand', async () => {
    for (const query of [{ limit: '101' }, { metric: 'claims' }, { period: 'yearly' }]) {
      await expect(invoke('get_leaderboard', { params: { brandId: shop.brandId }, query })).rejects.toMatchObject({
        status: 400,
      });
    }
    await expect(invoke('get_leaderboard', { params: { brandId: UNKNOWN_BRAND } })).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe('remembered brand reads', () => {
  it('show a new brand and its new perk at the next call: each write announces its change', async () => {
    const listed = await call('list_brands', {});
    expect((await call('check_brand', { query: { query: 'late.example.io' } })).found).toBe(false);
    const late = await platform.createBrand({ name: 'Late Brand', domain: 'late.example.io' });
    expect((await call('list_brands', {})).total).toBe(listed.total + 1);
    expect((await call('check_brand', { query: { query: 'https://www.late.example.io/cart' } })).found).toBe(true);
    expect((await call('get_brand', { params: { brandId: late.brandId } })).brand.activePerks).toBe(0);
    expect((await call('browse_perks', { query: { brandId: late.brandId } })).count).toBe(0);
    await createPerk(late, { cost: 7, category: 'merch' });
    expect((await call('get_brand', { params: { brandId: late.brandId } })).brand.activePerks).toBe(1);
    expect((await call('browse_perks', { query: { brandId: late.brandId } })).count).toBe(1);
  });
});
