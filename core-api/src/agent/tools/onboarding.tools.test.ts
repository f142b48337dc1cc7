import type { CreatedBrand } from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { type FakeDnsServer, startFakeDnsServer } from '../../../test/fakes/dns-server.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from '../../chain/anvil.ts';
import { relayContractsOf } from '../../chain/contract-addresses.ts';
import { brandAddressProofMessage } from '../../modules/brands/brand-registration.ts';
import { createSystemTxtResolver } from '../../modules/dns/dns.service.ts';

// Onboarding over HTTP with real keys: the key's brands are read per request, so a brand granted by
// onboard_brand is usable by the very next call of the same key.

let platform: TestPlatform;
let dns: FakeDnsServer;
let shop: CreatedBrand;
let onboarder: AgentKeyCredentials;
let plain: AgentKeyCredentials;
let userCount = 0;

const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const newUser = () => `onboard-user${++userCount}@example.com`;

/** `key` null: unsigned. */
function send(method: string, path: string, body: unknown, key: AgentKeyCredentials | null = onboarder) {
  platform.clock.advance(1_000);
  return agentRequest(platform, { method, path, body, ...(key ? { key } : {}) });
}

let siteCount = 0;

/** An address the caller controls and its EIP-191 proof for `host` (docs/agent-api/program.md, "Onboarding"). */
async function provenAddress(host: string, account = privateKeyToAccount(generatePrivateKey())) {
  const addressSignature = await account.signMessage({ message: brandAddressProofMessage(account.address, host) });
  return { brandAddress: account.address, addressSignature };
}

/** A body without brandAddress (pts generates it) on a domain no brand holds. */
const onboardBody = (overrides: Record<string, unknown> = {}) => ({
  businessName: 'Corner Bakery',
  contactEmail: 'Owner@Corner-Bakery.example.com',
  website: `https://www.bakery${++siteCount}.example.com/about`,
  category: 'Dining',
  description: 'Bread and rewards',
  ...overrides,
});

/** A brand-signed event (the brand's own server) with `securityKey`. */
function signedEvent(brandId: string, securityKey: string) {
  platform.clock.advance(1_000);
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId, eventType: 'account_creation', userEmail: newUser() },
    securityKey,
  );
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
  shop = await platform.createBrand({ name: 'Not yours', domain: 'not-yours.example.com' });
  onboarder = await createFixtureKey(platform, { name: 'onboarder', canOnboard: true, ratePerMinute: 1000 });
  plain = await createFixtureKey(platform, { name: 'plain', ratePerMinute: 1000 });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await dns?.close();
});

