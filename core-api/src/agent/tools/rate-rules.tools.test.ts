import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import { actionsTools } from './actions.tools.ts';
import { analyticsTools } from './analytics.tools.ts';
import { programTools } from './program.tools.ts';
import { toolCaller } from './tool-test-support.ts';

// Rate rules through the agent (issue 35 §1): create_brand_event / update_brand_event take a rate, process_event
// sends a value and answers the computed reward, and compare_cashback prices a rate rule by the purchase.
// Real platform (PGlite or PostgreSQL with PTS_TEST_DB=postgres, anvil).

let platform: TestPlatform;
let shop: CreatedBrand;
let flat: CreatedBrand;
let tools: AgentTool[];
let users = 0;
let manager: AgentPrincipal;

const caller = toolCaller(
  () => platform,
  () => tools,
);
const call = (name: string, raw: { params?: unknown; body?: unknown; query?: unknown }) =>
  caller.call(name, raw, manager);
const invoke = (name: string, raw: { params?: unknown; body?: unknown }) => caller.invoke(name, raw, manager);
const order = (amount: string, currency = 'USD') => ({
  body: {
    brandId: shop.brandId,
    eventType: 'purchase',
    userId: `rate-buyer${++users}@example.com`,
    value: { amount, currency },
  },
});

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  tools = [
    ...programTools(platform.services.agent.toolDeps),
    ...actionsTools(platform.services.agent.toolDeps),
    ...analyticsTools(platform.services.agent.toolDeps),
  ];
  shop = await platform.createBrand({ name: 'Rate Agent Shop', domain: 'rate-agent.example.com' });
  flat = await platform.createBrand({
    name: 'Flat Shop',
    domain: 'flat.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  manager = {
    keyId: 'key-rates',
    name: 'key-rates',
    brandIds: [shop.brandId],
    canManageProgram: true,
    canOnboard: false,
    tier: 'free',
    ratePerMinute: 1000,
  };
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('rate rules through the agent tools', () => {
  let eventId = '';

  it('create_brand_event takes a rate with a minimum and a cap; process_event with a value earns the computed reward', async () => {
    const rule = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: {
        eventType: 'purchase',
        rate: { pts: 2, per: '1.00', currency: 'USD' },
        minValue: '5.00',
        maxReward: 500,
        maxClaims: -1,
        cooldownHours: 0,
      },
    });
    expect(rule).toMatchObject({
      rewardAmount: 0,
      rate: { pts: 2, per: '1.00', currency: 'USD', rounding: 'down' },
      minValue: '5.00',
      maxReward: 500,
    });
    eventId = rule.eventId;
    const paid = await call('process_event', order('12.99'));
    expect(paid).toMatchObject({ rewardAmount: 25, value: { amount: '12.99', currency: 'USD' } });
    expect((await call('process_event', order('1000.00'))).rewardAmount).toBe(500);
    await expect(invoke('process_event', order('4.99'))).rejects.toMatchObject({ code: 'VALUE_BELOW_MINIMUM' });
    await expect(invoke('process_event', order('10.00', 'EUR'))).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a rule with both kinds, or limits on a fixed rule, with 400 saying what to send', async () => {
    await expect(
      invoke('create_brand_event', {
        params: { brandId: shop.brandId },
        body: {
          eventType: 'both_kinds',
          rewardAmount: 5,
          rate: { pts: 1, per: '1.00', currency: 'USD' },
          maxClaims: -1,
          cooldownHours: 0,
        },
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('send either rewardAmount or rate') });
    await expect(
      invoke('create_brand_event', {
        params: { brandId: shop.brandId },
        body: { eventType: 'no_kind', maxClaims: -1, cooldownHours: 0 },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('send rewardAmount (fixed points) or rate'),
    });
  });

  it('update_brand_event: switching it off and on keeps the rate; a new cap applies; a rewardAmount makes it fixed', async () => {
    const params = { brandId: shop.brandId, eventId };
    expect(await call('update_brand_event', { params, body: { enabled: false } })).toMatchObject({
      enabled: false,
      rate: { pts: 2 },
    });
    expect(await call('update_brand_event', { params, body: { enabled: true, maxReward: 30 } })).toMatchObject({
      enabled: true,
      rate: { pts: 2, per: '1.00' },
      minValue: '5.00',
      maxReward: 30,
    });
    expect((await call('process_event', order('100.00'))).rewardAmount).toBe(30);
    const fixed = await call('update_brand_event', { params, body: { rewardAmount: 7 } });
    expect(fixed).toMatchObject({ rewardAmount: 7 });
    expect(fixed.rate).toBeUndefined();
    await expect(invoke('update_brand_event', { params, body: { minValue: '1.00' } })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('minValue applies only to a rate rule'),
    });
    const back = await call('update_brand_event', {
      params,
      body: { rate: { pts: 3, per: '1.00', currency: 'USD', rounding: 'up' } },
    });
    expect(back).toMatchObject({ rewardAmount: 0, rate: { pts: 3, rounding: 'up' } });
    expect(back.minValue).toBeUndefined();
  });

  it('compare_cashback prices the rate rule by the purchase: 3 pts per $1 (up) of $25.50 = 77 pts against a flat 100', async () => {
    const r = await call('compare_cashback', {
      query: { brandIds: `${shop.brandId},${flat.brandId}`, purchaseAmount: '25.50' },
    });
    const rows = Object.fromEntries(r.brands.map((b: { brandId: string }) => [b.brandId, b]));
    expect(rows[shop.brandId]).toMatchObject({ eventType: 'purchase', rewardPts: '77', cashbackPercent: 0.3 });
    expect(rows[flat.brandId]).toMatchObject({ rewardPts: '100' });
    const big = await call('compare_cashback', {
      query: { brandIds: `${shop.brandId},${flat.brandId}`, purchaseAmount: '1000' },
    });
    expect(big.brands[0]).toMatchObject({ brandId: shop.brandId, rewardPts: '3000', cashbackPercent: 0.3 });
  });
});
