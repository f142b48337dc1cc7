import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { BRAND_DASHBOARD_MAX_AGE_SECONDS } from '../../agent/tools/analytics.tools.ts';
import { createPerkViaAdmin } from '../../agent/tools/tool-test-support.ts';
import { readBrandAnalytics } from '../analytics/brand-analytics.ts';

// The portal dashboard (issue 22, item 1): one read model answers the portal route, the agent's
// get_brand_dashboard and the services' own figures (purchases, relayer gas, leaderboard, agent analytics)
// equally, for the same brand and window, on real data: signed events (one refused), a perk redemption
// relayed on chain, a token purchase through the local checkout.

let platform: TestPlatform;
let shop: CreatedBrand;
let other: CreatedBrand;
let owner: PortalBrowser;
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

/** A brand-signed event a minute after the previous one (the test clock stands still otherwise). */
async function earn(brand: CreatedBrand, eventType: string, identityKey: string, status = 200) {
  platform.clock.set(new Date(platform.clock.now().getTime() + 60_000));
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: identityKey, domain: `${brand.name}.example.com`, metadata: {} },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(status);
}

async function buyTokens(brand: CreatedBrand, amount: number) {
  const checkout = await platform.post('/pts-api/create-checkout', {
    brandId: brand.brandId,
    amount,
    userEmail: 'buyer@shop.example.com',
    successUrl: 'https://shop.example.com/thanks',
    cancelUrl: 'https://shop.example.com/cart',
  });
  expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
  const page = await (await fetch(checkout.body.checkoutUrl)).text();
  const token = /name="token" value="([0-9a-f]+)"/.exec(page)?.[1];
  const paid = await fetch(`${checkout.body.checkoutUrl}/pay`, {
    method: 'POST',
    body: new URLSearchParams({ token: token! }),
    redirect: 'manual',
  });
  expect(paid.status).toBe(303);
  const minted = await platform.post('/pts-api/payment-mint', { sessionId: checkout.body.sessionId });
  expect(minted.status, JSON.stringify(minted.body)).toBe(200);
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  const rules = [
    { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
    { eventType: 'daily', rewardAmount: 5, cooldownHours: 24, maxClaims: -1 },
  ];
  shop = await platform.createBrand({ name: 'shop', domain: 'shop.example.com', rules });
  other = await platform.createBrand({ name: 'other', domain: 'other.example.com', rules });
  const mug = await createPerkViaAdmin(platform, shop.brandId, { name: 'Mug', cost: 30 });
  for (const member of ['ann@example.com', 'bob@example.com', 'cy@example.com']) await earn(shop, 'earn', member);
  await earn(shop, 'earn', 'ann@example.com');
  await earn(shop, 'daily', 'ann@example.com');
  await earn(shop, 'daily', 'ann@example.com', 429);
  await earn(other, 'earn', 'dee@example.com');
  await waitForMintsSettled(platform);
  const redeemed = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: shop.brandId, perkId: mug.uuid, userIdentifier: 'ann@example.com', platform: 'web' },
    shop.securityKey,
  );
  expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
  await buyTokens(shop, 1250);
  await buyTokens(other, 900);
  await waitForMintsSettled(platform);
  // The windows are half-open and end now: let a minute pass so the last changes fall inside them.
  platform.clock.set(new Date(platform.clock.now().getTime() + 60_000));
  owner = await portalMember(platform, shop.brandId, 'owner@shop.example.com', 'owner');
}, 240_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the dashboard: one read model for the portal, the agent API and the services', () => {
  it('the portal route and get_brand_dashboard answer the same numbers, and they are the right ones', async () => {
    const portal = await owner.request('GET', `/brands/${shop.brandId}/dashboard?days=7`);
    expect(portal.status, JSON.stringify(portal.body)).toBe(200);
    const key = await createFixtureKey(platform, { name: 'dash', brandIds: [shop.brandId] });
    const agent = await agentRequest(platform, {
      method: 'GET',
      path: `/analytics/brands/${shop.brandId}/dashboard`,
      query: { days: 7 },
      key,
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    expect(agent.body.data).toEqual(portal.body);
    const direct = await readBrandAnalytics(platform.deps, {
      brandId: shop.brandId,
      from: portal.body.window.from,
      to: portal.body.window.to,
    });
    expect(direct).toEqual(portal.body);

    const d = portal.body;
    expect(d.members).toMatchObject({ total: 3, new: 3, inWindow: 3, active: { day: 3, week: 3, month: 3 } });
    expect(d.events).toEqual({
      accepted: 5,
      refused: 1,
      refusedByReason: [{ reason: 'COOLDOWN_ACTIVE', count: 1 }],
    });
    expect(d.ptsIssued).toBe('405');
    expect(d.redemptions).toMatchObject({ count: 1, ptsSpent: '30', redeemers: 1 });
    expect(d.tokenPurchases).toEqual({ count: 1, usdCents: 1250, usdAmount: '12.50', pts: '12500' });
    expect(d.relayerGas.transactions).toBe(1);
    expect(BigInt(d.relayerGas.gasUsed)).toBeGreaterThan(0n);
    expect(d.leaderboard.top.map((e: { value: number }) => e.value)).toEqual([205, 100, 100]);
    expect(d.topPerks).toEqual([expect.objectContaining({ name: 'Mug', redemptions: 1, ptsSpent: '30' })]);
  });

  it('equals what the services answer: purchases, relayer gas, leaderboard, agent analytics', async () => {
    const { body: d } = await owner.request('GET', `/brands/${shop.brandId}/dashboard?days=7`);
    const purchases = await platform.get(`/admin/brands/${shop.brandId}/purchases`, admin());
    expect(purchases.status).toBe(200);
    expect(d.tokenPurchases).toMatchObject({
      count: purchases.body.totals.fulfilled,
      usdCents: purchases.body.totals.usdCents,
      pts: String(purchases.body.totals.ptsPurchased),
    });
    const gas = await platform.get(`/admin/relayer/gas?brand=${shop.brandId}`, admin());
    expect(gas.status).toBe(200);
    expect(d.relayerGas).toEqual(gas.body.total);
    const board = await platform.get(
      `/services/leaderboard/${shop.brandId}?metric=pts_earned&period=all_time&limit=10`,
    );
    expect(board.status).toBe(200);
    expect(d.leaderboard.total).toBe(board.body.total);
    const pick = (entries: { value: number; rank: number }[]) => entries.map(({ value, rank }) => ({ value, rank }));
    expect(pick(d.leaderboard.top)).toEqual(pick(board.body.leaderboard));
    const analytics = await agentRequest(platform, {
      method: 'GET',
      path: `/analytics/brands/${shop.brandId}`,
      query: { period: '7d' },
    });
    expect(analytics.status).toBe(200);
    expect(analytics.body.data.current).toMatchObject({
      acceptedEvents: d.events.accepted,
      rejectedEvents: d.events.refused,
      members: d.members.inWindow,
      newMembers: d.members.new,
      ptsIssued: d.ptsIssued,
      redemptions: d.redemptions.count,
      ptsRedeemed: d.redemptions.ptsSpent,
    });
    const events = await agentRequest(platform, {
      method: 'GET',
      path: `/analytics/brands/${shop.brandId}/events`,
      query: { period: '7d' },
    });
    expect(
      events.body.data.eventTypes.map((t: { eventType: string; accepted: number; rejected: number }) => [
        t.eventType,
        t.accepted,
        t.rejected,
      ]),
    ).toEqual(
      d.topEventTypes.map((t: { eventType: string; accepted: number; refused: number }) => [
        t.eventType,
        t.accepted,
        t.refused,
      ]),
    );
  });

  it('a window with nothing in it answers zeros; a bad window is a 400 saying what to fix', async () => {
    const { body: empty } = await owner.request(
      'GET',
      `/brands/${shop.brandId}/dashboard?from=2020-01-01T00:00:00Z&to=2020-01-08T00:00:00Z`,
    );
    expect(empty.events.accepted).toBe(0);
    expect(empty.tokenPurchases.count).toBe(0);
    expect(empty.relayerGas.transactions).toBe(0);
    expect(empty.series.day).toHaveLength(7);
    const backwards = await owner.request(
      'GET',
      `/brands/${shop.brandId}/dashboard?from=2020-01-08T00:00:00Z&to=2020-01-01T00:00:00Z`,
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.error).toMatch(/from must be before to/);
    const tooLong = await owner.request('GET', `/brands/${shop.brandId}/dashboard?days=400`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatch(/days must be at most 366/);
  });

  it("another brand's dashboard is 404 in the portal and 403 for a key that does not act for it", async () => {
    expect((await owner.request('GET', `/brands/${other.brandId}/dashboard`)).status).toBe(404);
    const key = await createFixtureKey(platform, { name: 'elsewhere', brandIds: [shop.brandId] });
    const answer = await agentRequest(platform, {
      method: 'GET',
      path: `/analytics/brands/${other.brandId}/dashboard`,
      key,
    });
    expect(answer.status).toBe(403);
    const unsigned = await agentRequest(platform, {
      method: 'GET',
      path: `/analytics/brands/${shop.brandId}/dashboard`,
    });
    expect(unsigned.status).toBe(401);
  });

  it('the route is in /openapi.json under the portal tag', async () => {
    const spec = await platform.get('/openapi.json');
    const operation = spec.body.paths['/portal/api/brands/{brandId}/dashboard']?.get;
    expect(operation?.tags).toContain('portal');
    expect(operation?.security).toEqual([{ portalSession: [] }]);
  });

  it('get_brand_dashboard keeps an answer at most its max age, and only for keys acting for the brand', async () => {
    const key = await createFixtureKey(platform, { name: 'other dash', brandIds: [other.brandId] });
    const read = (as = key) =>
      agentRequest(platform, { method: 'GET', path: `/analytics/brands/${other.brandId}/dashboard`, key: as });
    const first = await read();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // An event at the same moment (the test clock stands still).
    const sent = await platform.signedPost(
      '/pts-api/manual-event',
      {
        brandId: other.brandId,
        eventType: 'earn',
        userEmail: 'eve@example.com',
        domain: 'other.example.com',
        metadata: {},
      },
      other.securityKey,
    );
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    // Within the max age: the kept answer, stating when it was computed.
    const kept = await read();
    expect(kept.body.data).toEqual(first.body.data);
    // A key that does not act for the brand never gets the kept answer.
    const stranger = await createFixtureKey(platform, { name: 'stranger', brandIds: [shop.brandId] });
    expect((await read(stranger)).status).toBe(403);
    // Past three times the max age: computed on the call, with the new event.
    platform.clock.set(new Date(platform.clock.now().getTime() + (3 * BRAND_DASHBOARD_MAX_AGE_SECONDS + 1) * 1000));
    const fresh = await read();
    expect(fresh.body.data.events.accepted).toBe(first.body.data.events.accepted + 1);
    expect(fresh.body.data.window.to).not.toBe(first.body.data.window.to);
    // The portal's dashboard is computed on every call.
    const portalMember2 = await portalMember(platform, other.brandId, 'owner@other.example.com', 'owner');
    const portal = await portalMember2.request('GET', `/brands/${other.brandId}/dashboard`);
    expect(portal.body.events.accepted).toBe(fresh.body.data.events.accepted);
  });
});
