import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// A perk's status on the portal (issue 33 §14): the shared rule (shared/src/rules/perk-status.ts) at the
// server's clock with PerkNFT's claimed count, so a sold-out perk is never listed as "active".

let platform: TestPlatform;
let brand: { brandId: string; securityKey: string };
let owner: PortalBrowser;
const MEMBER = 'buyer@customer.example';

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Status Shop',
    domain: 'status.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  owner = await portalMember(platform, brand.brandId, 'owner@status.example.com', 'owner');
  for (let i = 0; i < 2; i++) {
    platform.clock.advance(61_000);
    const earned = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'earn', userEmail: MEMBER },
      brand.securityKey,
    );
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
  }
  await waitForMintsSettled(platform);
});

afterAll(async () => {
  await platform?.stop();
});

describe('a perk status on the portal', () => {
  it('a perk whose supply is all claimed is sold out on the list and its page; a later window is scheduled', async () => {
    const created = await owner.request('POST', `/brands/${brand.brandId}/perks`, {
      name: 'Last mug',
      description: 'Only one',
      cost: 50,
      maxSupply: 1,
      maxPerUser: 0,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const perkId = created.body.perk.perkId;
    const later = await owner.request('POST', `/brands/${brand.brandId}/perks`, {
      name: 'Next season',
      description: 'Soon',
      cost: 50,
      maxSupply: null,
      maxPerUser: 0,
      startsAt: new Date(platform.clock.now().getTime() + 86_400_000).toISOString(),
    });
    expect(later.status, JSON.stringify(later.body)).toBe(201);

    const statuses = async () =>
      Object.fromEntries(
        (await owner.request('GET', `/brands/${brand.brandId}/perks`)).body.perks.map(
          (perk: { name: string; status: string; totalClaimed: number | null }) => [
            perk.name,
            `${perk.status} ${perk.totalClaimed}`,
          ],
        ),
      );
    expect(await statuses()).toEqual({ 'Last mug': 'active 0', 'Next season': 'scheduled 0' });

    platform.clock.advance(1_000);
    const redeemed = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId, userIdentifier: MEMBER },
      brand.securityKey,
    );
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    expect(await statuses()).toEqual({ 'Last mug': 'sold_out 1', 'Next season': 'scheduled 0' });
    const page = await owner.request('GET', `/brands/${brand.brandId}/perks/${perkId}`);
    expect(page.body.perk).toMatchObject({ status: 'sold_out', totalClaimed: 1, active: true });
  });
});
