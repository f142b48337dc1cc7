import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';
import { growthTools } from './growth.tools.ts';
import { createCategorisedBrand, createPerkViaAdmin, sendBrandEvent, toolCaller } from './tool-test-support.ts';

// Real events (brand-signed manual events), a real redemption on anvil, brand categories as onboarding sets
// them. Every expected number is computed by hand from this timeline (now = T0 + 1 min; 30d window):
//  shop1 (retail, earn 100): −5d ann, −3d ann, −2d ben; T0 ann redeems Sticker (50)
//  shop2 (retail, earn 40):  −1d cat; −40d dan (outside the window)
//  idle  (retail): nothing                 cafe (dining, earn 10): −40d eve only
// Retail pool: 3 members (ann, ben, cat), 4 events, 340 pts issued, 1 redeemer, 50 pts redeemed.

const DAY = 86_400_000;
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
const at = (days: number, minutes = 0) => new Date(T0.getTime() + days * DAY + minutes * 60_000);
let platform: TestPlatform;
const { call, invoke } = toolCaller(
  () => platform,
  () => growthTools(platform.services.agent.toolDeps),
);

const earn = (brand: CreatedBrand, when: Date, identityKey: string) =>
  sendBrandEvent(platform, brand, when, 'earn', identityKey);
const brandOf = (name: string, category: string, reward: number) =>
  createCategorisedBrand(platform, name, category, [{ eventType: 'earn', reward }]);

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    // Formulas on data the tests change and a clock they move: every answer computed on its call (the
    // answer store is tested in answer-cache.test.ts and agent-tools.http.test.ts).
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
  });
  platform.clock.set(at(-60));
  const shop1 = await brandOf('shop1', 'retail', 100);
  const shop2 = await brandOf('shop2', 'retail', 40);
  await brandOf('idle', 'retail', 5);
  const cafe = await brandOf('cafe', 'dining', 10);
  const sticker = await createPerkViaAdmin(platform, shop1.brandId, { name: 'Sticker', cost: 50 });
  await earn(shop2, at(-40), 'dan@example.com');
  await earn(cafe, at(-40, 1), 'eve@example.com');
  await earn(shop1, at(-5), 'ann@example.com');
  await earn(shop1, at(-3), 'ann@example.com');
  await earn(shop1, at(-2), 'ben@example.com');
  await earn(shop2, at(-1), 'cat@example.com');
  await waitForMintsSettled(platform);
  platform.clock.set(T0);
  const res = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: shop1.brandId, perkId: sticker.uuid, userIdentifier: 'ann@example.com', platform: 'web' },
    shop1.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  platform.clock.set(at(0, 1));
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('estimate_roi', () => {
  it('retail: the pooled last 30 days of active retail brands, scaled to 300 customers at 20 USD (hand-computed)', async () => {
    const r = await call('estimate_roi', {
      body: { industry: 'Retail', monthlyCustomers: 300, averageOrderValue: 20 },
    });
    expect(r.category).toBe('retail');
    expect(r.input).toEqual({ monthlyCustomers: 300, averageOrderValueUsd: '20.00', monthlySalesUsd: '6000.00' });
    expect(r.peers).toEqual({
      brandsInCategory: 3,
      activeBrands: 2,
      members: 3,
      acceptedEvents: 4,
      ptsIssued: '340',
      redeemers: 1,
      ptsRedeemed: '50',
    });
    // 4 ÷ 3, 340 ÷ 3, 1 ÷ 3, 50 ÷ 3.
    expect(r.rates).toEqual({
      eventsPerMember: 1.33,
      ptsIssuedPerMember: 113.33,
      redemptionRatePercent: 33.3,
      ptsRedeemedPerMember: 16.67,
    });
    expect(r.projection).toEqual({
      members: 300,
      acceptedEvents: 400, // 300 × 4 ÷ 3
      ptsIssued: '34000', // 300 × 340 ÷ 3
      rewardCostUsd: '34.000',
      redeemers: 100,
      ptsRedeemed: '5000',
      redeemedValueUsd: '5.000',
      rewardCostPercentOfSales: 0.57, // 34 000 ÷ (6000 × 1000) = 0.567 %
      breakEven: { extraOrdersPerMonth: 2, salesUpliftPercent: 0.57 }, // ⌈34 ÷ 20⌉; ⌈3400 × 10⁴ ÷ 600 000⌉ ÷ 100
    });
    expect(r.ptsPerUsd).toBe(1000);
    expect(r.basis).toMatchObject({ period: '30d', sampleSize: 3, to: at(0, 1).toISOString() });
    expect(r.basis.note).toBeUndefined();
  });

  it('rounds down pts and up costs: 7 customers at 0.99 USD', async () => {
    const r = await call('estimate_roi', {
      body: { industry: 'retail', monthlyCustomers: 7, averageOrderValue: 0.99 },
    });
    // ⌊7 × 340 ÷ 3⌋ = 793 pts → 79.3 cents → 80 cents; 80 ÷ 99 → 1 order; sales 6.93 USD; 80 ÷ 693 = 11.544 % → 11.55.
    expect(r.projection).toMatchObject({
      ptsIssued: '793',
      rewardCostUsd: '0.793',
      breakEven: { extraOrdersPerMonth: 1, salesUpliftPercent: 11.55 },
    });
    expect(r.input.monthlySalesUsd).toBe('6.93');
  });

  it('answers honestly without peers: no category, no brand of it, or no active member → nulls, sampleSize 0, a note', async () => {
    const cases = [
      ['bakery', /not a brand category/],
      ['gaming', /No brand of category gaming/],
      ['dining', /1 dining brand\(s\) had no active member/],
    ] as const;
    for (const [industry, note] of cases) {
      const r = await call('estimate_roi', { body: { industry, monthlyCustomers: 100, averageOrderValue: 10 } });
      expect(r.rates, industry).toBeNull();
      expect(r.projection, industry).toBeNull();
      expect(r.basis.sampleSize).toBe(0);
      expect(r.basis.note).toMatch(note);
      expect(r.input.monthlySalesUsd).toBe('1000.00');
    }
  });

  it('rejects bad bodies with 400 naming the field', async () => {
    const ok = { industry: 'retail', monthlyCustomers: 10, averageOrderValue: 10 };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...ok, industry: '' }, /industry/],
      [{ ...ok, industry: undefined }, /industry/],
      [{ ...ok, monthlyCustomers: 0 }, /monthlyCustomers/],
      [{ ...ok, monthlyCustomers: 1.5 }, /monthlyCustomers/],
      [{ ...ok, monthlyCustomers: '10' }, /monthlyCustomers/],
      [{ ...ok, monthlyCustomers: 100_000_001 }, /monthlyCustomers/],
      [{ ...ok, averageOrderValue: 0 }, /averageOrderValue/],
      [{ ...ok, averageOrderValue: -1 }, /averageOrderValue/],
      [{ ...ok, averageOrderValue: 1.234 }, /averageOrderValue/],
      [{ ...ok, averageOrderValue: 1_000_001 }, /averageOrderValue/],
    ];
    for (const [body, field] of bad) {
      const error = await invoke('estimate_roi', { body }).catch((e: unknown) => e);
      expect(error, JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(error), JSON.stringify(body)).toMatch(field);
    }
  });
});

