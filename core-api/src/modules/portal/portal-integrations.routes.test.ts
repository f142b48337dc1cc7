import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreatedBrand } from '@pts/shared';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeStripeServer, fakeStripeEnv, startFakeStripe } from '../../../test/fakes/stripe-server.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { setupChatGroup } from '../community/chat-groups.service.ts';
import { portalBillingRoutes } from './portal-billing.routes.ts';
import { portalIntegrationRoutes } from './portal-integrations.routes.ts';

// The portal's Integrations and Billing routes against the real platform (fake Stripe, a local webhook
// receiver, a scripted TXT resolver): roles, CSRF, brand isolation on every route, secrets shown once and
// never logged, the key's grace period on the platform clock, and the audit log naming the portal user.

let platform: TestPlatform;
let stripe: FakeStripeServer;
let brandA: CreatedBrand;
let brandB: CreatedBrand;
let ownerA: PortalBrowser;
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
let receiver: Server;
let receiverUrl: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const logLines: string[] = [];
const txtRecords = new Map<string, string[][]>();
/** Every secret an answer showed: none may appear in a log line or a later read. */
const secrets: string[] = [];

const RULE = { eventType: 'key_check', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 };

beforeAll(async () => {
  stripe = await startFakeStripe();
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
  platform = await startTestPlatform(
    { ...fakeStripeEnv(stripe, `whsec_${randomBytes(16).toString('hex')}`), PTS_TRUST_PROXY: 'true' },
    {
      logger,
      resolveTxt: async (host) => {
        const records = txtRecords.get(host);
        if (!records) throw Object.assign(new Error(`no record at ${host}`), { code: 'ENOTFOUND' });
        return records;
      },
    },
  );
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules: [RULE] });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules: [RULE] });
  ownerA = await portalMember(platform, brandA.brandId, 'alice@a.example.com', 'owner');
  adminA = await portalMember(platform, brandA.brandId, 'adam@a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'victor@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'bob@b.example.com', 'owner');
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  await platform?.stop();
  await stripe?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const a = () => `/brands/${brandA.brandId}`;
const manualEvent = (securityKey: string, brand = brandA) =>
  platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: RULE.eventType, userEmail: `u${randomBytes(4).toString('hex')}@x.example` },
    securityKey,
  );
async function auditOf(browser: PortalBrowser, brandId = brandA.brandId) {
  const answer = await browser.request('GET', `/brands/${brandId}/audit`);
  return answer.body.entries as { actor: string; action: string; details: Record<string, unknown> }[];
}