describe('onboard_brand', () => {
  it('creates a real brand with its category and default rules, granted to the key, taking events at once', async () => {
    const proof = await provenAddress('www.corner-bakery.example.com');
    const body = { ...onboardBody({ website: 'https://www.corner-bakery.example.com/about' }), ...proof };
    const res = await send('POST', '/onboarding/brands', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const brandId = proof.brandAddress.toLowerCase();
    expect(res.body.data).toMatchObject({
      brandId,
      name: 'Corner Bakery',
      domain: 'www.corner-bakery.example.com',
      category: 'dining',
      grantedToKey: onboarder.keyId,
      securityKey: expect.stringMatching(/^pts_sk_/),
      apiKey: expect.stringMatching(/^pts_ak_/),
    });
    expect(res.body.data.events).toContainEqual(
      expect.objectContaining({ eventType: 'account_creation', rewardAmount: 100 }),
    );
    const row = await platform.deps.db
      .selectFrom('agent_brand_onboardings')
      .selectAll()
      .where('brand_id', '=', brandId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      key_id: onboarder.keyId,
      contact_email: 'owner@corner-bakery.example.com',
      website: body.website,
      description: 'Bread and rewards',
    });
    const key = await platform.deps.db
      .selectFrom('agent_keys')
      .select('brand_ids')
      .where('key_id', '=', onboarder.keyId)
      .executeTakeFirstOrThrow();
    expect(key.brand_ids).toContain(brandId);
    // The same key sends the new brand's first event: paid by the default rule.
    const event = await send('POST', '/events', { brandId, eventType: 'account_creation', userId: newUser() });
    expect(event.status, JSON.stringify(event.body)).toBe(200);
    expect(event.body.data).toMatchObject({ rewardAmount: 100, eventType: 'account_creation' });
    // The brand's own server signs with the returned security key.
    expect((await signedEvent(brandId, res.body.data.securityKey)).status).toBe(200);
    await waitForMintsSettled(platform);
    // Discovery lists it under its category.
    const listed = await send('GET', '/brands?category=dining', undefined, null);
    expect(listed.body.data.brands.map((b: { brandId: string }) => b.brandId)).toContain(brandId);
  });

  it('409 for an address that is already a brand; nothing is granted', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const brandId = account.address.toLowerCase();
    const first = await send(
      'POST',
      '/onboarding/brands',
      onboardBody(await provenAddress('first.example.net', account)),
    );
    expect(first.status).toBe(400); // the proof names the website's host: signed for another domain, refused
    const owned = await createFixtureKey(platform, { name: 'owner', canOnboard: true, ratePerMinute: 1000 });
    const body = {
      ...onboardBody({ website: 'https://first.example.net' }),
      ...(await provenAddress('first.example.net', account)),
    };
    expect((await send('POST', '/onboarding/brands', body, owned)).status).toBe(200);
    const again = {
      ...onboardBody({ website: 'https://second.example.net' }),
      ...(await provenAddress('second.example.net', account)),
    };
    const res = await send('POST', '/onboarding/brands', again);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    // The admin API's advice ("omit the address") does not apply: the address was given on purpose.
    expect(res.body.error.message).not.toMatch(/omit/);
    expect(res.body.error.message).toContain(brandId);
    expect(res.body.error.details).toMatchObject({ field: 'brandAddress', value: brandId });
    const key = await platform.deps.db
      .selectFrom('agent_keys')
      .select('brand_ids')
      .where('key_id', '=', onboarder.keyId)
      .executeTakeFirstOrThrow();
    expect(key.brand_ids).not.toContain(brandId);
  });

  it('without brandAddress pts generates the brand address', async () => {
    const res = await send('POST', '/onboarding/brands', onboardBody());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.brandId).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it('400 naming the field for a bad email, website, category or address', async () => {
    for (const [overrides, field] of [
      [{ contactEmail: 'not-an-email' }, 'contactEmail'],
      [{ website: 'corner-bakery.example.com' }, 'website'],
      [{ website: 'ftp://corner-bakery.example.com' }, 'website'],
      [{ website: 'https://under_score.example.com' }, 'website'],
      // A business site has a public domain name: not an IP address, not a single label like localhost.
      [{ website: 'http://127.0.0.1' }, 'website'],
      [{ website: 'https://10.0.0.8:8443/shop' }, 'website'],
      [{ website: 'https://localhost' }, 'website'],
      [{ category: 'bakery' }, 'category'],
      [{ brandAddress: '0x123' }, 'brandAddress'],
      [{ businessName: '' }, 'businessName'],
      [{ description: undefined }, 'description'],
    ] as const) {
      const res = await send('POST', '/onboarding/brands', onboardBody(overrides));
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.body.error.code).toBe('validation');
      expect(res.body.error.message).toContain(field);
    }
  });

  it('401 unsigned, 403 for a key without canOnboard', async () => {
    expect((await send('POST', '/onboarding/brands', onboardBody(), null)).status).toBe(401);
    const denied = await send('POST', '/onboarding/brands', onboardBody(), plain);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');
  });
});

