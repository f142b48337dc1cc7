import { Writable } from 'node:stream';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { portalMember } from '../../../test/portal-browser.ts';
import {
  customerCreatePayload,
  orderPaidPayload,
  refundCreateBody,
  sendShopifyWebhook,
} from '../../../test/shopify-sender.ts';
import { runCli } from '../../cli/run-cli.ts';

// Orders from Shopify (issue 35 §3, docs/shop-program.md "Shopify"): a local sender posts Shopify's payload
// shapes with real X-Shopify-Hmac-Sha256 headers to the brand's webhook address; paid orders earn a purchase
// under a rate rule through the one event path, minted on anvil. Runs on PGlite, and on PostgreSQL with
// PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'shopify-admin-token-0123456789abcdef';
const SHOP = 'pts-test-shop.myshopify.com';
const SECRET = 'shpss_0123456789abcdef0123456789abcdef';
let platform: TestPlatform;
let brand: CreatedBrand;
let hookUrl: string;
let logs = '';
let n = 0;
const nextEmail = () => `shopper${++n}@example.com`;

async function admin(method: 'PUT' | 'GET' | 'DELETE', path: string, body?: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

/** One delivery from the connected shop, a second after the last one (the platform's clock is manual). */
const send = (topic: string, payload: unknown, overrides: Record<string, unknown> = {}) => {
  platform.clock.advance(1_000);
  return sendShopifyWebhook(hookUrl, { topic, shopDomain: SHOP, secret: SECRET, payload, ...overrides });
};

/** The events of one shopper (each test's shopper is new). */
async function eventsOf(email: string) {
  return platform.deps.db
    .selectFrom('events')
    .select(['id', 'status', 'reward_amount', 'value_minor', 'value_currency', 'user_email'])
    .where('brand_id', '=', brand.brandId)
    .where('user_email', '=', email)
    .execute();
}

/** The accepted event holding an order id as its externalId. */
async function orderEvent(orderId: string) {
  return platform.deps.db
    .selectFrom('event_external_ids')
    .select('event_id')
    .where('brand_id', '=', brand.brandId)
    .where('event_type', '=', 'purchase')
    .where('external_id', '=', orderId)
    .executeTakeFirst();
}

const orderIdOf = (order: Record<string, unknown>) => String(order.admin_graphql_api_id).split('/').pop() as string;

async function deliveryRow(webhookId: string) {
  return platform.deps.db
    .selectFrom('shopify_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
}

const jsonOf = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

/** The brand's audit entries of one action, newest first. */
async function auditOf(action: string) {
  return platform.deps.db
    .selectFrom('audit_log')
    .select(['actor', 'action', 'subject', 'details'])
    .where('brand_id', '=', brand.brandId)
    .where('action', '=', action)
    .orderBy('id', 'desc')
    .execute();
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  platform = await startTestPlatform(
    { PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' },
    { logger: pino({ level: 'trace' }, sink) },
  );
  brand = await platform.createBrand({ name: 'Snow Shop', domain: 'snow.example.com' });
  const rule = await admin('PUT', `/brands/${brand.brandId}/rules/purchase`, {
    rate: { pts: 2, per: '1.00', currency: 'USD' },
    cooldownHours: 0,
    maxClaims: -1,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  const signup = await admin('PUT', `/brands/${brand.brandId}/rules/account_creation`, {
    rewardAmount: 50,
    cooldownHours: 0,
    maxClaims: 1,
  });
  expect(signup.status, JSON.stringify(signup.body)).toBe(200);
  hookUrl = `${platform.url}/integrations/shopify/${brand.brandId}/webhooks`;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('connecting a shop (admin API)', () => {
  it('refuses a malformed shop domain or a short secret with what to fix (400)', async () => {
    const badShop = await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: 'shop.com', secret: SECRET });
    expect(badShop.status).toBe(400);
    expect(JSON.stringify(badShop.body)).toContain('myshopify.com');
    const badSecret = await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: 'short' });
    expect(badSecret.status).toBe(400);
    expect(JSON.stringify(badSecret.body)).toContain('at least 16');
  });

  it('answers 404 for an unknown brand and for a webhook to a brand with no shop', async () => {
    const unknown = await admin('PUT', `/brands/0x${'1'.repeat(40)}/shopify`, { shopDomain: SHOP, secret: SECRET });
    expect(unknown.status).toBe(404);
    const early = await send('orders/paid', orderPaidPayload());
    expect(early.status).toBe(404);
    expect(early.body.error).toContain('No Shopify shop is connected');
  });

  it('connects: answers the webhook address and topics, never the secret, and stores the secret encrypted', async () => {
    const connected = await admin('PUT', `/brands/${brand.brandId}/shopify`, {
      shopDomain: ` ${SHOP.toUpperCase()} `,
      secret: SECRET,
    });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body.connection).toMatchObject({
      shopDomain: SHOP,
      valueSource: 'subtotal',
      customers: false,
      webhookUrl: hookUrl,
      topics: ['orders/paid', 'refunds/create'],
    });
    expect(JSON.stringify(connected.body)).not.toContain(SECRET);
    const row = await platform.deps.db.selectFrom('shopify_shops').selectAll().executeTakeFirstOrThrow();
    expect(row.secret_encrypted).not.toContain(SECRET);
    expect(platform.deps.secrets.decrypt(row.secret_encrypted)).toBe(SECRET);
  });
});

describe('orders/paid', () => {
  it("earns a purchase of the order's subtotal under the rate rule, minted on chain", async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email, subtotal: '123.45', total: '140.00' });
    const sent = await send('orders/paid', order);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ success: true, result: 'rewarded', rewardAmount: 246 });
    const orderId = orderIdOf(order);
    // The exact 64-bit id (from admin_graphql_api_id), not the JSON number that lost digits.
    expect(orderId).not.toBe(String(order.id));
    expect(await orderEvent(orderId)).toMatchObject({ event_id: sent.body.eventId });
    const [event] = await eventsOf(email);
    expect(event).toMatchObject({ id: sent.body.eventId, status: 'accepted', value_currency: 'USD' });
    expect(String(event?.reward_amount)).toBe('246');
    expect(String(event?.value_minor)).toBe('12345');
    await waitForMintsSettled(platform);
    const user = await platform.deps.db
      .selectFrom('users')
      .select('wallet_address')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(await tokenBalance(platform, user.wallet_address as string)).toBe(246n);
    const row = await deliveryRow(sent.webhookId);
    expect(row).toMatchObject({ result: 'rewarded', topic: 'orders/paid', order_id: orderId, event_id: event?.id });
  });

  it('does nothing on a replay of the same X-Shopify-Webhook-Id, even 12 at once', async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email, subtotal: '10.00' });
    const webhookId = `replay-${orderIdOf(order)}`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => send('orders/paid', order, { webhookId })));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(answers.filter((a) => a.body.duplicate !== true)).toHaveLength(1);
    expect(await eventsOf(email)).toHaveLength(1);
    await waitForMintsSettled(platform);
    const replay = await send('orders/paid', order, { webhookId });
    expect(replay.body).toMatchObject({ duplicate: true, result: 'rewarded', rewardAmount: 20 });
    expect(await eventsOf(email)).toHaveLength(1);
    const deliveries = await platform.deps.db
      .selectFrom('shopify_deliveries')
      .select('id')
      .where('webhook_id', '=', webhookId)
      .execute();
    expect(deliveries).toHaveLength(1);
  });

  it('rewards an order once when Shopify sends it again under a new webhook id', async () => {
    const order = orderPaidPayload({ email: nextEmail(), subtotal: '5.00' });
    const first = await send('orders/paid', order);
    const again = await send('orders/paid', order);
    expect(first.body).toMatchObject({ result: 'rewarded', rewardAmount: 10 });
    expect(again.body).toMatchObject({ result: 'duplicate', eventId: first.body.eventId, rewardAmount: 10 });
  });

  it('refuses a wrong secret with 401 and records neither an event nor a delivery', async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email });
    const wrong = await sendShopifyWebhook(hookUrl, {
      topic: 'orders/paid',
      shopDomain: SHOP,
      secret: 'shpss_not-the-connected-secret-at-all',
      payload: order,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toContain('X-Shopify-Hmac-Sha256 does not match');
    const missing = await send('orders/paid', order, { hmac: null });
    expect(missing.status).toBe(401);
    const garbage = await send('orders/paid', order, { hmac: '!!not base64!!' });
    expect(garbage.status).toBe(401);
    // A body changed after signing (one byte) does not verify either.
    const tampered = await send('orders/paid', order, {
      rawBody: JSON.stringify({ ...order, subtotal_price: '99999.00' }),
      hmac: (await import('../../../test/shopify-sender.ts')).shopifyHmac(SECRET, JSON.stringify(order)),
    });
    expect(tampered.status).toBe(401);
    expect(await eventsOf(email)).toHaveLength(0);
    expect(await deliveryRow(wrong.webhookId)).toBeUndefined();
    expect(await deliveryRow(tampered.webhookId)).toBeUndefined();
  });

  it('refuses a delivery from another shop (403) and lists it as failed with the reason', async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email });
    const other = await send('orders/paid', order, { shopDomain: 'someone-else.myshopify.com' });
    expect(other.status).toBe(403);
    expect(other.body.error).toContain('is not the shop connected');
    expect(await eventsOf(email)).toHaveLength(0);
    expect(await deliveryRow(other.webhookId)).toMatchObject({
      result: 'failed',
      reason: `sent by someone-else.myshopify.com, but the connected shop is ${SHOP}`,
    });
  });

  it('refuses an order in a currency the brand does not use: 200 (no retries), a failed delivery with the reason', async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email, currency: 'EUR', subtotal: '50.00' });
    const sent = await send('orders/paid', order);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ result: 'failed', rewardAmount: null });
    expect(sent.body.reason).toContain("value.currency EUR is not this brand's currency USD");
    expect((await eventsOf(email)).filter((e) => e.status === 'accepted')).toHaveLength(0);
    expect(await deliveryRow(sent.webhookId)).toMatchObject({ result: 'failed', reason: sent.body.reason });
  });

  it('fails an order without a customer e-mail, and one in a currency pts does not know, with the reason', async () => {
    const guest = await send('orders/paid', orderPaidPayload({ email: null }));
    expect(guest.body).toMatchObject({
      result: 'failed',
      reason: 'the order has no customer e-mail: nobody to reward',
    });
    const odd = await send('orders/paid', orderPaidPayload({ email: nextEmail(), currency: 'XYZ' }));
    expect(odd.body).toMatchObject({ result: 'failed', reason: "the order's currency XYZ is not one pts supports" });
  });

  it('answers bad input with 4xx, never 500: not JSON, not an order, missing headers, a malformed brand id', async () => {
    const notJson = await send('orders/paid', undefined, { rawBody: '{"id": 1, "currency": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toBe('The webhook body is not valid JSON');
    const notOrder = await send('orders/paid', { hello: 'world' });
    expect(notOrder.status).toBe(200);
    expect(notOrder.body).toMatchObject({ result: 'failed' });
    expect(notOrder.body.reason).toContain('not an order: id');
    const noTopic = await sendShopifyWebhook(hookUrl, {
      topic: '',
      shopDomain: SHOP,
      secret: SECRET,
      payload: orderPaidPayload(),
    });
    expect(noTopic.status).toBe(400);
    expect(noTopic.body.error).toContain('X-Shopify-Topic is missing');
    const badBrand = await sendShopifyWebhook(`${platform.url}/integrations/shopify/0xnope/webhooks`, {
      topic: 'orders/paid',
      shopDomain: SHOP,
      secret: SECRET,
      payload: orderPaidPayload(),
    });
    expect(badBrand.status).toBe(400);
  });

  it('pays by the total when the brand chooses it', async () => {
    const reconnect = await admin('PUT', `/brands/${brand.brandId}/shopify`, {
      shopDomain: SHOP,
      secret: SECRET,
      valueSource: 'total',
      customers: true,
    });
    expect(reconnect.body.connection).toMatchObject({ valueSource: 'total', customers: true });
    expect(reconnect.body.connection.topics).toEqual(['orders/paid', 'refunds/create', 'customers/create']);
    const sent = await send('orders/paid', orderPaidPayload({ email: nextEmail(), subtotal: '10.00', total: '12.99' }));
    // 2 pts per 1.00 of 12.99 = 25.98, rounded down.
    expect(sent.body).toMatchObject({ result: 'rewarded', rewardAmount: 25 });
  });
});