describe('the security key', () => {
  let rotatedKey = '';
  /** The key the last rotation replaced, while its grace lasts. */
  let previousKey = '';

  it('only an owner rotates it: admin and viewer get 403 and the key still works', async () => {
    for (const browser of [adminA, viewerA]) {
      const refused = await browser.request('POST', `${a()}/keys/rotate`, { graceMinutes: 5 });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/needs owner/);
    }
    expect((await manualEvent(brandA.securityKey)).status).toBe(200);
  });

  it('rotating with a grace keeps the old key verifying until the grace ends, then refuses it', async () => {
    const rotated = await ownerA.request('POST', `${a()}/keys/rotate`, { graceMinutes: 5 });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const keys = rotated.body.keys;
    expect(keys.securityKey).toMatch(/^pts_sk_/);
    expect(keys.apiKey).toMatch(/^pts_ak_/);
    expect(new Date(keys.previousKeyValidUntil).getTime() - platform.clock.now().getTime()).toBe(5 * 60_000);
    secrets.push(keys.securityKey, keys.apiKey, brandA.securityKey);
    rotatedKey = keys.securityKey;
    brandA = { ...brandA, apiKey: keys.apiKey };

    expect((await manualEvent(brandA.securityKey)).status).toBe(200);
    expect((await manualEvent(rotatedKey)).status).toBe(200);
    platform.clock.advance(5 * 60_000 + 1_000);
    expect((await manualEvent(brandA.securityKey)).status).toBe(401);
    expect((await manualEvent(rotatedKey)).status).toBe(200);

    const audit = await auditOf(viewerA);
    expect(audit[0]).toMatchObject({
      actor: 'portal:alice@a.example.com',
      action: 'brand.keys_rotate',
      details: { graceMinutes: 5 },
    });
    const status = await viewerA.request('GET', `${a()}/integrations`);
    expect(status.body.keys).toMatchObject({ active: true, previousKeyValidUntil: null });
    expect(status.body.keys.rotatedAt).toBe(rotated.body.keys.rotatedAt);
  });

  it('a grace that is not whole minutes from 0 to a week is refused with what to fix', async () => {
    const bad = await ownerA.request('POST', `${a()}/keys/rotate`, { graceMinutes: -1 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/graceMinutes/);
    expect((await manualEvent(rotatedKey)).status).toBe(200);
  });

  it('a rotation that names no grace keeps the old key a day (the portal default), so nothing breaks at once', async () => {
    const rotated = await ownerA.request('POST', `${a()}/keys/rotate`, {});
    expect(rotated.status).toBe(200);
    const keys = rotated.body.keys;
    secrets.push(keys.securityKey, keys.apiKey);
    expect(new Date(keys.previousKeyValidUntil).getTime() - platform.clock.now().getTime()).toBe(24 * 3600_000);
    expect((await manualEvent(rotatedKey)).status).toBe(200);
    expect((await manualEvent(keys.securityKey)).status).toBe(200);
    expect((await auditOf(viewerA))[0]).toMatchObject({ action: 'brand.keys_rotate', details: { graceMinutes: 1440 } });
    const status = await viewerA.request('GET', `${a()}/integrations`);
    expect(status.body.keys.previousKeyValidUntil).toBe(keys.previousKeyValidUntil);
    previousKey = rotatedKey;
    rotatedKey = keys.securityKey;
    brandA = { ...brandA, apiKey: keys.apiKey };
  });

  it('"end the old key now" is its own owner-only action: the old key is refused at once, audited, once', async () => {
    const oldKey = (await ownerA.request('GET', `${a()}/integrations`)).body.keys;
    expect(oldKey.previousKeyValidUntil).not.toBeNull();
    const previous = previousKey;
    expect((await manualEvent(previous)).status).toBe(200);
    for (const browser of [adminA, viewerA]) {
      const refused = await browser.request('POST', `${a()}/keys/end-previous`);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/needs owner/);
    }
    expect((await ownerB.request('POST', `${a()}/keys/end-previous`)).status).toBe(404);
    expect((await ownerA.request('POST', `${a()}/keys/end-previous`, undefined, { csrf: false })).status).toBe(403);
    expect((await manualEvent(previous)).status).toBe(200);

    // Five clicks at once (two tabs, a double click): one ends the key, the others are told there is nothing left.
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => ownerA.request('POST', `${a()}/keys/end-previous`)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const ended = answers.find((answer) => answer.status === 200)!;
    expect(ended.body.keys).toMatchObject({ active: true, previousKeyValidUntil: null });
    expect(ended.body.keys.endedKeyWasValidUntil).toBe(oldKey.previousKeyValidUntil);
    expect(answers.find((answer) => answer.status === 409)!.body.error).toMatch(/nothing to end/);

    expect((await manualEvent(previous)).status).toBe(401);
    expect((await manualEvent(rotatedKey)).status).toBe(200);
    const audit = (await auditOf(viewerA)).filter((entry) => entry.action === 'brand.keys_end_previous');
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'portal:alice@a.example.com',
        details: { wasValidUntil: oldKey.previousKeyValidUntil },
      }),
    ]);
    const status = await viewerA.request('GET', `${a()}/integrations`);
    expect(status.body.keys.previousKeyValidUntil).toBeNull();
  });
});

