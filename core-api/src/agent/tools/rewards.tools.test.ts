import type { CreatedBrand } from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { PLATFORM_LEDGER_ID } from '../../modules/events/events.service.ts';
import { releaseUnpaidClaim } from '../rewards/agent-rewards.repository.ts';
import { agentIdentity } from '../rewards/agent-rewards.service.ts';

// Agent rewards over HTTP with real keys, the real event pipeline and the chain: evidence, once per (key,
// brand, type) and the daily cap hold under concurrent claims, and the reward is minted exactly once.

let platform: TestPlatform;
let shop: CreatedBrand;
let outside: CreatedBrand;
let brandCount = 0;
let userCount = 0;

const rules = [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }];
const newUser = () => `reward-user${++userCount}@example.com`;

function newBrand(domain = `shop${++brandCount}.rewards.example.com`) {
  return platform.createBrand({ name: `Reward shop ${brandCount}`, domain, rules });
}

function newKey(brandIds: string[], extra: { canOnboard?: boolean; tier?: 'free' | 'pro' } = {}) {
  return createFixtureKey(platform, { name: 'rewards', ratePerMinute: 1000, brandIds, ...extra });
}

/** `key` null: unsigned. The clock moves a second first: each call is a new signature. */
function send(key: AgentKeyCredentials | null, method: string, path: string, body?: unknown) {
  platform.clock.advance(1_000);
  return agentRequest(platform, { method, path, ...(body === undefined ? {} : { body }), ...(key ? { key } : {}) });
}

const claim = (key: AgentKeyCredentials | null, rewardType: string, brandAddress: string) =>
  send(key, 'POST', '/agent/rewards/claim', { rewardType, brandAddress });