describe('customers/create', () => {
  it('earns account_creation for a new customer when enabled (it is, since the reconnect above)', async () => {
    const email = nextEmail();
    const sent = await send('customers/create', customerCreatePayload(email));
    expect(sent.body).toMatchObject({ result: 'rewarded', rewardAmount: 50 });
  });

  it('ignores customers/create when the brand did not enable it', async () => {
    await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET, customers: false });
    const sent = await send('customers/create', customerCreatePayload(nextEmail()));
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ result: 'ignored', eventId: null });
    expect(sent.body.reason).toContain('customers/create is not enabled');
  });
});

describe('refunds/create', () => {
  // The refund path end to end (reversals on chain, refunds before orders) is shopify.refunds.test.ts.
  it('keeps a refund of an order it has not seen waiting for that order (listed, nothing taken back)', async () => {
    const sent = await send('refunds/create', undefined, {
      rawBody: refundCreateBody({ orderId: 450789469, lines: ['41.94'] }).body,
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ result: 'waiting', eventId: null, rewardAmount: null });
    expect(sent.body.reason).toContain('waiting for its order');
  });
});

describe('deliveries and secrets', () => {
  it('lists the last deliveries newest first on the admin API, never the secret', async () => {
    const listed = await admin('GET', `/brands/${brand.brandId}/shopify`);
    expect(listed.status).toBe(200);
    expect(listed.body.connection.shopDomain).toBe(SHOP);
    expect(listed.body.webhookUrl).toBe(hookUrl);
    const stored = await platform.deps.db.selectFrom('shopify_deliveries').select('id').execute();
    expect(listed.body.deliveries.length).toBe(Math.min(stored.length, 20));
    expect(listed.body.deliveries[0]).toMatchObject({ topic: 'refunds/create', result: 'waiting' });
    const results = new Set(listed.body.deliveries.map((d: { result: string }) => d.result));
    expect(results).toEqual(new Set(['rewarded', 'duplicate', 'failed', 'ignored', 'waiting']));
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
  });

  it('never writes the secret to the logs (trace level)', () => {
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(SECRET);
  });
});

