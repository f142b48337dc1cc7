import { signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// VIP tiers in the portal against the real platform (PGlite, or PostgreSQL with PTS_TEST_DB=postgres): the
// Program page's editor (the tier service of the admin API: admin or owner only, 400s naming the field,
// audited with the portal user), the dashboard's distribution (one query) and a member page's standing,
// with brand isolation.

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
let seq = 0;

const TABLE = {
  basis: 'earned',
  period: 'calendar_year',
  graceDays: 7,
  tiers: [
    { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
    { name: 'Silver', threshold: 200, multiplier: 1.5, entryReward: 25 },
  ],
};

async function purchase(userEmail: string) {
  platform.clock.advance(1_000);
  const body = JSON.stringify({
    brandId: brandA.brandId,
    eventType: 'purchase',
    userEmail,
    externalId: `order-${++seq}`,
  });
  const headers = signRequest({
    securityKey: brandA.securityKey,
    method: 'POST',
    pathWithQuery: '/pts-api/manual-event',
    body,
    timestamp: Math.floor(platform.clock.now().getTime() / 1000),
  });
  const response = await fetch(`${platform.url}/pts-api/manual-event`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
  expect(response.status, await response.text()).toBe(200);
}

beforeAll(async () => {
  platform = await startTestPlatform();
  const rules = [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }];
  brandA = await platform.createBrand({ name: 'Tier Brand A', domain: 'tier-a.example.com', rules });
  brandB = await platform.createBrand({ name: 'Tier Brand B', domain: 'tier-b.example.com', rules });
  adminA = await portalMember(platform, brandA.brandId, 'admin@tier-a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@tier-a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@tier-b.example.com', 'owner');
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the tier editor', () => {
  it('lets an admin set the table (audited with the portal user), refuses a viewer and a bad table with the field', async () => {
    const path = `/brands/${brandA.brandId}/tiers`;
    expect((await viewerA.request('GET', path)).body).toMatchObject({ tiers: null, basis: null });
    const refused = await viewerA.request('PUT', path, TABLE);
    expect(refused.status).toBe(403);
    const bad = await adminA.request('PUT', path, {
      ...TABLE,
      tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], multiplier: 0.5 }],
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/tiers\.1\.multiplier: must be at least 1/);
    const rising = await adminA.request('PUT', path, {
      ...TABLE,
      tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], threshold: 0 }],
    });
    expect(rising.status).toBe(400);
    expect(rising.body.details).toMatchObject({ field: 'tiers.1.threshold' });
    const saved = await adminA.request('PUT', path, TABLE);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toMatchObject({
      basis: 'earned',
      graceDays: 7,
      tiers: [{ name: 'Bronze' }, { name: 'Silver' }],
    });
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor'])
      .where('action', '=', 'tiers.set')
      .where('brand_id', '=', brandA.brandId)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toMatch(/admin@tier-a\.example\.com/);
    // Another brand's owner neither reads nor writes it.
    expect((await ownerB.request('GET', path)).status).toBe(404);
    expect((await ownerB.request('PUT', path, TABLE)).status).toBe(404);
  });

  it('counts members per tier for the dashboard and shows a member’s tier and what is left', async () => {
    await purchase('silver@tier.example');
    await purchase('silver@tier.example'); // 200: Silver
    await purchase('bronze@tier.example'); // 100: Bronze
    const distribution = await viewerA.request('GET', `/brands/${brandA.brandId}/tiers/distribution`);
    expect(distribution.status).toBe(200);
    expect(distribution.body).toMatchObject({
      members: 2,
      tiers: [
        { name: 'Bronze', threshold: '0', members: 1 },
        { name: 'Silver', threshold: '200', members: 1 },
      ],
    });
    const bronze = await viewerA.request(
      'GET',
      `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent('bronze@tier.example')}/tier`,
    );
    expect(bronze.body).toMatchObject({
      tier: 'Bronze',
      next: { name: 'Silver', threshold: '200' },
      progress: { current: '100', remaining: '100' },
    });
    expect((await ownerB.request('GET', `/brands/${brandA.brandId}/tiers/distribution`)).status).toBe(404);
  });
});