describe('the integrations overview', () => {
  it('shows the SDK snippet, the WordPress values, domains, chat groups of this brand only, and no secret', async () => {
    await setupChatGroup(
      { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets, changes: platform.changes },
      { brandId: brandA.brandId, platform: 'discord', chatGroupId: '1234', groupName: 'A fans', setupBy: 'mod#1' },
    );
    await setupChatGroup(
      { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets, changes: platform.changes },
      { brandId: brandB.brandId, platform: 'telegram', chatGroupId: '-99', groupName: 'B fans', setupBy: 'mod#2' },
    );
    const answer = await viewerA.request('GET', `${a()}/integrations`);
    expect(answer.status).toBe(200);
    const body = answer.body;
    expect(body.sdk.snippet).toBe(
      `<script src="${platform.url}/sdk.js" data-brand-id="${brandA.brandId}" async></script>`,
    );
    expect(body.wordpress).toMatchObject({ apiUrl: platform.url, brandId: brandA.brandId });
    expect(body.domains).toMatchObject({
      websiteDomain: 'a.example.com',
      verifiedDomains: [],
      txtHost: '_pts.a.example.com',
      txtValue: `brand_id=${brandA.brandId};api_key=<your API key>`,
    });
    expect(body.chatGroups.map((g: { groupName: string }) => g.groupName)).toEqual(['A fans']);
    expect(body.xHandle).toBeNull();
    for (const secret of secrets) expect(answer.text).not.toContain(secret);
  });
});

describe('domains', () => {
  it("an admin verifies a subdomain of the brand's domain through its TXT record; the change is audited", async () => {
    txtRecords.set('_pts.shop.a.example.com', [[`brand_id=${brandA.brandId};api_key=${brandA.apiKey}`]]);
    expect((await viewerA.request('POST', `${a()}/domains/shop.a.example.com/verify`)).status).toBe(403);
    const missing = await adminA.request('POST', `${a()}/domains/blog.a.example.com/verify`);
    expect(missing.body).toMatchObject({ dnsConfigured: false, reason: 'no_record' });
    const announced: unknown[] = [];
    const unsubscribe = platform.changes.subscribe((change) => announced.push(change));
    const verified = await adminA.request('POST', `${a()}/domains/shop.a.example.com/verify`);
    unsubscribe();
    expect(verified.status).toBe(200);
    // Every replica's brand caches hear of the new domain, as after the public verify route.
    expect(announced).toContainEqual({ kind: 'brand', brandId: brandA.brandId });
    expect(verified.body).toMatchObject({ dnsConfigured: true, reason: 'verified', brandId: brandA.brandId });
    const overview = await viewerA.request('GET', `${a()}/integrations`);
    expect(overview.body.domains.verifiedDomains).toEqual(['shop.a.example.com']);
    expect((await auditOf(viewerA))[0]).toMatchObject({
      actor: 'portal:adam@a.example.com',
      action: 'brand.domain_verified',
      details: { domain: 'shop.a.example.com' },
    });
  });

  it("a domain outside the brand's website domain is not the brand's: 404, and bad names 400", async () => {
    txtRecords.set('_pts.b.example.com', [[`brand_id=${brandA.brandId};api_key=${brandA.apiKey}`]]);
    const other = await ownerA.request('POST', `${a()}/domains/b.example.com/verify`);
    expect(other.status).toBe(404);
    expect(other.body.error).toMatch(/not a\.example\.com or one of its subdomains/);
    expect((await ownerA.request('POST', `${a()}/domains/not_a_domain!/verify`)).status).toBe(400);
  });
});

