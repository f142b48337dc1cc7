import type { CreatedBrand } from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// Onboarding over HTTP with real keys: the key's brands are read per request, so a brand granted by
// onboard_brand is usable by the very next call of the same key.

let platform: TestPlatform;
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

const onboardBody = (overrides: Record<string, unknown> = {}) => ({
  brandAddress: newAddress(),
  businessName: 'Corner Bakery',
  contactEmail: 'Owner@Corner-Bakery.example.com',
  website: 'https://www.corner-bakery.example.com/about',
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
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  shop = await platform.createBrand({ name: 'Not yours', domain: 'not-yours.example.com' });
  onboarder = await createFixtureKey(platform, { name: 'onboarder', canOnboard: true, ratePerMinute: 1000 });
  plain = await createFixtureKey(platform, { name: 'plain', ratePerMinute: 1000 });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('onboard_brand', () => {
  it('creates a real brand with its category and default rules, granted to the key, taking events at once', async () => {
    const body = onboardBody();
    const res = await send('POST', '/onboarding/brands', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const brandId = body.brandAddress.toLowerCase();
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
    const res = await send('POST', '/onboarding/brands', onboardBody({ brandAddress: shop.brandId }));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    // The admin API's advice ("omit the address") does not apply: brandAddress is required here.
    expect(res.body.error.message).not.toMatch(/omit/);
    expect(res.body.error.message).toContain(shop.brandId);
    expect(res.body.error.details).toMatchObject({ field: 'brandAddress', value: shop.brandId });
    const key = await platform.deps.db
      .selectFrom('agent_keys')
      .select('brand_ids')
      .where('key_id', '=', onboarder.keyId)
      .executeTakeFirstOrThrow();
    expect(key.brand_ids).not.toContain(shop.brandId);
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