/** An accepted event of `brandId` brought by `key` through process_event: the discovery evidence. */
async function bringEvent(key: AgentKeyCredentials, brandId: string) {
  const res = await send(key, 'POST', '/events', { brandId, eventType: 'earn', userId: newUser() });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The platform-ledger reward rows paid to the key's identity. */
async function rewardMintsOf(keyId: string) {
  return platform.deps.db
    .selectFrom('reward_mints')
    .innerJoin('events', 'events.id', 'reward_mints.event_id')
    .select(['reward_mints.amount', 'reward_mints.status', 'reward_mints.brand_id', 'events.event_type'])
    .where('events.user_email', '=', agentIdentity(keyId))
    .execute();
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  shop = await newBrand('rewards-shop.example.com');
  outside = await newBrand();
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('claim_agent_reward: discovery', () => {
  it('403 until the key brought an accepted event; then 100 pts minted once to its wallet, seen on chain', async () => {
    const key = await newKey([shop.brandId]);
    const early = await claim(key, 'discovery', shop.brandId);
    expect(early.status, JSON.stringify(early.body)).toBe(403);
    expect(early.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'no_agent_event' } });
    expect(early.body.error.message).toContain('process_event');
    // A brand-signed event is the brand's, not the key's: still no evidence.
    platform.clock.advance(61_000);
    const own = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: shop.brandId, eventType: 'earn', userEmail: newUser() },
      shop.securityKey,
    );
    expect(own.status).toBe(200);
    expect((await claim(key, 'discovery', shop.brandId)).status).toBe(403);

    await bringEvent(key, shop.brandId);
    const res = await claim(key, 'discovery', shop.brandId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      claim: { brandId: shop.brandId, rewardType: 'discovery', amount: 100, status: 'paid' },
      wallet: { identity: agentIdentity(key.keyId), address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) },
      allowance: { period: 'utc_day', limit: 3, used: 1, remaining: 2 },
    });
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, res.body.data.wallet.address)).toBe(100n);
    // Paid on the platform ledger: the brand's own events and mints do not carry it.
    expect(await rewardMintsOf(key.keyId)).toEqual([
      { amount: 100n, status: 'confirmed', brand_id: PLATFORM_LEDGER_ID, event_type: 'agent_reward_discovery' },
    ]);
    const atBrand = await platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('brand_id', '=', shop.brandId)
      .where('event_type', 'like', 'agent_reward%')
      .execute();
    expect(atBrand).toEqual([]);

    const read = await send(key, 'GET', '/agent/rewards');
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({
      keyId: key.keyId,
      wallet: { address: res.body.data.wallet.address, balance: 100, pending: 0 },
      earnings: { total: 100, discovery: 100, onboarding: 0, claims: 1 },
      activity: { acceptedEvents: 1, brandsWithEvents: 1, onboardedBrands: 0 },
      claimable: [],
      claims: [
        { brandId: shop.brandId, rewardType: 'discovery', amount: 100, status: 'paid', mintStatus: 'confirmed' },
      ],
      allowance: { used: 1, remaining: 2 },
      rateLimit: { requestsPerMinute: 1000 },
    });
    expect(read.body.data.claims[0].transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('409 for a repeat, by Brand ID or by domain, with the existing claim; nothing more is minted', async () => {
    const key = await newKey([shop.brandId]);
    await bringEvent(key, shop.brandId);
    const read = await send(key, 'GET', '/agent/rewards');
    expect(read.body.data.claimable).toEqual([{ brandId: shop.brandId, rewardType: 'discovery', amount: 100 }]);
    const first = await claim(key, 'discovery', 'https://rewards-shop.example.com/some/page');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.claim.brandId).toBe(shop.brandId);
    for (const ref of [shop.brandId, shop.brandId.toUpperCase().replace('0X', '0x'), 'rewards-shop.example.com']) {
      const repeat = await claim(key, 'discovery', ref);
      expect(repeat.status, ref).toBe(409);
      expect(repeat.body.error.code).toBe('conflict');
      expect(repeat.body.error.details).toMatchObject({
        reason: 'already_claimed',
        claim: { brandId: shop.brandId, rewardType: 'discovery', amount: 100, eventId: first.body.data.claim.eventId },
      });
    }
    await waitForMintsSettled(platform);
    expect(await rewardMintsOf(key.keyId)).toHaveLength(1);
    expect(await tokenBalance(platform, first.body.data.wallet.address)).toBe(100n);
  });

  it('403 for a brand outside the key, 404 for an unknown brand or domain, 400 naming the field', async () => {
    const key = await newKey([shop.brandId]);
    await bringEvent(key, shop.brandId);
    const denied = await claim(key, 'discovery', outside.brandId);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'brand_not_in_key' } });
    for (const ref of [privateKeyToAccount(generatePrivateKey()).address, 'nobody.example.com']) {
      const missing = await claim(key, 'discovery', ref);
      expect(missing.status, ref).toBe(404);
      expect(missing.body.error.code).toBe('not_found');
    }
    for (const [body, field] of [
      [{ rewardType: 'referral', brandAddress: shop.brandId }, 'rewardType'],
      [{ brandAddress: shop.brandId }, 'rewardType'],
      [{ rewardType: 'discovery', brandAddress: '' }, 'brandAddress'],
      [{ rewardType: 'discovery', brandAddress: 'not a brand' }, 'brandAddress'],
    ] as const) {
      const bad = await send(key, 'POST', '/agent/rewards/claim', body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe('validation');
      expect(bad.body.error.message).toContain(field);
    }
    expect(await rewardMintsOf(key.keyId)).toEqual([]);
  });

  it('401 unsigned, for both tools', async () => {
    for (const res of [await claim(null, 'discovery', shop.brandId), await send(null, 'GET', '/agent/rewards')]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('auth_required');
    }
  });
});