describe('webhooks', () => {
  let deliveryId = '';

  it('an admin sets the URL: the signing secret is in that answer only, never in a later read', async () => {
    expect((await viewerA.request('PUT', `${a()}/webhook`, { url: receiverUrl })).status).toBe(403);
    const set = await adminA.request('PUT', `${a()}/webhook`, { url: receiverUrl });
    expect(set.status).toBe(200);
    expect(set.headers.get('cache-control')).toBe('no-store');
    expect(set.body.webhook.secret).toMatch(/^whsec_/);
    secrets.push(set.body.webhook.secret);
    const again = await adminA.request('PUT', `${a()}/webhook`, { url: `${receiverUrl}?v=2` });
    expect(again.body.webhook.secret).toBeUndefined();
    const read = await viewerA.request('GET', `${a()}/webhook`);
    expect(read.body.webhook).toMatchObject({ url: `${receiverUrl}?v=2`, active: true });
    expect(read.text).not.toContain(set.body.webhook.secret);
    expect(JSON.stringify(await auditOf(viewerA))).not.toContain(set.body.webhook.secret);
    expect((await adminA.request('PUT', `${a()}/webhook`, { url: 'ftp://x.example' })).status).toBe(400);
  });

  it('sends a signed test the receiver gets, lists the delivery, and replays it', async () => {
    expect((await viewerA.request('POST', `${a()}/webhook/test`)).status).toBe(403);
    const test = await adminA.request('POST', `${a()}/webhook/test`);
    expect(test.status).toBe(200);
    expect(test.body.result).toMatchObject({ delivered: true, statusCode: 200 });
    expect(received.at(-1)?.headers['x-pts-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(received.at(-1)!.body)).toMatchObject({ type: 'webhook.test' });
    deliveryId = test.body.result.delivery.id;
    const list = await viewerA.request('GET', `${a()}/webhook`);
    expect(list.body.deliveries[0]).toMatchObject({ id: deliveryId, type: 'webhook.test', status: 'delivered' });

    expect((await viewerA.request('POST', `${a()}/webhook/deliveries/${deliveryId}/replay`)).status).toBe(403);
    const replayed = await adminA.request('POST', `${a()}/webhook/deliveries/${deliveryId}/replay`);
    expect(replayed.status).toBe(200);
    expect(replayed.body.delivery).toMatchObject({ id: deliveryId, status: 'pending', attempts: 0 });
    const actions = (await auditOf(viewerA)).map((e) => `${e.actor} ${e.action}`);
    expect(actions).toContain('portal:adam@a.example.com webhook.test');
    expect(actions).toContain('portal:adam@a.example.com webhook.replay');
    expect(actions).toContain('portal:adam@a.example.com webhook.set');
  });

  it("brand B's owner cannot replay brand A's delivery, even through brand B's own path", async () => {
    const before = await viewerA.request('GET', `${a()}/webhook`);
    const viaB = await ownerB.request('POST', `/brands/${brandB.brandId}/webhook/deliveries/${deliveryId}/replay`);
    expect(viaB.status).toBe(404);
    const viaA = await ownerB.request('POST', `${a()}/webhook/deliveries/${deliveryId}/replay`);
    expect(viaA.status).toBe(404);
    const after = await viewerA.request('GET', `${a()}/webhook`);
    expect(after.body.deliveries[0].updatedAt).toBe(before.body.deliveries[0].updatedAt);
  });
});

describe('the X handle', () => {
  it('an admin sets it (the X rules appear), a viewer cannot, a bad handle says what to fix', async () => {
    expect((await viewerA.request('PUT', `${a()}/x-handle`, { xHandle: 'acme' })).status).toBe(403);
    const bad = await adminA.request('PUT', `${a()}/x-handle`, { xHandle: 'not a handle!' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/X handle/);
    const set = await adminA.request('PUT', `${a()}/x-handle`, { xHandle: '@acme_a' });
    expect(set.body).toEqual({ success: true, xHandle: 'acme_a' });
    expect((await viewerA.request('GET', `${a()}/integrations`)).body.xHandle).toBe('acme_a');
    const rules = await viewerA.request('GET', `${a()}/rules`);
    expect(rules.body.rules.map((r: { eventType: string }) => r.eventType)).toContain('post_mention');
    expect((await auditOf(viewerA)).map((e) => e.action)).toContain('brand.update');
  });
});

describe('agent keys', () => {
  let keyId = '';

  it('an admin creates a key for this brand only: the secret is shown once; the list never has it', async () => {
    expect((await viewerA.request('POST', `${a()}/agent-keys`, { name: 'bot' })).status).toBe(403);
    const created = await adminA.request('POST', `${a()}/agent-keys`, {
      name: 'Shop assistant',
      canManageProgram: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^[0-9a-f]{64}$/);
    secrets.push(created.body.secret);
    keyId = created.body.keyId;
    const list = await viewerA.request('GET', `${a()}/agent-keys`);
    expect(list.body.agentKeys).toEqual([
      expect.objectContaining({
        keyId,
        name: 'Shop assistant',
        brandIds: [brandA.brandId],
        canManageProgram: true,
        canOnboard: false,
        revokedAt: null,
        sharedWithOtherBrands: false,
      }),
    ]);
    expect(list.text).not.toContain(created.body.secret);
    expect((await ownerB.request('GET', `/brands/${brandB.brandId}/agent-keys`)).body.agentKeys).toEqual([]);
    expect((await adminA.request('POST', `${a()}/agent-keys`, { name: '', canOnboard: true })).status).toBe(400);
  });

  it("brand B cannot revoke brand A's key; a key shared with other brands is the operator's; an admin revokes", async () => {
    expect((await ownerB.request('POST', `/brands/${brandB.brandId}/agent-keys/${keyId}/revoke`)).status).toBe(404);
    expect((await ownerB.request('POST', `${a()}/agent-keys/${keyId}/revoke`)).status).toBe(404);
    expect((await viewerA.request('POST', `${a()}/agent-keys/${keyId}/revoke`)).status).toBe(403);
    const shared = await platform.post(
      '/admin/agent-keys',
      { name: 'operator key', brandIds: [brandA.brandId, brandB.brandId] },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    secrets.push(shared.body.secret);
    const refused = await ownerA.request('POST', `${a()}/agent-keys/${shared.body.keyId}/revoke`);
    expect(refused.status).toBe(403);
    const revoked = await adminA.request('POST', `${a()}/agent-keys/${keyId}/revoke`);
    expect(revoked.body).toEqual({ success: true, keyId, revoked: true });
    const list = await viewerA.request('GET', `${a()}/agent-keys`);
    const byId = new Map(list.body.agentKeys.map((k: { keyId: string }) => [k.keyId, k]));
    expect(byId.get(keyId)).toMatchObject({ revokedAt: expect.any(String) });
    expect(byId.get(shared.body.keyId)).toMatchObject({ revokedAt: null, sharedWithOtherBrands: true });
    const actions = (await auditOf(viewerA)).map((e) => `${e.actor} ${e.action}`);
    expect(actions).toContain('portal:adam@a.example.com agent_key.create');
    expect(actions).toContain('portal:adam@a.example.com agent_key.revoke');
  });
});

describe('billing', () => {
  let sessionId = '';

  it('an admin buys tokens through the checkout; paid, the purchase is minted and listed', async () => {
    expect((await viewerA.request('POST', `${a()}/checkout`, { amount: 1000 })).status).toBe(403);
    const tooSmall = await adminA.request('POST', `${a()}/checkout`, { amount: 50 });
    expect(tooSmall.status).toBe(400);
    expect(JSON.stringify(tooSmall.body)).toMatch(/at least 100 cents/);
    const opened = await adminA.request('POST', `${a()}/checkout`, { amount: 1000 });
    expect(opened.status).toBe(200);
    sessionId = opened.body.sessionId;
    const created = stripe.requests.find((r) => r.path === '/v1/checkout/sessions' && r.method === 'POST');
    expect(created?.form).toMatchObject({
      customer_email: 'adam@a.example.com',
      metadata: { wallet: brandA.brandId, usd_amount: '10.00', pts_amount: '10000' },
      success_url: `${platform.url}/portal/brands/${brandA.brandId}/billing?session_id={CHECKOUT_SESSION_ID}`,
    });
    const unpaid = await adminA.request('POST', `${a()}/purchases/${sessionId}/confirm`);
    expect(unpaid.status).toBe(409);
    stripe.markPaid(sessionId);
    const confirmed = await adminA.request('POST', `${a()}/purchases/${sessionId}/confirm`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.success).toBe(true);
    const billing = await viewerA.request('GET', `${a()}/billing`);
    expect(billing.body.purchases[0]).toMatchObject({
      sessionId,
      status: 'fulfilled',
      usdAmount: '10.00',
      ptsAmount: 10000,
    });
    expect(billing.body.totals).toMatchObject({ purchases: 1, fulfilled: 1 });
    expect(billing.body.checkout).toEqual({ minCents: 100, maxCents: 1_000_000, tokensPerUsd: 1000 });
    // The same numbers as the operator's views.
    const admin = { authorization: `Bearer ${platform.deps.adminToken}` };
    // Once the purchase's mint is confirmed (the minter confirms it in the background), both read the same.
    await expect
      .poll(async () => (await viewerA.request('GET', `${a()}/billing`)).body.totals.ptsConfirmed, { timeout: 20_000 })
      .toBe(10_000);
    const settled = await viewerA.request('GET', `${a()}/billing`);
    const purchases = await platform.get(`/admin/brands/${brandA.brandId}/purchases`, admin);
    expect(settled.body.totals).toEqual(purchases.body.totals);
    const gas = await platform.get(`/admin/relayer/gas?brand=${brandA.brandId}`, admin);
    const { brandId: _brand, ...brandGas } = gas.body.brands[0] ?? { brandId: null, ...gas.body.total };
    expect(billing.body.gas).toEqual(brandGas);
    expect((await auditOf(viewerA)).map((e) => `${e.actor} ${e.action}`)).toContain(
      'portal:adam@a.example.com payment.checkout',
    );
  });

  it("brand B's owner cannot confirm brand A's purchase or see its billing", async () => {
    expect((await ownerB.request('POST', `/brands/${brandB.brandId}/purchases/${sessionId}/confirm`)).status).toBe(404);
    expect((await ownerB.request('GET', `${a()}/billing`)).status).toBe(404);
  });
});

describe('CSRF and brand isolation on every route', () => {
  it('a change without the CSRF token changes nothing', async () => {
    const before = await viewerA.request('GET', `${a()}/integrations`);
    const webhookBefore = await viewerA.request('GET', `${a()}/webhook`);
    const keysBefore = await viewerA.request('GET', `${a()}/agent-keys`);
    const billingBefore = await viewerA.request('GET', `${a()}/billing`);
    const attempts: [string, string, unknown?][] = [
      ['POST', `${a()}/keys/rotate`, { graceMinutes: 0 }],
      ['POST', `${a()}/keys/end-previous`],
      ['PUT', `${a()}/webhook`, { url: `${receiverUrl}?csrf` }],
      ['DELETE', `${a()}/webhook`],
      ['POST', `${a()}/agent-keys`, { name: 'sneaky' }],
      ['PUT', `${a()}/x-handle`, { xHandle: 'sneaky' }],
      ['POST', `${a()}/checkout`, { amount: 1000 }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body, { csrf: false });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/CSRF/);
    }
    expect((await viewerA.request('GET', `${a()}/integrations`)).body).toEqual(before.body);
    // Earlier tests' deliveries may be delivered meanwhile (the worker runs): the webhook and which deliveries
    // exist must not change.
    const webhookView = ({ deliveries, ...rest }: { deliveries: { id: string }[] }) => ({
      ...rest,
      deliveries: deliveries.map((delivery) => delivery.id),
    });
    expect(webhookView((await viewerA.request('GET', `${a()}/webhook`)).body)).toEqual(webhookView(webhookBefore.body));
    expect((await viewerA.request('GET', `${a()}/agent-keys`)).body).toEqual(keysBefore.body);
    expect((await viewerA.request('GET', `${a()}/billing`)).body).toEqual(billingBefore.body);
  });

  it("brand A's owner gets 403/404 on every Integrations and Billing route of brand B, and changes nothing", async () => {
    const b = `/brands/${brandB.brandId}`;
    await ownerB.request('PUT', `${b}/webhook`, { url: receiverUrl });
    const test = await ownerB.request('POST', `${b}/webhook/test`);
    const bKey = await ownerB.request('POST', `${b}/agent-keys`, { name: 'B key' });
    const checkout = await ownerB.request('POST', `${b}/checkout`, { amount: 500 });
    const attempts: [string, string, unknown?][] = [
      ['GET', `${b}/integrations`],
      ['POST', `${b}/keys/rotate`, { graceMinutes: 0 }],
      ['POST', `${b}/keys/end-previous`],
      ['POST', `${b}/domains/b.example.com/verify`],
      ['DELETE', `${b}/domains/b.example.com`],
      ['GET', `${b}/webhook`],
      ['PUT', `${b}/webhook`, { url: `${receiverUrl}?mole` }],
      ['DELETE', `${b}/webhook`],
      ['POST', `${b}/webhook/test`],
      ['POST', `${b}/webhook/deliveries/${test.body.result.delivery.id}/replay`],
      ['PUT', `${b}/x-handle`, { xHandle: 'mole' }],
      ['GET', `${b}/agent-keys`],
      ['POST', `${b}/agent-keys`, { name: 'mole' }],
      ['POST', `${b}/agent-keys/${bKey.body.keyId}/revoke`],
      ['GET', `${b}/billing`],
      ['POST', `${b}/checkout`, { amount: 1000 }],
      ['POST', `${b}/purchases/${checkout.body.sessionId}/confirm`],
    ];
    const before = {
      keys: (await ownerB.request('GET', `${b}/integrations`)).body,
      webhook: (await ownerB.request('GET', `${b}/webhook`)).body,
      agentKeys: (await ownerB.request('GET', `${b}/agent-keys`)).body,
      billing: (await ownerB.request('GET', `${b}/billing`)).body,
    };
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    expect((await ownerB.request('GET', `${b}/integrations`)).body).toEqual(before.keys);
    expect((await ownerB.request('GET', `${b}/webhook`)).body).toEqual(before.webhook);
    expect((await ownerB.request('GET', `${b}/agent-keys`)).body).toEqual(before.agentKeys);
    expect((await ownerB.request('GET', `${b}/billing`)).body).toEqual(before.billing);
    expect((await manualEvent(brandB.securityKey, brandB)).status).toBe(200);

    // The attempts cover every route of both tables.
    const tables = [
      ...portalIntegrationRoutes({
        ...platform.services,
        ...platform.services.portal,
        brands: platform.services.brandAdmin,
      }),
      ...portalBillingRoutes({ ...platform.services, ...platform.services.portal }),
    ];
    const covered = new Set(
      attempts.map(
        ([method, path]) =>
          `${method} ${path
            .replace(brandB.brandId, ':brandId')
            .replace('b.example.com', ':domain')
            .replace(test.body.result.delivery.id, ':deliveryId')
            .replace(bKey.body.keyId, ':keyId')
            .replace(checkout.body.sessionId, ':sessionId')}`,
      ),
    );
    expect([...covered].sort()).toEqual(tables.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort());
    // And they are all in the OpenAPI document.
    const paths = (await platform.get('/openapi.json')).body.paths;
    for (const route of tables) {
      const documented = `/portal/api${route.path.replace(/:(\w+)/g, '{$1}')}`;
      expect(paths[documented]?.[route.method], documented).toBeDefined();
    }
  });

  it('no secret any answer showed is in a log line', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    expect(logLines.length).toBeGreaterThan(0);
    const log = logLines.join('\n');
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});
