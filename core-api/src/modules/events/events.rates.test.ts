import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { createCampaign } from '../community/campaigns.service.ts';

// Rules that pay by value (issue 35 §1, docs/shop-program.md): the admin API sets a rate, events carry their
// value, the judge computes the reward exactly and keeps value and reward on the event. Runs on PGlite, and on
// PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'rates-admin-token-0123456789abcdef';
const HOUR = 3600 * 1000;
let platform: TestPlatform;
let brand: CreatedBrand;
let n = 0;
const nextEmail = () => `buyer${++n}@example.com`;

async function admin(method: 'PUT' | 'PATCH' | 'GET', path: string, body?: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

const purchase = (amount: string | undefined, overrides: Record<string, unknown> = {}) => ({
  brandId: brand.brandId,
  eventType: 'purchase',
  userEmail: nextEmail(),
  ...(amount === undefined ? {} : { value: { amount, currency: 'USD' } }),
  ...overrides,
});

const signed = (body: unknown) => platform.signedPost('/pts-api/manual-event', body, brand.securityKey);

async function storedEvent(eventId: string) {
  return platform.deps.db
    .selectFrom('events')
    .select(['reward_amount', 'value_minor', 'value_currency', 'status', 'reason'])
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'Rate Shop', domain: 'shop.example.com' });
  const rule = await admin('PUT', `/brands/${brand.brandId}/rules/purchase`, {
    rate: { pts: 2, per: '1.00', currency: 'USD' },
    minValue: '5.00',
    maxReward: 500,
    cooldownHours: 0,
    maxClaims: -1,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('rate rules on the admin API', () => {
  it('answers the rule with its rate, minimum and cap (fixed amount 0), and event-config shows them', async () => {
    const rules = await admin('GET', `/brands/${brand.brandId}/rules`);
    const rule = rules.body.rules.find((r: { eventType: string }) => r.eventType === 'purchase');
    expect(rule).toMatchObject({
      rewardAmount: 0,
      rate: { pts: 2, per: '1.00', currency: 'USD', rounding: 'down' },
      minValue: '5.00',
      maxReward: 500,
    });
    const config = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
    expect(config.body.events.find((e: { eventType: string }) => e.eventType === 'purchase')).toMatchObject({
      rate: { pts: 2, per: '1.00', currency: 'USD' },
      minValue: '5.00',
      maxReward: 500,
    });
  });

  it.each([
    [{ rate: { pts: 2, per: '1.00', currency: 'USD' }, rewardAmount: 5 }, 'send either rewardAmount or rate'],
    [{ minValue: '5.00', rewardAmount: 5 }, 'minValue applies only to a rate rule'],
    [{ rate: { pts: 2, per: '1.001', currency: 'USD' } }, 'USD has 2 decimal places'],
    [{ rate: { pts: 2, per: '0', currency: 'USD' } }, 'must be more than 0'],
    [{ cooldownHours: 1 }, 'send rewardAmount (fixed points) or rate'],
  ])('refuses %j with 400 saying %s', async (body, message) => {
    const answer = await admin('PUT', `/brands/${brand.brandId}/rules/other_purchase`, body);
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain(message);
  });

  it("refuses a rate in another currency than the brand's (400), and a currency change that would strand a rate (409)", async () => {
    const rate = await admin('PUT', `/brands/${brand.brandId}/rules/euro_purchase`, {
      rate: { pts: 1, per: '1.00', currency: 'EUR' },
    });
    expect(rate.status).toBe(400);
    expect(rate.body.error).toContain("is not the brand's currency USD");
    const change = await admin('PATCH', `/brands/${brand.brandId}`, { currency: 'EUR' });
    expect(change.status).toBe(409);
    expect(change.body.details).toMatchObject({ rateRules: ['purchase'] });
    expect((await admin('GET', `/brands/${brand.brandId}`)).body.brand.currency).toBe('USD');
  });
});

describe('OpenAPI', () => {
  it('documents the rate on rules and event-config, and the value on events', async () => {
    const doc = await platform.get('/openapi.json');
    const schemas = doc.body.components.schemas;
    const keys = (name: string) => Object.keys(schemas[name]?.properties ?? {});
    expect(keys('SetRuleRequestInput').length > 0 ? keys('SetRuleRequestInput') : keys('SetRuleRequest')).toEqual(
      expect.arrayContaining(['rate', 'minValue', 'maxReward']),
    );
    expect(keys('Rule')).toEqual(expect.arrayContaining(['rate', 'minValue', 'maxReward']));
    expect(keys('EventConfigItem')).toEqual(expect.arrayContaining(['rate', 'minValue', 'maxReward']));
    expect(keys('EventResponse')).toEqual(expect.arrayContaining(['rewardAmount', 'value']));
  });
});

describe('manual-event with a value', () => {
  it('pays floor(2 × $12.99) = 25 and keeps the value (minor units) and the reward on the event', async () => {
    const res = await signed(purchase('12.99'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.rewardAmount).toBe(25);
    expect(res.body.value).toEqual({ amount: '12.99', currency: 'USD' });
    expect(await storedEvent(res.body.eventId)).toMatchObject({
      reward_amount: 25n,
      value_minor: 1299n,
      value_currency: 'USD',
      status: 'accepted',
    });
  });

  it("echoes the value it earned on with the currency's decimals, and a repeated order answers the first value", async () => {
    const order = purchase('12.5', { externalId: `order-${n}` });
    const first = await signed(order);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ rewardAmount: 25, value: { amount: '12.50', currency: 'USD' } });
    const again = await signed({ ...order, value: { amount: '99.00', currency: 'USD' } });
    expect(again.body).toMatchObject({
      duplicate: true,
      eventId: first.body.eventId,
      rewardAmount: 25,
      value: { amount: '12.50', currency: 'USD' },
    });
  });

  it('caps a large order at maxReward', async () => {
    const res = await signed(purchase('1200.00'));
    expect(res.body.rewardAmount).toBe(500);
  });

  it('refuses a value under minValue (403 VALUE_BELOW_MINIMUM), recorded with the value', async () => {
    const res = await signed(purchase('4.99'));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'VALUE_BELOW_MINIMUM', details: { reason: 'below_min_value' } });
    expect(res.body.error).toContain('5.00 USD');
  });

  it('refuses an event without a value under a rate rule with 400 naming the rule and the shape to send', async () => {
    const res = await signed(purchase(undefined));
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ field: 'value', reason: 'value_required' });
    expect(res.body.error).toContain('pays 2 pts per $1.00');
  });

  it("refuses a value in another currency than the brand's with 400 saying so", async () => {
    const res = await signed(purchase(undefined, { value: { amount: '12.00', currency: 'EUR' } }));
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ reason: 'currency_mismatch', brandCurrency: 'USD' });
    expect(res.body.error).toContain("not this brand's currency USD");
  });

  it('refuses too many decimals and a number amount with 400 saying what to fix', async () => {
    const decimals = await signed(purchase('12.505'));
    expect(decimals.status).toBe(400);
    expect(JSON.stringify(decimals.body)).toContain('USD has 2 decimal places');
    const number = await signed(purchase(undefined, { value: { amount: 12.5, currency: 'USD' } }));
    expect(number.status).toBe(400);
    expect(JSON.stringify(number.body)).toContain('value.amount');
  });

  it('keeps a value on a fixed rule too, and pays the fixed amount', async () => {
    await platform.setRule(brand.brandId, { eventType: 'signup', rewardAmount: 40, cooldownHours: 0 });
    const res = await signed({ ...purchase('30.00'), eventType: 'signup' });
    expect(res.body).toMatchObject({ rewardAmount: 40, value: { amount: '30.00', currency: 'USD' } });
    expect(await storedEvent(res.body.eventId)).toMatchObject({ value_minor: 3000n, value_currency: 'USD' });
  });
});