describe('claim_agent_reward: onboarding', () => {
  it('500 pts only for a brand this key onboarded, once it took an event of its own', async () => {
    const onboarder = await newKey([], { canOnboard: true });
    const other = await newKey([shop.brandId], { canOnboard: true });
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const onboarded = await send(onboarder, 'POST', '/onboarding/brands', {
      brandAddress: address,
      businessName: 'Fresh Bakery',
      contactEmail: 'owner@fresh-bakery.example.com',
      website: 'https://fresh-bakery.example.com',
      category: 'dining',
      description: 'Bread',
    });
    expect(onboarded.status, JSON.stringify(onboarded.body)).toBe(200);
    const brandId = onboarded.body.data.brandId as string;

    const notLive = await claim(onboarder, 'onboarding', brandId);
    expect(notLive.status).toBe(403);
    expect(notLive.body.error.details).toMatchObject({ reason: 'brand_not_live' });
    // The key's own events through the agent API do not show the brand went live…
    const sent = await send(onboarder, 'POST', '/events', {
      brandId,
      eventType: 'account_creation',
      userId: newUser(),
    });
    expect(sent.status).toBe(200);
    expect((await claim(onboarder, 'onboarding', brandId)).body.error.details).toMatchObject({
      reason: 'brand_not_live',
    });
    // … the brand's own server does.
    platform.clock.advance(1_000);
    const live = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId, eventType: 'account_creation', userEmail: newUser() },
      onboarded.body.data.securityKey,
    );
    expect(live.status).toBe(200);
    // Another key did not onboard it.
    const stranger = await claim(other, 'onboarding', brandId);
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.details).toMatchObject({ reason: 'not_onboarded_by_key' });

    const res = await claim(onboarder, 'onboarding', 'fresh-bakery.example.com');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.claim).toMatchObject({ brandId, rewardType: 'onboarding', amount: 500 });
    // The key's own event was discovery evidence for the brand it holds: another 100.
    const discovery = await claim(onboarder, 'discovery', brandId);
    expect(discovery.status, JSON.stringify(discovery.body)).toBe(200);
    expect((await claim(onboarder, 'onboarding', brandId)).status).toBe(409);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, res.body.data.wallet.address)).toBe(600n);
    const read = await send(onboarder, 'GET', '/agent/rewards');
    expect(read.body.data).toMatchObject({
      earnings: { total: 600, discovery: 100, onboarding: 500, claims: 2 },
      activity: { onboardedBrands: 1 },
      wallet: { balance: 600, pending: 0 },
    });
  });
  it("no brand may take the platform ledger's address (400 naming it), so no event reaches that ledger", async () => {
    const onboarder = await newKey([], { canOnboard: true });
    const res = await send(onboarder, 'POST', '/onboarding/brands', {
      brandAddress: PLATFORM_LEDGER_ID,
      businessName: 'Zero',
      contactEmail: 'owner@zero.example.com',
      website: 'https://zero.example.com',
      category: 'retail',
      description: 'Not a brand',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.message).toContain('platform ledger');
    const event = await platform.post('/pts-api/manual-event', {
      brandId: PLATFORM_LEDGER_ID,
      eventType: 'agent_reward_onboarding',
      userEmail: agentIdentity(onboarder.keyId),
      domain: 'zero.example.com',
    });
    expect(event.status).toBe(404);
  });
});

describe('concurrent claims', () => {
  it('10 concurrent claims of the same key, brand and type: one 200, nine 409, one mint', async () => {
    const key = await newKey([shop.brandId]);
    await bringEvent(key, shop.brandId);
    const requests = [];
    for (let i = 0; i < 10; i++) requests.push(claim(key, 'discovery', shop.brandId));
    const answers = await Promise.all(requests);
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses, JSON.stringify(answers.map((res) => res.body))).toEqual([200, ...Array(9).fill(409)]);
    for (const res of answers.filter((r) => r.status === 409)) {
      expect(res.body.error.details.reason).toBe('already_claimed');
    }
    await waitForMintsSettled(platform);
    const mints = await rewardMintsOf(key.keyId);
    expect(mints).toEqual([
      { amount: 100n, status: 'confirmed', brand_id: PLATFORM_LEDGER_ID, event_type: 'agent_reward_discovery' },
    ]);
    const wallet = answers.find((res) => res.status === 200)!.body.data.wallet.address;
    expect(await tokenBalance(platform, wallet)).toBe(100n);
  });

  it('the daily cap (free: 3) holds under concurrent claims of different brands, and resets at UTC midnight', async () => {
    const brands = [];
    for (let i = 0; i < 5; i++) brands.push(await newBrand());
    const key = await newKey(brands.map((brand) => brand.brandId));
    for (const brand of brands) await bringEvent(key, brand.brandId);
    const requests = brands.map((brand) => claim(key, 'discovery', brand.brandId));
    const answers = await Promise.all(requests);
    const ok = answers.filter((res) => res.status === 200);
    const capped = answers.filter((res) => res.status === 429);
    expect(ok, JSON.stringify(answers.map((res) => res.body))).toHaveLength(3);
    expect(capped).toHaveLength(2);
    const now = platform.clock.now();
    const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    for (const res of capped) {
      expect(res.body.error.code).toBe('rate_limit');
      expect(res.body.error.details).toMatchObject({
        reason: 'agent_reward_cap',
        allowance: { limit: 3, used: 3, remaining: 0, resetsAt: midnight.toISOString() },
      });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    await waitForMintsSettled(platform);
    expect(await rewardMintsOf(key.keyId)).toHaveLength(3);
    const read = await send(key, 'GET', '/agent/rewards');
    expect(read.body.data.allowance).toEqual({
      period: 'utc_day',
      limit: 3,
      used: 3,
      remaining: 0,
      resetsAt: midnight.toISOString(),
    });
    expect(read.body.data.claimable).toHaveLength(2);

    platform.clock.set(new Date(midnight.getTime() + 1_000));
    const left = read.body.data.claimable.map((c: { brandId: string }) => c.brandId);
    const next = await Promise.all(left.map((brandId: string) => claim(key, 'discovery', brandId)));
    expect(next.map((res) => res.status)).toEqual([200, 200]);
    expect(Math.max(...next.map((res) => res.body.data.allowance.used))).toBe(2);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, ok[0]!.body.data.wallet.address)).toBe(500n);
  });
});