describe('pts shopify (CLI)', () => {
  async function pts(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: ADMIN_TOKEN },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });
    return { code, stdout, stderr };
  }

  it('connects a shop with --json (one JSON object, no secret) and lists its deliveries', async () => {
    const run = await pts([
      'shopify',
      'connect',
      '--brand',
      brand.brandId,
      '--shop',
      SHOP,
      '--secret',
      SECRET,
      '--value',
      'subtotal',
      '--customers',
      '--json',
    ]);
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    const connection = JSON.parse(run.stdout);
    expect(connection).toMatchObject({
      shopDomain: SHOP,
      valueSource: 'subtotal',
      customers: true,
      webhookUrl: hookUrl,
    });
    expect(run.stdout).not.toContain(SECRET);
    const listed = await pts(['shopify', 'deliveries', '--brand', brand.brandId]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('refunds/create');
    expect(listed.stdout).toContain('waiting for its order');
  });

  it('refuses a bad --value (exit 2) and a bad shop domain (exit 1, the server says what to fix)', async () => {
    const badValue = await pts([
      'shopify',
      'connect',
      '--brand',
      brand.brandId,
      '--shop',
      SHOP,
      '--secret',
      SECRET,
      '--value',
      'net',
    ]);
    expect(badValue.code).toBe(2);
    expect(badValue.stderr).toContain('--value must be subtotal or total');
    const badShop = await pts([
      'shopify',
      'connect',
      '--brand',
      brand.brandId,
      '--shop',
      'example.com',
      '--secret',
      SECRET,
    ]);
    expect(badShop.code).toBe(1);
    expect(badShop.stderr).toContain('myshopify.com');
  });
});

