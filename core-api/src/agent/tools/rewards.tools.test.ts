import type { CreatedBrand } from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { type FakeDnsServer, startFakeDnsServer } from '../../../test/fakes/dns-server.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';
import { brandAddressProofMessage } from '../../modules/brands/brand-registration.ts';
import { createSystemTxtResolver } from '../../modules/dns/dns.service.ts';
import { PLATFORM_LEDGER_ID } from '../../modules/events/events.service.ts';
import { releaseUnpaidClaim } from '../rewards/agent-rewards.repository.ts';
import { agentIdentity } from '../rewards/agent-rewards.service.ts';

// Agent rewards over HTTP with real keys, the real event pipeline and the chain: evidence, once per (key,
// brand, type) and the daily cap hold under concurrent claims, and the reward is minted exactly once.

let platform: TestPlatform;
let dns: FakeDnsServer;
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

const DAY_MS = 86_400_000;

/** Onboards a brand at an address the key proves it controls (EIP-191); its keys are in the answer. */
async function onboard(key: AgentKeyCredentials, host: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  const addressSignature = await account.signMessage({ message: brandAddressProofMessage(account.address, host) });
  const res = await send(key, 'POST', '/onboarding/brands', {
    brandAddress: account.address,
    addressSignature,
    businessName: 'Fresh Bakery',
    contactEmail: `owner@${host}`,
    website: `https://${host}`,
    category: 'dining',
    description: 'Bread',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { brandId: string; securityKey: string; apiKey: string };
}

/** The operator's `pts brand rotate-key` for the brand owner: keys the onboarding key never sees. */
async function rotateAsOperator(brandId: string): Promise<{ securityKey: string }> {
  let stdout = '';
  const code = await runCli(['brand', 'rotate-key', '--brand', brandId, '--json'], {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => undefined },
  });
  expect(code).toBe(0);
  return JSON.parse(stdout);
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
  dns = await startFakeDnsServer();
  platform = await startTestPlatform(
    {
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
      PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    },
    { resolveTxt: createSystemTxtResolver([dns.address], { timeoutMs: 300, tries: 1 }) },
  );
  shop = await newBrand('rewards-shop.example.com');
  outside = await newBrand();
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await dns?.close();
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
  it('the attack: a key alone — onboarding, the security key it was handed, any number of events — earns nothing', async () => {
    const onboarder = await newKey([], { canOnboard: true, tier: 'pro' });
    const onboarded = await onboard(onboarder, 'solo-bakery.example.com');
    const brandId = onboarded.brandId;
    // Many "members" signed with the key the onboarding answer carried, and events through the agent API.
    for (let i = 0; i < 8; i++) {
      platform.clock.advance(1_000);
      const event = await platform.signedPost(
        '/pts-api/manual-event',
        { brandId, eventType: 'account_creation', userEmail: newUser() },
        onboarded.securityKey,
      );
      expect(event.status).toBe(200);
    }
    expect(
      (await send(onboarder, 'POST', '/events', { brandId, eventType: 'account_creation', userId: newUser() })).status,
    ).toBe(200);
    platform.clock.advance(8 * DAY_MS);
    const refused = await claim(onboarder, 'onboarding', brandId);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error.details).toMatchObject({ reason: 'domain_not_verified' });
    // It can set up DNS for a domain it owns; the key it holds still proves nothing.
    dns.set('_pts.solo-bakery.example.com', { txt: [[`brand_id=${brandId};api_key=${onboarded.apiKey}`]] });
    expect((await platform.post('/pts-api/verify-dns', { domain: 'solo-bakery.example.com' })).body.dnsConfigured).toBe(
      true,
    );
    expect((await claim(onboarder, 'onboarding', brandId)).body.error.details).toMatchObject({
      reason: 'keys_not_taken_over',
    });
    // Rotating the keys itself (it is handed the new ones) changes nothing.
    const rotated = await send(onboarder, 'POST', '/onboarding/keys', { action: 'rotate', brandId });
    expect(rotated.status).toBe(200);
    for (let i = 0; i < 6; i++) {
      platform.clock.advance(1_000);
      await platform.signedPost(
        '/pts-api/manual-event',
        { brandId, eventType: 'account_creation', userEmail: newUser() },
        rotated.body.data.securityKey,
      );
    }
    platform.clock.advance(8 * DAY_MS);
    expect((await claim(onboarder, 'onboarding', brandId)).body.error.details).toMatchObject({
      reason: 'keys_not_taken_over',
    });
    const { claimable } = (await send(onboarder, 'GET', '/agent/rewards')).body.data;
    expect(claimable.filter((c: { rewardType: string }) => c.rewardType === 'onboarding')).toEqual([]);
    expect((await rewardMintsOf(onboarder.keyId)).filter((m) => m.event_type === 'agent_reward_onboarding')).toEqual(
      [],
    );
  });

  it('500 pts once the real brand proved its domain, took its keys over and its members were active for a week', async () => {
    const onboarder = await newKey([], { canOnboard: true });
    const other = await newKey([shop.brandId], { canOnboard: true });
    const onboarded = await onboard(onboarder, 'fresh-bakery.example.com');
    const brandId = onboarded.brandId;
    // The owner proves its domain and rotates its keys (here through the operator's CLI): the key no longer holds one.
    dns.set('_pts.fresh-bakery.example.com', { txt: [[`brand_id=${brandId};api_key=${onboarded.apiKey}`]] });
    expect(
      (await platform.post('/pts-api/verify-dns', { domain: 'fresh-bakery.example.com' })).body.dnsConfigured,
    ).toBe(true);
    const owner = await rotateAsOperator(brandId);
    // Members' events through the brand's own server, signed with the owner's key.
    const memberEvent = () => {
      platform.clock.advance(1_000);
      return platform.signedPost(
        '/pts-api/manual-event',
        { brandId, eventType: 'account_creation', userEmail: newUser() },
        owner.securityKey,
      );
    };
    for (let i = 0; i < 4; i++) expect((await memberEvent()).status).toBe(200);
    const few = await claim(onboarder, 'onboarding', brandId);
    expect(few.status).toBe(403);
    expect(few.body.error.details).toMatchObject({ reason: 'not_enough_members', members: 4 });
    expect((await memberEvent()).status).toBe(200);
    const held = await claim(onboarder, 'onboarding', brandId);
    expect(held.status).toBe(403);
    expect(held.body.error.details).toMatchObject({ reason: 'evidence_period', members: 5 });
    const eligibleAt = Date.parse(held.body.error.details.eligibleAt);
    // Another key did not onboard it.
    const stranger = await claim(other, 'onboarding', brandId);
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.details).toMatchObject({ reason: 'not_onboarded_by_key' });

    platform.clock.set(new Date(eligibleAt + 1_000));
    const res = await claim(onboarder, 'onboarding', 'fresh-bakery.example.com');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.claim).toMatchObject({ brandId, rewardType: 'onboarding', amount: 500 });
    expect((await claim(onboarder, 'onboarding', brandId)).status).toBe(409);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, res.body.data.wallet.address)).toBe(500n);
    const read = await send(onboarder, 'GET', '/agent/rewards');
    expect(read.body.data).toMatchObject({
      earnings: { total: 500, discovery: 0, onboarding: 500, claims: 1 },
      activity: { onboardedBrands: 1 },
      wallet: { balance: 500, pending: 0 },
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