// Issue 23: travel (trip, earn 100): −4d tia and tom earn; T0 + 2 min tia redeems the Postcard (10), and so
// does eve, who earned only at the cafe. The pool's redemption rate counts Trip's members only: 1 of 2.
describe('estimate_roi counts only redeemers who are members', () => {
  beforeAll(async () => {
    const trip = await brandOf('trip', 'travel', 100);
    const postcard = await createPerkViaAdmin(platform, trip.brandId, { name: 'Postcard', cost: 10 });
    await earn(trip, at(-4), 'tia@example.com');
    await earn(trip, at(-4, 1), 'tom@example.com');
    await waitForMintsSettled(platform);
    for (const [i, user] of ['tia@example.com', 'eve@example.com'].entries()) {
      platform.clock.set(at(0, 2 + i));
      const res = await platform.signedPost(
        '/services/perks/redeem',
        { brandId: trip.brandId, perkId: postcard.uuid, userIdentifier: user, platform: 'web' },
        trip.securityKey,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    platform.clock.set(at(0, 5));
  }, 120_000);

  afterAll(() => {
    platform.clock.set(at(0, 1));
  });

  it('a visitor who earned elsewhere and spends here is not a redeemer of the pool', async () => {
    const r = await call('estimate_roi', {
      body: { industry: 'travel', monthlyCustomers: 100, averageOrderValue: 10 },
    });
    expect(r.rates).toMatchObject({ redemptionRatePercent: 50 });
  });
});

describe('request_growth_info', () => {
  const lead = {
    businessName: 'Corner Bakery',
    contactEmail: 'Owner@Corner-Bakery.example.com',
    website: 'https://corner-bakery.example.com',
    industry: 'Dining',
  };

  it('stores a lead; the same contact and business within 24 h is the same lead; never echoes the contact', async () => {
    platform.clock.set(at(0, 2));
    const first = await call('request_growth_info', { body: lead });
    expect(first).toMatchObject({ duplicate: false, category: 'dining', brandsInCategory: 1 });
    expect(first.leadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(first)).not.toMatch(/corner-bakery|Owner/i);
    platform.clock.set(at(0, 60));
    const again = await call('request_growth_info', {
      body: { ...lead, businessName: 'corner bakery', contactEmail: 'owner@corner-bakery.example.com' },
    });
    expect(again).toMatchObject({ leadId: first.leadId, duplicate: true, receivedAt: first.receivedAt });
    const rows = await platform.deps.db.selectFrom('growth_leads').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      business_name: 'Corner Bakery',
      contact_email: 'owner@corner-bakery.example.com',
      website: 'https://corner-bakery.example.com',
      industry: 'Dining',
      request_count: 2,
    });
    // 24 h after the last request: a new lead.
    platform.clock.set(at(1, 61));
    const later = await call('request_growth_info', { body: lead });
    expect(later.duplicate).toBe(false);
    expect(later.leadId).not.toBe(first.leadId);
    // Another business of the same contact is another lead.
    const other = await call('request_growth_info', { body: { ...lead, businessName: 'Corner Cafe' } });
    expect(other.duplicate).toBe(false);
    platform.clock.set(at(0, 1));
  });

  it('two identical requests at once make one lead', async () => {
    const body = { ...lead, contactEmail: 'race@example.com', industry: 'bakery' };
    const [a, b] = await Promise.all([call('request_growth_info', { body }), call('request_growth_info', { body })]);
    expect(a.leadId).toBe(b.leadId);
    expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
    expect(a).toMatchObject({ category: null, brandsInCategory: null });
  });

  it('rejects bad fields with 400 naming the field', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...lead, contactEmail: 'not-an-email' }, /contactEmail/],
      [{ ...lead, contactEmail: undefined }, /contactEmail/],
      [{ ...lead, businessName: '' }, /businessName/],
      [{ ...lead, businessName: 'x'.repeat(201) }, /businessName/],
      [{ ...lead, website: 'ftp://corner.example.com' }, /website/],
      [{ ...lead, website: 'corner bakery' }, /website/],
      [{ ...lead, industry: '' }, /industry/],
    ];
    for (const [body, field] of bad) {
      const error = await invoke('request_growth_info', { body }).catch((e: unknown) => e);
      expect(error, JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(error), JSON.stringify(body)).toMatch(field);
    }
  });

  it('operators read leads at GET /admin/growth-leads (admin token only), newest first', async () => {
    const unauthorized = await platform.get('/admin/growth-leads');
    expect(unauthorized.status).toBe(401);
    const res = await platform.get('/admin/growth-leads?limit=2', {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.leads).toHaveLength(2);
    expect(res.body.leads[0]).toMatchObject({ contactEmail: expect.any(String), requestCount: expect.any(Number) });
    const all = await platform.get('/admin/growth-leads', { authorization: `Bearer ${platform.deps.adminToken}` });
    const created = all.body.leads.map((l: { createdAt: string }) => l.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    const bad = await platform.get('/admin/growth-leads?limit=501', {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(bad.status).toBe(400);
  });

  it('operators list leads with `pts lead list` (table or --json)', async () => {
    const run = async (argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(argv, {
        env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
        stdout: {
          write: (text: string) => {
            stdout += text;
            return true;
          },
        },
        stderr: {
          write: (text: string) => {
            stderr += text;
            return true;
          },
        },
      });
      return { code, stdout, stderr };
    };
    const json = await run(['lead', 'list', '--json', '--limit', '1']);
    expect(json.code, json.stderr).toBe(0);
    const leads = JSON.parse(json.stdout);
    expect(leads).toHaveLength(1);
    expect(leads[0]).toMatchObject({ businessName: expect.any(String), contactEmail: expect.stringContaining('@') });
    const table = await run(['lead', 'list', '--since', at(0).toISOString()]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/BUSINESS\s+CONTACT/);
    expect(table.stdout).toContain('owner@corner-bakery.example.com');
    const bad = await run(['lead', 'list', '--limit', '0']);
    expect(bad.code).toBe(2);
    const badSince = await run(['lead', 'list', '--since', 'yesterday']);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toMatch(/since/);
  });

  it('is public over HTTP (no signature) in the agent envelope', async () => {
    const res = await agentRequest(platform, {
      method: 'POST',
      path: '/growth/request-info',
      body: { ...lead, contactEmail: 'http@example.com' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta.tool).toBe('request_growth_info');
    // Counted against the agent API's per-IP limit of public calls (spec 8: 100 a minute).
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    const next = await agentRequest(platform, {
      method: 'POST',
      path: '/growth/request-info',
      body: { ...lead, contactEmail: 'http@example.com' },
    });
    expect(next.body.data).toMatchObject({ leadId: res.body.data.leadId, duplicate: true });
    expect(Number(next.headers.get('x-ratelimit-remaining'))).toBeLessThan(
      Number(res.headers.get('x-ratelimit-remaining')),
    );
    const invalid = await agentRequest(platform, {
      method: 'POST',
      path: '/growth/estimate-roi',
      body: { industry: 'retail', monthlyCustomers: -1, averageOrderValue: 5 },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({
      code: 'validation',
      message: expect.stringMatching(/monthlyCustomers/),
    });
  });
});