describe('the portal (Integrations page API)', () => {
  it('lets an admin connect, refuses a viewer 403 before 400, and shows every member the deliveries', async () => {
    const adminUser = await portalMember(platform, brand.brandId, 'adam@snow.example.com', 'admin');
    const viewer = await portalMember(platform, brand.brandId, 'victor@snow.example.com', 'viewer');
    const path = `/brands/${brand.brandId}/shopify`;
    const refused = await viewer.request('PUT', path, { shopDomain: 'not a domain' });
    expect(refused.status).toBe(403);
    const bad = await adminUser.request('PUT', path, { shopDomain: 'shop.example.com', secret: SECRET });
    expect(bad.status).toBe(400);
    const connected = await adminUser.request('PUT', path, { shopDomain: SHOP, secret: SECRET, valueSource: 'total' });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body.connection).toMatchObject({ shopDomain: SHOP, valueSource: 'total' });
    expect(JSON.stringify(connected.body)).not.toContain(SECRET);
    const audited = await auditOf('shopify.connect');
    expect(audited[0]).toMatchObject({ actor: 'portal:adam@snow.example.com', subject: brand.brandId });
    expect(jsonOf(audited[0]?.details)).toEqual({ shopDomain: SHOP, valueSource: 'total', customers: false });
    expect(JSON.stringify(audited)).not.toContain(SECRET);
    const read = await viewer.request('GET', path);
    expect(read.status).toBe(200);
    expect(read.body.webhookUrl).toBe(`${platform.url}/integrations/shopify/${brand.brandId}/webhooks`);
    expect(read.body.deliveries[0]).toMatchObject({ topic: 'refunds/create', result: 'waiting' });
    const stranger = await portalMember(
      platform,
      (await platform.createBrand({ domain: 'x.example' })).brandId,
      'zed@x.example',
      'owner',
    );
    expect((await stranger.request('GET', path)).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the webhook address and the admin routes with their answers', async () => {
    const doc = await platform.get('/openapi.json');
    const hook = doc.body.paths['/integrations/shopify/{brandId}/webhooks']?.post;
    expect(Object.keys(hook?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
    expect(doc.body.paths['/admin/brands/{brandId}/shopify']).toMatchObject({
      put: expect.any(Object),
      get: expect.any(Object),
    });
    const schemas = doc.body.components.schemas;
    expect(Object.keys(schemas.ShopifyWebhookResponse?.properties ?? {})).toEqual(
      expect.arrayContaining(['result', 'reason', 'eventId', 'rewardAmount', 'duplicate']),
    );
    expect(Object.keys(schemas.ShopifyIntegration?.properties ?? {})).toEqual(
      expect.arrayContaining(['connection', 'webhookUrl', 'deliveries']),
    );
  });
});

describe('disconnecting a shop', () => {
  it('admin API: disconnects (audited), later deliveries answer 404 and are not recorded, a second time 404', async () => {
    const connected = await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET });
    expect(connected.status).toBe(200);
    expect((await auditOf('shopify.connect'))[0]).toMatchObject({ actor: 'admin' });
    const before = await send('orders/paid', orderPaidPayload({ email: nextEmail(), subtotal: '5.00' }));
    expect(before.status).toBe(200);
    const gone = await admin('DELETE', `/brands/${brand.brandId}/shopify`);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(gone.body).toEqual({ success: true, brandId: brand.brandId, shopDomain: SHOP });
    expect((await auditOf('shopify.disconnect'))[0]).toMatchObject({ actor: 'admin', subject: brand.brandId });
    const email = nextEmail();
    const after = await send('orders/paid', orderPaidPayload({ email, subtotal: '5.00' }), { webhookId: 'after-gone' });
    expect(after.status).toBe(404);
    expect(JSON.stringify(after.body)).toContain('connect it first');
    expect(await deliveryRow('after-gone')).toBeUndefined();
    expect(await eventsOf(email)).toEqual([]);
    const read = await admin('GET', `/brands/${brand.brandId}/shopify`);
    expect(read.body.connection).toBeNull();
    expect(read.body.deliveries.length).toBeGreaterThan(0);
    const again = await admin('DELETE', `/brands/${brand.brandId}/shopify`);
    expect(again.status).toBe(404);
    expect(JSON.stringify(again.body)).toContain('nothing to disconnect');
  });

  it('CLI: pts shopify disconnect --json', async () => {
    await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET });
    let stdout = '';
    let stderr = '';
    const io = {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: ADMIN_TOKEN },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    };
    const code = await runCli(['shopify', 'disconnect', '--brand', brand.brandId, '--json'], io);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ success: true, brandId: brand.brandId, shopDomain: SHOP });
    stdout = '';
    const twice = await runCli(['shopify', 'disconnect', '--brand', brand.brandId, '--json'], io);
    expect(twice).toBe(1);
    expect(stderr).toContain('nothing to disconnect');
  });

  it('portal: a viewer is refused 403, an admin disconnects (audited with their name)', async () => {
    await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET });
    const adminUser = await portalMember(platform, brand.brandId, 'ada@snow.example.com', 'admin');
    const viewer = await portalMember(platform, brand.brandId, 'vera@snow.example.com', 'viewer');
    const path = `/brands/${brand.brandId}/shopify`;
    expect((await viewer.request('DELETE', path)).status).toBe(403);
    const gone = await adminUser.request('DELETE', path);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect((await auditOf('shopify.disconnect'))[0]).toMatchObject({ actor: 'portal:ada@snow.example.com' });
    expect((await adminUser.request('DELETE', path)).status).toBe(404);
    const doc = await platform.get('/openapi.json');
    expect(doc.body.paths['/admin/brands/{brandId}/shopify']?.delete).toBeDefined();
    expect(doc.body.paths['/portal/api/brands/{brandId}/shopify']?.delete).toBeDefined();
    expect(doc.body.components.schemas.ShopifyDisconnectResponse).toBeDefined();
  });
});