describe('crash between the claim and its reward', () => {
  it('a claim left without its reward event is paid, once, by the next claim after 30 s', async () => {
    const key = await newKey([shop.brandId]);
    await bringEvent(key, shop.brandId);
    // As if the process died after the claim's transaction committed and before the reward's.
    const eventId = crypto.randomUUID();
    await platform.deps.db
      .insertInto('agent_reward_claims')
      .values({
        key_id: key.keyId,
        brand_id: shop.brandId,
        reward_type: 'discovery',
        amount: 100n,
        event_id: eventId,
        claimed_at: platform.clock.now(),
      })
      .execute();
    const soon = await claim(key, 'discovery', shop.brandId);
    expect(soon.status).toBe(409);
    expect(soon.body.error.details.claim).toMatchObject({ eventId, status: 'paying' });
    platform.clock.advance(30_000);
    const redriven = await Promise.all([claim(key, 'discovery', shop.brandId), claim(key, 'discovery', shop.brandId)]);
    expect(redriven.map((res) => res.status).sort()).toEqual([200, 409]);
    const paid = redriven.find((res) => res.status === 200)!;
    expect(paid.body.data.claim).toMatchObject({ eventId, amount: 100, status: 'paid' });
    expect((await claim(key, 'discovery', shop.brandId)).status).toBe(409);
    await waitForMintsSettled(platform);
    expect(await rewardMintsOf(key.keyId)).toHaveLength(1);
    expect(await tokenBalance(platform, paid.body.data.wallet.address)).toBe(100n);
  });

  it('a refused reward gives its claim back, unless its event was written (only the answer was lost)', async () => {
    const key = await newKey([shop.brandId, outside.brandId]);
    const claimRow = (brandId: string, eventId: string) => ({
      key_id: key.keyId,
      brand_id: brandId,
      reward_type: 'discovery' as const,
      amount: 100n,
      event_id: eventId,
      claimed_at: platform.clock.now(),
    });
    const lost = crypto.randomUUID();
    const written = crypto.randomUUID();
    await platform.deps.db
      .insertInto('agent_reward_claims')
      .values([claimRow(shop.brandId, lost), claimRow(outside.brandId, written)])
      .execute();
    await platform.deps.db
      .insertInto('events')
      .values({
        id: written,
        brand_id: PLATFORM_LEDGER_ID,
        event_type: 'agent_reward_discovery',
        user_email: agentIdentity(key.keyId),
        status: 'accepted',
        metadata: JSON.stringify({ rewardedKeyId: key.keyId }),
        reward_amount: 100n,
        created_at: platform.clock.now(),
      })
      .execute();
    await releaseUnpaidClaim(platform.deps.db, lost);
    await releaseUnpaidClaim(platform.deps.db, written);
    const left = await platform.deps.db
      .selectFrom('agent_reward_claims')
      .select('event_id')
      .where('key_id', '=', key.keyId)
      .execute();
    expect(left).toEqual([{ event_id: written }]);
  });
});