describe('onboard_brand refuses what the key does not control', () => {
  const refusal = async (body: Record<string, unknown>) => {
    const res = await send('POST', '/onboarding/brands', body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('validation');
    return res.body.error as { message: string; details: { reason: string } };
  };

  it("refuses the platform's contracts and accounts, even with a signature of their own", async () => {
    const contracts = relayContractsOf(platform.deps);
    const platformAddresses = [
      contracts.rewardToken,
      contracts.pointsSale,
      contracts.perkNft,
      contracts.businessEscrow,
      platform.deps.chain.minterAddress,
      platform.deps.relayer.address,
    ];
    for (const address of platformAddresses) {
      expect(address, 'a deployed platform address').toMatch(/^0x[0-9a-fA-F]{40}$/);
      const error = await refusal(onboardBody({ brandAddress: address, addressSignature: '0x1234' }));
      expect(error.details.reason, address).toBe('platform_address');
    }
    // The minter's key is anvil's well-known one: a signature from it is still refused.
    const minter = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
    expect(minter.address.toLowerCase()).toBe(platform.deps.chain.minterAddress.toLowerCase());
    const host = 'minter-shop.example.com';
    const signed = { ...onboardBody({ website: `https://${host}` }), ...(await provenAddress(host, minter)) };
    expect((await refusal(signed)).details.reason).toBe('platform_address');
  });

  it('refuses an address with contract code', async () => {
    const address = newAddress();
    await fetch(platform.deps.chain.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setCode', params: [address, '0x6000'] }),
    });
    const error = await refusal(onboardBody({ brandAddress: address, addressSignature: '0x1234' }));
    expect(error.details.reason).toBe('contract_address');
  });

  it("refuses an address without its owner's EIP-191 signature (a member's wallet, 0x…01)", async () => {
    const store = await platform.createBrand({
      name: 'Member store',
      domain: 'member-store.example.com',
      rules: [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
    });
    platform.clock.advance(1_000);
    const member = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: store.brandId, eventType: 'earn', userEmail: newUser() },
      store.securityKey,
    );
    const memberWallet = member.body.walletAddress as string;
    for (const address of [memberWallet, '0x0000000000000000000000000000000000000001']) {
      expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
      const missing = await refusal(onboardBody({ brandAddress: address }));
      expect(missing.details.reason).toBe('address_proof_required');
      expect(missing.message).toContain('I control');
      // Signed by another key: refused too.
      const host = `wallet${++siteCount}.example.com`;
      const forged = await provenAddress(host);
      const body = {
        ...onboardBody({ website: `https://${host}` }),
        brandAddress: address,
        addressSignature: forged.addressSignature,
      };
      expect((await refusal(body)).details.reason).toBe('address_proof_invalid');
    }
    const brands = await platform.deps.db.selectFrom('brands').select('address').execute();
    expect(brands.map((b) => b.address)).not.toContain(memberWallet.toLowerCase());
  });

  it("refuses a domain a brand already holds; a claimant never shadows the verified owner's lookup or reward", async () => {
    const taken = await send(
      'POST',
      '/onboarding/brands',
      onboardBody({ website: 'https://not-yours.example.com/shop' }),
    );
    expect(taken.status).toBe(409);
    expect(taken.body.error.details).toMatchObject({ reason: 'domain_taken' });
    // An older claimant on the same domain (made before this rule, or by an operator) while the real brand proved it.
    const real = await platform.createBrand({
      name: 'Real shop',
      domain: 'real-shop.example.com',
      rules: [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
    });
    const claimant = await platform.createBrand({ name: 'Shop (official)', domain: 'real-shop.example.com' });
    dns.set('_pts.real-shop.example.com', { txt: [[`brand_id=${real.brandId};api_key=${real.apiKey}`]] });
    expect((await platform.post('/pts-api/verify-dns', { domain: 'real-shop.example.com' })).body.dnsConfigured).toBe(
      true,
    );
    const lookup = await send('GET', '/brands/check?query=real-shop.example.com', undefined, null);
    expect(lookup.status).toBe(200);
    expect(lookup.body.data.matches.map((m: { brandId: string }) => m.brandId)).toEqual([real.brandId]);
    // The claimant is still found by its own Brand ID.
    const byId = await send('GET', `/brands/check?query=${claimant.brandId}`, undefined, null);
    expect(byId.body.data.matches.map((m: { brandId: string }) => m.brandId)).toEqual([claimant.brandId]);
    // The real brand's reward claim by domain works.
    const agent = await createFixtureKey(platform, {
      name: 'real agent',
      brandIds: [real.brandId],
      ratePerMinute: 1000,
    });
    const event = await send('POST', '/events', { brandId: real.brandId, eventType: 'earn', userId: newUser() }, agent);
    expect(event.status, JSON.stringify(event.body)).toBe(200);
    const reward = await send(
      'POST',
      '/agent/rewards/claim',
      { rewardType: 'discovery', brandAddress: 'real-shop.example.com' },
      agent,
    );
    expect(reward.status, JSON.stringify(reward.body)).toBe(200);
    expect(reward.body.data.claim.brandId).toBe(real.brandId);
  });
});

