import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest } from '../../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { createPerkViaAdmin } from './tool-test-support.ts';

// Commerce answers keep brands, rules and the perk catalogue in caches (the brand cache, the answer store at
// its default age). An admin's change must show in the very next answer, as an operator tries it right away.

let platform: TestPlatform;
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}`, 'content-type': 'application/json' });

async function putRule(brandId: string, eventType: string, rule: Record<string, unknown>) {
  const res = await fetch(`${platform.url}/admin/brands/${brandId}/rules/${eventType}`, {
    method: 'PUT',
    headers: admin(),
    body: JSON.stringify(rule),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

const routes = async () => {
  const res = await agentRequest(platform, { method: 'GET', path: '/commerce/route', query: { purchaseAmount: '20' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data.routes as { brandId: string; rewardPts: string }[]).map((r) => `${r.brandId} ${r.rewardPts}`);
};

const deals = async () => {
  const res = await agentRequest(platform, { method: 'GET', path: '/deals' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data.deals as { name: string; cost: number }[]).map((d) => `${d.name} ${d.cost}`).sort();
};

beforeAll(async () => {
  // The answer store and the brand cache at their defaults (300 s and 5 s): nothing expires during the test.
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
});
afterAll(async () => {
  await platform?.stop();
});

describe('commerce answers right after an admin change', () => {
  it('route_commerce: a new purchase rule, a changed reward and a new brand show in the next answer', async () => {
    const shop = await platform.createBrand({ name: 'Shop', rules: [{ eventType: 'visit', rewardAmount: 5 }] });
    expect(await routes()).toEqual([]);

    await putRule(shop.brandId, 'purchase', { rewardAmount: 200 });
    expect(await routes()).toEqual([`${shop.brandId} 200`]);

    await putRule(shop.brandId, 'purchase', { rewardAmount: 250 });
    expect(await routes()).toEqual([`${shop.brandId} 250`]);

    const other = await platform.createBrand({ name: 'Other', rules: [{ eventType: 'purchase', rewardAmount: 400 }] });
    expect(await routes()).toEqual([`${other.brandId} 400`, `${shop.brandId} 250`]);

    await putRule(other.brandId, 'purchase', { rewardAmount: 400, active: false });
    expect(await routes()).toEqual([`${shop.brandId} 250`]);
  });

  it('find_deals: a perk created or changed by the admin is in the next answer', async () => {
    const cafe = await platform.createBrand({ name: 'Cafe', rules: [{ eventType: 'earn', rewardAmount: 10 }] });
    const before = await deals();
    const perk = await createPerkViaAdmin(platform, cafe.brandId, { name: 'Cookie', cost: 100 });
    expect(await deals()).toEqual([...before, 'Cookie 100'].sort());

    const res = await fetch(`${platform.url}/admin/perks/${perk.perkId}`, {
      method: 'PATCH',
      headers: admin(),
      body: JSON.stringify({ cost: 120 }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await deals()).toEqual([...before, 'Cookie 120'].sort());
  });
});
