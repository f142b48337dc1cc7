import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import { toolCaller } from './tool-test-support.ts';

// get_user_tier on the real platform (issue 36 §1, docs/tiers.md): the tier table set through the admin API,
// purchases through the brand-signed event path, and the tool's answer the same standing as the brand-signed
// GET /services/tier. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'tier-tools-admin-token-0123456789ab';
let platform: TestPlatform;
let tools: AgentTool[];
let tiered: CreatedBrand;
let plain: CreatedBrand;
let n = 0;

const key = (brandIds: string[]): AgentPrincipal => ({
  keyId: `key-${brandIds.join('-')}`,
  name: 'tiers',
  brandIds,
  canManageProgram: false,
  canOnboard: false,
  tier: 'free',
  ratePerMinute: 20,
});
const caller = toolCaller(
  () => platform,
  () => tools,
);

async function purchase(brand: CreatedBrand, userEmail: string) {
  const response = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'purchase', userEmail, externalId: `order-${++n}` },
    brand.securityKey,
  );
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

function signedGet(brand: CreatedBrand, path: string) {
  platform.clock.advance(1000);
  return platform.get(
    path,
    signRequest({
      securityKey: brand.securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );
}

async function newBrand(name: string) {
  return platform.createBrand({
    name,
    domain: `${name.toLowerCase()}.example.com`,
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  // The tools as served (REST, MCP and converse are all generated from this list).
  tools = platform.services.agent.tools;
  tiered = await newBrand('Tiered');
  plain = await newBrand('Plain');
  const response = await fetch(`${platform.url}/admin/brands/${tiered.brandId}/tiers`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      basis: 'earned',
      period: 'calendar_year',
      tiers: [
        { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
        { name: 'Silver', threshold: 300, multiplier: 1.5, entryReward: 0 },
        { name: 'Gold', threshold: 1000, multiplier: 2, entryReward: 0 },
      ],
    }),
  });
  expect(response.status, await response.text()).toBe(200);
}, 120_000);

afterAll(async () => {
  if (platform) await waitForMintsSettled(platform);
  await platform?.stop();
});

describe('get_user_tier', () => {
  it("answers the member's tier, the next one and what is left: the standing /services/tier gives", async () => {
    const member = 'tier-member@example.com';
    await purchase(tiered, member);
    await purchase(tiered, member);
    const params = { userId: member, brandId: tiered.brandId };
    const answer = await caller.call('get_user_tier', { params }, key([tiered.brandId]));
    expect(answer).toEqual({
      brandId: tiered.brandId,
      userId: member,
      tier: 'Bronze',
      multiplier: 1,
      next: { name: 'Silver', threshold: '300' },
      progress: { basis: 'earned', period: 'calendar_year', current: '200', remaining: '100', graceUntil: null },
    });
    const signed = await signedGet(tiered, `/services/tier/${tiered.brandId}/${encodeURIComponent(member)}`);
    expect(signed.status).toBe(200);
    const { success: _ok, userIdentifier, ...standing } = signed.body;
    expect({ ...standing, userId: userIdentifier }).toEqual(answer);

    await purchase(tiered, member);
    const promoted = await caller.call('get_user_tier', { params }, key([tiered.brandId]));
    expect(promoted).toMatchObject({ tier: 'Silver', multiplier: 1.5, next: { name: 'Gold' } });
    expect(promoted.progress).toMatchObject({ current: '300', remaining: '700' });
  });

  it('a brand without tiers answers tier null; a key of another brand is refused; a bad id says what to fix', async () => {
    const answer = await caller.call(
      'get_user_tier',
      { params: { userId: 'nobody@example.com', brandId: plain.brandId } },
      key([plain.brandId]),
    );
    expect(answer).toMatchObject({ tier: null, multiplier: 1, next: null, progress: { basis: null, remaining: null } });
    await expect(
      caller.invoke(
        'get_user_tier',
        { params: { userId: 'x@example.com', brandId: tiered.brandId } },
        key([plain.brandId]),
      ),
    ).rejects.toMatchObject({ status: 403 });
    await expect(
      caller.invoke(
        'get_user_tier',
        { params: { userId: 'x@example.com', brandId: 'not-a-brand' } },
        key([plain.brandId]),
      ),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('is listed with the served tools (so on REST and MCP) under its path', () => {
    const tool = tools.find((candidate) => candidate.name === 'get_user_tier');
    expect(tool?.definition.path).toBe('/users/:userId/brands/:brandId/tier');
    expect(tool?.definition.access).toBe('key');
  });
});

describe('tiers in the stats, the persona and the brand’s tiers', () => {
  it('get_user_stats and get_user_persona carry the tier and progress; get_brand_tiers counts members per tier', async () => {
    const member = 'tier-stats@example.com';
    const other = 'tier-stats-other@example.com';
    for (let i = 0; i < 3; i++) await purchase(tiered, member); // 300: Silver
    await purchase(tiered, other); // 100: Bronze
    await waitForMintsSettled(platform);
    const params = { userId: member, brandId: tiered.brandId };
    const stats = await caller.call('get_user_stats', { params }, key([tiered.brandId]));
    expect(stats.tier).toEqual({
      tier: 'Silver',
      multiplier: 1.5,
      next: { name: 'Gold', threshold: '1000' },
      progress: { basis: 'earned', period: 'calendar_year', current: '300', remaining: '700', graceUntil: null },
    });
    platform.clock.advance(60_000); // the persona's window ends at now: the events are in it
    const persona = await caller.call(
      'get_user_persona',
      { params: { userId: member } },
      key([tiered.brandId, plain.brandId]),
    );
    // Only the brands with tiers are listed.
    expect(persona.tiers).toEqual([{ brandId: tiered.brandId, ...stats.tier }]);

    const brandTiers = await caller.call(
      'get_brand_tiers',
      { params: { brandId: tiered.brandId } },
      key([tiered.brandId]),
    );
    expect(brandTiers).toMatchObject({ brandId: tiered.brandId, basis: 'earned', period: 'calendar_year' });
    const counts = Object.fromEntries(
      brandTiers.tiers.map((tier: { name: string; members: number }) => [tier.name, tier.members]),
    );
    const held = await platform.deps.db
      .selectFrom('member_tiers')
      .select(['tier_name'])
      .where('brand_id', '=', tiered.brandId)
      .execute();
    const expected = { Bronze: 0, Silver: 0, Gold: 0 } as Record<string, number>;
    for (const row of held) expected[row.tier_name] = (expected[row.tier_name] ?? 0) + 1;
    expect(counts).toEqual(expected);
    expect(counts.Silver).toBeGreaterThanOrEqual(1);
    expect(brandTiers.members).toBe(held.length);
    expect(
      await caller.call('get_brand_tiers', { params: { brandId: plain.brandId } }, key([plain.brandId])),
    ).toMatchObject({ tiers: [], members: 0, basis: null });
    await expect(
      caller.invoke('get_brand_tiers', { params: { brandId: tiered.brandId } }, key([plain.brandId])),
    ).rejects.toMatchObject({ status: 403 });
  });
});