describe('manage_brand_keys', () => {
  let brandId: string;
  let securityKey: string;
  beforeAll(async () => {
    const body = onboardBody();
    const res = await send('POST', '/onboarding/brands', body);
    brandId = res.body.data.brandId;
    securityKey = res.body.data.securityKey;
  });

  it('status never shows a secret', async () => {
    const res = await send('POST', '/onboarding/keys', { action: 'status', brandId });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      brandId,
      active: true,
      issuedAt: expect.any(String),
      rotatedAt: null,
      revokedAt: null,
      previousKeyValidUntil: null,
    });
  });

  it('rotate returns new keys once; the old security key is refused at once, the new one works', async () => {
    expect((await signedEvent(brandId, securityKey)).status).toBe(200);
    const rotated = await send('POST', '/onboarding/keys', { action: 'rotate', brandId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toMatchObject({
      active: true,
      rotatedAt: platform.clock.now().toISOString(),
      securityKey: expect.stringMatching(/^pts_sk_/),
      apiKey: expect.stringMatching(/^pts_ak_/),
    });
    expect(rotated.body.data.securityKey).not.toBe(securityKey);
    expect((await signedEvent(brandId, securityKey)).status).toBe(401);
    expect((await signedEvent(brandId, rotated.body.data.securityKey)).status).toBe(200);
    securityKey = rotated.body.data.securityKey;
    const status = await send('POST', '/onboarding/keys', { action: 'status', brandId });
    expect(status.body.data.securityKey).toBeUndefined();
    expect(status.body.data.rotatedAt).toBe(rotated.body.data.rotatedAt);
  });

  it('revoke stops the keys until a rotate', async () => {
    const revoked = await send('POST', '/onboarding/keys', { action: 'revoke', brandId });
    expect(revoked.body.data).toMatchObject({ active: false, revokedAt: platform.clock.now().toISOString() });
    expect(revoked.body.data.securityKey).toBeUndefined();
    expect((await signedEvent(brandId, securityKey)).status).toBe(401);
    const rotated = await send('POST', '/onboarding/keys', { action: 'rotate', brandId });
    expect(rotated.body.data).toMatchObject({ active: true, revokedAt: null });
    expect((await signedEvent(brandId, rotated.body.data.securityKey)).status).toBe(200);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('subject', '=', brandId)
      .where('action', 'like', 'brand.keys_%')
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['brand.keys_revoke', 'brand.keys_rotate', 'brand.keys_rotate']);
    expect(new Set(audit.map((a) => a.actor))).toEqual(new Set([`agent:${onboarder.keyId}`]));
  });

  it('403 for a brand the key does not hold; 400 for an unknown action', async () => {
    const denied = await send('POST', '/onboarding/keys', { action: 'rotate', brandId: shop.brandId });
    expect(denied.status).toBe(403);
    const bad = await send('POST', '/onboarding/keys', { action: 'delete', brandId });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('action');
  });
});
