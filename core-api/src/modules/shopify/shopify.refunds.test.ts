import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { orderPaidPayload, refundCreateBody, sendShopifyWebhook } from '../../../test/shopify-sender.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';

// Refunds from Shopify (issue 35, docs/shop-program.md "Refunds from Shopify"): a local sender posts Shopify's
// documented orders/paid and refunds/create bodies with real X-Shopify-Hmac-Sha256 headers; a paid order is
// minted on anvil, its refund becomes a reversal of the order's purchase, burned on chain, and the wallet, the
// member ledger and the delivery list agree. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'shopify-refunds-admin-token-0123456789';
const SHOP = 'pts-refund-shop.myshopify.com';
const SECRET = 'shpss_refunds_0123456789abcdef0123456789';
let platform: TestPlatform;
let brand: CreatedBrand;
let hookUrl: string;
let n = 0;
const nextEmail = () => `refunder${++n}@example.com`;

async function admin(method: 'PUT' | 'GET', path: string, body?: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

const send = (topic: string, payload: unknown, overrides: Record<string, unknown> = {}) => {
  platform.clock.advance(1_000);
  return sendShopifyWebhook(hookUrl, { topic, shopDomain: SHOP, secret: SECRET, payload, ...overrides });
};

/** A refunds/create delivery of the exact text Shopify writes (the order id's every digit). */
const sendRefund = (input: Parameters<typeof refundCreateBody>[0], overrides: Record<string, unknown> = {}) =>
  send('refunds/create', undefined, { rawBody: refundCreateBody(input).body, ...overrides });

const orderIdOf = (order: Record<string, unknown>) => String(order.admin_graphql_api_id).split('/').pop() as string;

async function walletOf(email: string): Promise<string> {
  const user = await platform.deps.db
    .selectFrom('users')
    .select('wallet_address')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return user.wallet_address as string;
}

/** Waits until no reversal is open (sent and settled from its receipt). */
async function waitForReversalsSettled(timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const open = await platform.deps.db
      .selectFrom('reward_reversals')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '<>', 'confirmed')
      .executeTakeFirstOrThrow();
    if (Number(open.count) === 0) return;
    if (performance.now() > deadline) throw new Error(`${open.count} reversals still open`);
    await platform.deps.minter.processPending().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const reversalsOf = (eventId: string) =>
  platform.deps.db
    .selectFrom('reward_reversals')
    .select(['reversal_id', 'pts', 'taken', 'debt', 'refunded_minor', 'status'])
    .where('event_id', '=', eventId)
    .orderBy('created_at')
    .execute();

const ledgerOf = (email: string) =>
  readMemberLedger(platform.deps.db, brand.brandId, { identityKeys: [email] } as never);

/** A paid order minted on chain: its event, the member's wallet. */
async function paidOrder(email: string, subtotal: string, total?: string) {
  const order = orderPaidPayload({ email, subtotal, ...(total ? { total } : {}) });
  const paid = await send('orders/paid', order);
  expect(paid.body, JSON.stringify(paid.body)).toMatchObject({ result: 'rewarded' });
  await waitForMintsSettled(platform);
  return {
    order,
    orderId: BigInt(orderIdOf(order)),
    eventId: paid.body.eventId as string,
    wallet: await walletOf(email),
  };
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_ADMIN_TOKEN: ADMIN_TOKEN,
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  brand = await platform.createBrand({ name: 'Refund Shop', domain: 'refund.example.com' });
  const rule = await admin('PUT', `/brands/${brand.brandId}/rules/purchase`, {
    rate: { pts: 2, per: '1.00', currency: 'USD' },
    cooldownHours: 0,
    maxClaims: -1,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  const connected = await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  expect(connected.body.connection.topics).toEqual(['orders/paid', 'refunds/create']);
  hookUrl = `${platform.url}/integrations/shopify/${brand.brandId}/webhooks`;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('refunds/create', () => {
  it('takes back the refunded share of the order: burned on chain, wallet and ledger agree, then the rest', async () => {
    const email = nextEmail();
    // 2 pts per $1 of 100.00 = 200 pts, minted.
    const { orderId, eventId, wallet } = await paidOrder(email, '100.00');
    expect(await tokenBalance(platform, wallet)).toBe(200n);

    // One line of 30.00 returned: 30 % of the value, 60 pts.
    const first = await sendRefund({ orderId, lines: ['30.00'], refunded: '32.40' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, result: 'reversed', eventId, rewardAmount: 60 });
    await waitForReversalsSettled();
    expect(await tokenBalance(platform, wallet)).toBe(140n);
    const ledger = await ledgerOf(email);
    expect(ledger.earned).toBe(140n);
    expect(ledger.reversed).toBe(60n);

    // The other two lines (45.55 + 24.45 = 70.00): the rest, 140 pts; all of the order taken back, never more.
    const rest = await sendRefund({ orderId, lines: ['45.55', '24.45'] });
    expect(rest.body).toMatchObject({ result: 'reversed', rewardAmount: 140 });
    await waitForReversalsSettled();
    expect(await tokenBalance(platform, wallet)).toBe(0n);
    expect((await ledgerOf(email)).earned).toBe(0n);
    const rows = await reversalsOf(eventId);
    expect(rows.map((r) => [Number(r.pts), Number(r.taken), Number(r.debt), Number(r.refunded_minor)])).toEqual([
      [60, 60, 0, 3000],
      [140, 140, 0, 7000],
    ]);
    expect(rows.every((r) => r.reversal_id.startsWith('shopify-refund-') && r.status === 'confirmed')).toBe(true);
  }, 60_000);

  it('applies a refund once: the same webhook id again (12 at once), and the same refund under a new webhook id', async () => {
    const email = nextEmail();
    const { orderId, eventId, wallet } = await paidOrder(email, '50.00');
    const { body } = refundCreateBody({ orderId, lines: ['10.00'] });
    const webhookId = `refund-replay-${orderId}`;
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => send('refunds/create', undefined, { rawBody: body, webhookId })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(answers.filter((a) => a.body.duplicate !== true)).toHaveLength(1);
    const again = await send('refunds/create', undefined, { rawBody: body });
    expect(again.body).toMatchObject({ result: 'duplicate', eventId, rewardAmount: 20 });
    await waitForReversalsSettled();
    expect(await reversalsOf(eventId)).toHaveLength(1);
    expect(await tokenBalance(platform, wallet)).toBe(80n);
  }, 60_000);

  it('refuses a refund signed with a wrong secret (401): nothing recorded, nothing taken back', async () => {
    const email = nextEmail();
    const { orderId, eventId, wallet } = await paidOrder(email, '20.00');
    const { body } = refundCreateBody({ orderId, lines: ['20.00'] });
    const forged = await send('refunds/create', undefined, {
      rawBody: body,
      secret: 'shpss_not_the_shops_secret_0000',
    });
    expect(forged.status).toBe(401);
    const unsigned = await send('refunds/create', undefined, { rawBody: body, hmac: null });
    expect(unsigned.status).toBe(401);
    const deliveries = await platform.deps.db
      .selectFrom('shopify_deliveries')
      .select('id')
      .where('webhook_id', 'in', [forged.webhookId, unsigned.webhookId])
      .execute();
    expect(deliveries).toHaveLength(0);
    expect(await reversalsOf(eventId)).toHaveLength(0);
    expect(await tokenBalance(platform, wallet)).toBe(40n);
  }, 60_000);

  it('keeps a refund that comes before its order waiting, and applies it when the order arrives', async () => {
    const email = nextEmail();
    const order = orderPaidPayload({ email, subtotal: '80.00' });
    const orderId = BigInt(orderIdOf(order));
    const early = await sendRefund({ orderId, lines: ['20.00'] });
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ result: 'waiting', eventId: null, rewardAmount: null });
    expect(early.body.reason).toContain('waiting for its order');
    const waiting = await platform.deps.db
      .selectFrom('shopify_deliveries')
      .selectAll()
      .where('webhook_id', '=', early.webhookId)
      .executeTakeFirstOrThrow();
    // The exact 64-bit order id, read from the body's digits (the JSON number lost some).
    expect(waiting).toMatchObject({ result: 'waiting', order_id: String(orderId) });
    expect(String(waiting.refund_minor)).toBe('2000');

    const paid = await send('orders/paid', order);
    expect(paid.body).toMatchObject({ result: 'rewarded', rewardAmount: 160 });
    await waitForMintsSettled(platform);
    await waitForReversalsSettled();
    const applied = await platform.deps.db
      .selectFrom('shopify_deliveries')
      .selectAll()
      .where('webhook_id', '=', early.webhookId)
      .executeTakeFirstOrThrow();
    expect(applied).toMatchObject({ result: 'reversed', event_id: paid.body.eventId });
    expect(Number(applied.reward_amount)).toBe(40);
    expect(await tokenBalance(platform, await walletOf(email))).toBe(120n);
    expect((await ledgerOf(email)).earned).toBe(120n);
    // Shopify retrying the early refund now finds it applied: nothing more taken.
    const retried = await sendRefund({ orderId, lines: ['20.00'] }, { webhookId: early.webhookId });
    expect(retried.body).toMatchObject({ duplicate: true, result: 'reversed', rewardAmount: 40 });
    expect(await reversalsOf(paid.body.eventId)).toHaveLength(1);
  }, 60_000);

  it('ignores a refund of an order that earned nothing: an order in another currency, a refund with no goods', async () => {
    const email = nextEmail();
    const euro = orderPaidPayload({ email, currency: 'EUR', subtotal: '40.00' });
    const paid = await send('orders/paid', euro);
    expect(paid.body).toMatchObject({ result: 'failed' });
    const refund = await sendRefund({ orderId: BigInt(orderIdOf(euro)), lines: ['40.00'], currency: 'EUR' });
    expect(refund.status).toBe(200);
    expect(refund.body).toMatchObject({ result: 'ignored', eventId: null });
    expect(refund.body.reason).toContain('the order earned no points');

    // A refund in EUR of a USD order: failed with the reason (pts converts no currencies), nothing taken.
    const usd = await paidOrder(nextEmail(), '10.00');
    const mixed = await sendRefund({ orderId: usd.orderId, lines: ['5.00'], currency: 'EUR' });
    expect(mixed.body).toMatchObject({ result: 'failed' });
    expect(mixed.body.reason).toContain('send the refund in USD');
    // Only shipping refunded (no goods returned): nothing of the subtotal to take back.
    const shippingOnly = await sendRefund({ orderId: usd.orderId, refunded: '4.99' });
    expect(shippingOnly.body).toMatchObject({ result: 'ignored' });
    expect(shippingOnly.body.reason).toContain('returns no goods');
    expect(await reversalsOf(usd.eventId)).toHaveLength(0);

    // An order refused after its refund came: the waiting refund is settled as ignored too.
    const lateEuro = orderPaidPayload({ email: nextEmail(), currency: 'EUR', subtotal: '12.00' });
    const waiting = await sendRefund({ orderId: BigInt(orderIdOf(lateEuro)), lines: ['12.00'], currency: 'EUR' });
    expect(waiting.body).toMatchObject({ result: 'waiting' });
    await send('orders/paid', lateEuro);
    const settled = await platform.deps.db
      .selectFrom('shopify_deliveries')
      .select(['result', 'reason'])
      .where('webhook_id', '=', waiting.webhookId)
      .executeTakeFirstOrThrow();
    expect(settled.result).toBe('ignored');
    expect(settled.reason).toContain('the order earned no points');
  }, 60_000);

  it('answers a malformed refund with 200 failed and the reason, never 500', async () => {
    const notRefund = await send('refunds/create', { id: 1, note: 'no order' });
    expect(notRefund.status).toBe(200);
    expect(notRefund.body).toMatchObject({ result: 'failed' });
    expect(notRefund.body.reason).toContain('not a refund: order_id');
    const odd = await sendRefund({ orderId: 123, lines: ['1.005'] });
    expect(odd.body).toMatchObject({ result: 'failed' });
    expect(odd.body.reason).toContain('USD has 2 decimal places');
  });

  it('refunds by the money returned when the shop pays by the total', async () => {
    await admin('PUT', `/brands/${brand.brandId}/shopify`, { shopDomain: SHOP, secret: SECRET, valueSource: 'total' });
    const email = nextEmail();
    // total 50.00 → 100 pts; 12.50 returned (tax and shipping included) takes 25.
    const { orderId, wallet } = await paidOrder(email, '40.00', '50.00');
    expect(await tokenBalance(platform, wallet)).toBe(100n);
    const refund = await sendRefund({ orderId, lines: ['10.00'], refunded: '12.50' });
    expect(refund.body).toMatchObject({ result: 'reversed', rewardAmount: 25 });
    await waitForReversalsSettled();
    expect(await tokenBalance(platform, wallet)).toBe(75n);
    const listed = await admin('GET', `/brands/${brand.brandId}/shopify`);
    expect(listed.body.deliveries[0]).toMatchObject({ topic: 'refunds/create', result: 'reversed', rewardAmount: 25 });
  }, 60_000);
});