describe('bulk-events with values', () => {
  it('computes each item from its own value; a bad item fails alone with its 400', async () => {
    const res = await platform.signedPost(
      '/pts-api/bulk-events',
      {
        events: [
          purchase('10.00'),
          purchase('0.10'),
          purchase('10.001'),
          purchase(undefined, { value: { amount: '10', currency: 'JPY' } }),
          purchase('99.50'),
        ],
      },
      brand.securityKey,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const results = res.body.results;
    expect(results[0]).toMatchObject({ rewardAmount: 20, value: { amount: '10.00', currency: 'USD' } });
    expect(results[1]).toMatchObject({ success: false, status: 403, code: 'VALUE_BELOW_MINIMUM' });
    expect(results[2]).toMatchObject({ success: false, status: 400 });
    expect(results[3]).toMatchObject({ success: false, status: 400, details: { reason: 'currency_mismatch' } });
    expect(results[4]).toMatchObject({ rewardAmount: 199, value: { amount: '99.50', currency: 'USD' } });
  });
});

describe('rate rules under the same limits as fixed ones', () => {
  it('a cooldown and a claim limit hold for a rate rule', async () => {
    await platform.setRule(brand.brandId, {
      eventType: 'limited_purchase',
      rate: { pts: 1, per: '1.00', currency: 'USD' },
      cooldownHours: 1,
      maxClaims: 2,
    });
    const user = nextEmail();
    const ev = (externalId: string) =>
      signed({ ...purchase('20.00'), eventType: 'limited_purchase', userEmail: user, externalId });
    expect((await ev('o-1')).body.rewardAmount).toBe(20);
    const cooling = await ev('o-2');
    expect(cooling.status).toBe(429);
    expect(cooling.body.details.reason).toBe('cooldown_not_expired');
    platform.clock.advance(2 * HOUR);
    expect((await ev('o-3')).body.rewardAmount).toBe(20);
    platform.clock.advance(2 * HOUR);
    const limited = await ev('o-4');
    expect(limited.status).toBe(429);
    expect(limited.body.details.reason).toBe('max_claims_reached');
  });

  it("a campaign's multiplier multiplies the rate's reward", async () => {
    await platform.setRule(brand.brandId, {
      eventType: 'campaign_purchase',
      rate: { pts: 3, per: '1.00', currency: 'USD' },
      cooldownHours: 0,
      maxClaims: -1,
    });
    const now = platform.clock.now().getTime();
    const campaign = await createCampaign({ db: platform.deps.db, clock: platform.clock }, brand.brandId, {
      hashtag: `#Double${now % 100000}`,
      rewardMultiplier: 2,
      startDate: new Date(now - HOUR).toISOString(),
      endDate: new Date(now + HOUR).toISOString(),
      maxClaimsPerUser: 5,
      excludeBrandPosts: true,
    });
    const res = await signed({
      ...purchase('7.50'),
      eventType: 'campaign_purchase',
      metadata: { campaign_id: campaign.id },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // 3 pts per $1 of $7.50 = 22 (down), times 2.
    expect(res.body.rewardAmount).toBe(44);
  });
});
