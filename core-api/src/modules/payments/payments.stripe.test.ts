import { randomBytes } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { type FakeStripeServer, fakeStripeEnv, startFakeStripe } from '../../../test/fakes/stripe-server.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';
import { fulfilPayment, paymentDepsFrom } from './payments.service.ts';

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const TX_HASH = /^0x[0-9a-f]{64}$/;
const webhooks = new Stripe('sk_test_unused').webhooks;

let stripe: FakeStripeServer;
let platform: TestPlatform;

beforeAll(async () => {
  stripe = await startFakeStripe();
  platform = await startTestPlatform({
    ...fakeStripeEnv(stripe, WEBHOOK_SECRET),
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
  });
});

afterAll(async () => {
  await platform?.stop();
  await stripe?.close();
});

async function newBrand(name = 'Acme Tokens'): Promise<CreatedBrand> {
  return platform.createBrand({ name, domain: 'acme.example' });
}

function checkoutBody(brandId: string, overrides: Record<string, unknown> = {}) {
  return {
    brandId,
    amount: 1000,
    userEmail: 'buyer@acme.example',
    successUrl: 'https://acme.example/bought',
    cancelUrl: 'https://acme.example/cart',
    ...overrides,
  };
}

async function paidCheckout(brandId: string, amount = 1000): Promise<string> {
  const created = await platform.post('/pts-api/create-checkout', checkoutBody(brandId, { amount }));
  expect(created.status).toBe(200);
  stripe.markPaid(created.body.sessionId);
  return created.body.sessionId;
}

/** A Stripe event delivery, signed with Stripe's real scheme (`t=…,v1=…` HMAC over `t.payload`). */
async function sendWebhook(
  event: { id?: string; type: string; object: Record<string, unknown> },
  options: { secret?: string; timestamp?: number; tamper?: (payload: string) => string; header?: string | null } = {},
) {
  const payload = JSON.stringify({
    id: event.id ?? `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    type: event.type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object: event.object },
  });
  const header = webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.header !== null) headers['stripe-signature'] = options.header ?? header;
  const response = await fetch(`${platform.url}/pts-api/payment-webhook`, {
    method: 'POST',
    headers,
    body: options.tamper ? options.tamper(payload) : payload,
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const body: any = await response.json();
  return { status: response.status, body };
}

function sessionEvent(sessionId: string, type = 'checkout.session.completed', id?: string) {
  return { ...(id ? { id } : {}), type, object: { ...stripe.sessions.get(sessionId) } };
}

async function mintRowsFor(wallet: string) {
  return platform.deps.db.selectFrom('reward_mints').selectAll().where('wallet_address', '=', wallet).execute();
}

function sessionFetches(sessionId: string): number {
  return stripe.requests.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${sessionId}`).length;
}

describe('POST /pts-api/create-checkout (Stripe)', () => {
  it('creates a Stripe Checkout Session with wallet, usd_amount and pts_amount metadata', async () => {
    const brand = await newBrand();
    const response = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId, { currency: 'USD' }));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['checkoutUrl', 'sessionId', 'success']);
    expect(response.body.success).toBe(true);
    expect(response.body.sessionId).toMatch(/^cs_test_/);
    const session = stripe.sessions.get(response.body.sessionId)!;
    expect(response.body.checkoutUrl).toBe(session.url);
    expect(session.metadata).toEqual({
      wallet: brand.brandId,
      usd_amount: '10.00',
      pts_amount: '10000',
      user_email: 'buyer@acme.example',
    });
    expect(session.amount_total).toBe(1000);
    expect(session.currency).toBe('usd');
    expect(session.customer_email).toBe('buyer@acme.example');
    expect(session.success_url).toBe('https://acme.example/bought?session_id={CHECKOUT_SESSION_ID}');
    expect(session.cancel_url).toBe('https://acme.example/cart');
    const row = await platform.deps.db
      .selectFrom('payments')
      .selectAll()
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'created', provider: 'stripe', brand_id: brand.brandId });
  });

  it.each([
    ['amount with cents fraction', { amount: 1000.5 }, 'amount'],
    ['amount below 100 cents', { amount: 99 }, 'amount'],
    ['amount above 1,000,000 cents', { amount: 1_000_001 }, 'amount'],
    ['amount as a string', { amount: '1000' }, 'amount'],
    ['amount missing', { amount: undefined }, 'amount'],
    ['currency other than usd', { currency: 'eur' }, 'currency'],
    ['bad email', { userEmail: 'not-an-email' }, 'userEmail'],
    ['javascript: successUrl', { successUrl: 'javascript:alert(1)' }, 'successUrl'],
    ['ftp cancelUrl', { cancelUrl: 'ftp://acme.example/cart' }, 'cancelUrl'],
    ['missing successUrl', { successUrl: undefined }, 'successUrl'],
    ['malformed brandId', { brandId: '0x123' }, 'brandId'],
  ])('rejects %s with 400 naming the field', async (_name, overrides, field) => {
    const brand = await newBrand();
    const before = stripe.requests.length;
    const response = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId, overrides));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      success: false,
      code: expect.stringMatching(/VALIDATION_ERROR|INVALID_EMAIL/),
    });
    expect(response.body.message).toContain(field);
    expect(response.body.details.field).toBe(field);
    expect(stripe.requests.length).toBe(before);
  });

  it('says that only usd is supported', async () => {
    const brand = await newBrand();
    const response = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId, { currency: 'eur' }));
    expect(response.body.message).toMatch(/only usd is supported/);
  });

  it('answers 404 for an unknown brand', async () => {
    const response = await platform.post('/pts-api/create-checkout', checkoutBody(`0x${'ab'.repeat(20)}`));
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ success: false, code: 'BRAND_NOT_FOUND' });
    expect(response.body.message).toContain('not registered');
  });

  it('answers 503 when Stripe is down, so the caller retries', async () => {
    const brand = await newBrand();
    stripe.failing = true;
    try {
      const response = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId));
      expect(response.status).toBe(503);
      expect(response.body.details.reason).toBe('payment_provider_unavailable');
    } finally {
      stripe.failing = false;
    }
  });
});

describe('POST /pts-api/payment-mint (Stripe)', () => {
  it('mints pts = usd × 1000 to the brand wallet once; a repeat is alreadyProcessed and mints nothing', async () => {
    const brand = await newBrand();
    const sessionId = await paidCheckout(brand.brandId, 1234);
    const first = await platform.post('/pts-api/payment-mint', { sessionId });
    expect(first.status).toBe(200);
    const intent = stripe.sessions.get(sessionId)!.payment_intent;
    expect(first.body).toMatchObject({
      success: true,
      walletAddress: brand.brandId,
      usdAmount: 12.34,
      ptsAmount: 12340,
      paymentIntentId: intent,
      mintStatus: 'submitted',
    });
    expect(first.body).not.toHaveProperty('alreadyProcessed');
    expect(first.body.txHash).toMatch(TX_HASH);
    expect(first.body.blockExplorer).toBe(`${platform.deps.config.PTS_EXPLORER_URL}/tx/${first.body.txHash}`);
    expect(first.body.message).toContain('12340');

    const again = await platform.post('/pts-api/payment-mint', { sessionId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      success: true,
      alreadyProcessed: true,
      txHash: first.body.txHash,
      ptsAmount: 12340,
      usdAmount: 12.34,
      walletAddress: brand.brandId,
      paymentIntentId: intent,
    });

    await waitForMintsSettled(platform);
    expect(await mintRowsFor(brand.brandId)).toHaveLength(1);
    expect(await tokenBalance(platform, brand.brandId)).toBe(12340n);
  });

  it('fails an unpaid session with 409 and the payment status in the message', async () => {
    const brand = await newBrand();
    const created = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId));
    const response = await platform.post('/pts-api/payment-mint', { sessionId: created.body.sessionId });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({
      success: false,
      code: 'CONFLICT',
      message: 'Payment not completed: payment status is unpaid',
      details: { reason: 'payment_not_completed', paymentStatus: 'unpaid' },
    });
    expect(await mintRowsFor(brand.brandId)).toHaveLength(0);
  });

  it('fails an unknown session with 404', async () => {
    const response = await platform.post('/pts-api/payment-mint', { sessionId: 'cs_test_doesnotexist' });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({
      success: false,
      code: 'NOT_FOUND',
      details: { reason: 'session_not_found' },
    });
    expect(response.body.message).toContain('cs_test_doesnotexist');
  });

  it.each([
    ['a missing sessionId', {}],
    ['a sessionId with a path in it', { sessionId: '../v1/charges' }],
    ['a numeric sessionId', { sessionId: 42 }],
  ])('rejects %s with 400', async (_name, body) => {
    const response = await platform.post('/pts-api/payment-mint', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(typeof response.body.message).toBe('string');
  });

  it.each([
    [
      'pts_amount ≠ usd_amount × 1000',
      { usd_amount: '10.00', pts_amount: '10001' },
      1000,
      /Amount mismatch: pts_amount 10001/,
    ],
    ['pts_amount as a float-rounded value', { usd_amount: '1.15', pts_amount: '1149' }, 115, /Amount mismatch/],
    ['charged total ≠ usd_amount', { usd_amount: '10.00', pts_amount: '10000' }, 500, /charged 5.00 USD/],
  ])('fails on %s (amount mismatch, 400) and mints nothing', async (_name, amounts, charged, message) => {
    const brand = await newBrand();
    const id = `cs_test_mismatch${randomBytes(6).toString('hex')}`;
    stripe.addSession({
      id,
      payment_status: 'paid',
      status: 'complete',
      amount_total: charged,
      payment_intent: 'pi_mismatch',
      metadata: { wallet: brand.brandId, ...amounts },
    });
    const response = await platform.post('/pts-api/payment-mint', { sessionId: id });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, details: { reason: 'amount_mismatch' } });
    expect(response.body.message).toMatch(message);
    expect(await mintRowsFor(brand.brandId)).toHaveLength(0);
  });

  it('fails a paid session without the metadata (400) and a wallet that is no brand (400)', async () => {
    stripe.addSession({ id: 'cs_test_nometadata', payment_status: 'paid', amount_total: 1000, metadata: {} });
    const bare = await platform.post('/pts-api/payment-mint', { sessionId: 'cs_test_nometadata' });
    expect(bare.status).toBe(400);
    expect(bare.body.details).toMatchObject({ reason: 'invalid_session_metadata' });

    const stranger = `0x${'cd'.repeat(20)}`;
    stripe.addSession({
      id: 'cs_test_stranger',
      payment_status: 'paid',
      amount_total: 1000,
      metadata: { wallet: stranger, usd_amount: '10.00', pts_amount: '10000' },
    });
    const response = await platform.post('/pts-api/payment-mint', { sessionId: 'cs_test_stranger' });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('not a registered brand');
    expect(await mintRowsFor(stranger)).toHaveLength(0);
  });

  it('keeps a paid but unmintable purchase visible as `paid` with the reason', async () => {
    const brand = await newBrand();
    const created = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId));
    const session = stripe.markPaid(created.body.sessionId);
    session.metadata = { ...session.metadata, pts_amount: '99999' };
    const response = await platform.post('/pts-api/payment-mint', { sessionId: session.id });
    expect(response.status).toBe(400);
    const row = await platform.deps.db
      .selectFrom('payments')
      .selectAll()
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('paid');
    expect(row.last_error).toMatch(/Amount mismatch/);
  });

  it('answers 503 when Stripe cannot be reached (callers retry)', async () => {
    const brand = await newBrand();
    const sessionId = await paidCheckout(brand.brandId);
    stripe.failing = true;
    try {
      const response = await platform.post('/pts-api/payment-mint', { sessionId });
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ success: false, details: { reason: 'payment_provider_unavailable' } });
    } finally {
      stripe.failing = false;
    }
    expect(await mintRowsFor(brand.brandId)).toHaveLength(0);
  });
});

describe('POST /pts-api/payment-webhook (Stripe signatures)', () => {
  it('fulfils checkout.session.completed, then answers a redelivery of the same event id as duplicate', async () => {
    const brand = await newBrand();
    const sessionId = await paidCheckout(brand.brandId, 500);
    const event = sessionEvent(sessionId, 'checkout.session.completed', `evt_${randomBytes(8).toString('hex')}`);
    const first = await sendWebhook(event);
    expect(first).toEqual({ status: 200, body: { received: true, outcome: 'fulfilled' } });
    const fetches = sessionFetches(sessionId);

    const again = await sendWebhook(event);
    expect(again).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } });
    expect(sessionFetches(sessionId)).toBe(fetches);
    const recorded = await platform.deps.db
      .selectFrom('payment_webhook_events')
      .selectAll()
      .where('event_id', '=', event.id!)
      .execute();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ outcome: 'fulfilled', session_id: sessionId });
    expect(await mintRowsFor(brand.brandId)).toHaveLength(1);
  });

  it('re-fetches the session: a payload that lies about metadata and amount is ignored, the real session wins', async () => {
    const brand = await newBrand();
    const attacker = `0x${'ee'.repeat(20)}`;
    const sessionId = await paidCheckout(brand.brandId, 200);
    const before = sessionFetches(sessionId);
    const lie = {
      type: 'checkout.session.completed',
      object: {
        ...stripe.sessions.get(sessionId),
        amount_total: 99_999_900,
        metadata: { wallet: attacker, usd_amount: '999999.00', pts_amount: '999999000' },
      },
    };
    const response = await sendWebhook(lie);
    expect(response.body.outcome).toBe('fulfilled');
    expect(sessionFetches(sessionId)).toBe(before + 1);
    const [mint] = await mintRowsFor(brand.brandId);
    expect(mint).toMatchObject({ wallet_address: brand.brandId, amount: 2000n });
    expect(await mintRowsFor(attacker)).toHaveLength(0);
  });

  it('waits for async payments: unpaid completed → payment_not_completed; async_payment_succeeded → fulfilled', async () => {
    const brand = await newBrand();
    const created = await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId, { amount: 300 }));
    const sessionId = created.body.sessionId;
    const completed = await sendWebhook(sessionEvent(sessionId));
    expect(completed).toEqual({ status: 200, body: { received: true, outcome: 'payment_not_completed' } });
    expect(await mintRowsFor(brand.brandId)).toHaveLength(0);

    stripe.markPaid(sessionId);
    const succeeded = await sendWebhook(sessionEvent(sessionId, 'checkout.session.async_payment_succeeded'));
    expect(succeeded.body.outcome).toBe('fulfilled');
    expect(await mintRowsFor(brand.brandId)).toHaveLength(1);
  });

  it('acknowledges and ignores other event types', async () => {
    const response = await sendWebhook({
      type: 'payment_intent.created',
      object: { id: 'pi_1', object: 'payment_intent' },
    });
    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'ignored' } });
  });

  it.each([
    ['signed with another secret', { secret: 'whsec_not_the_right_one' }],
    ['older than the 300 s tolerance', { timestamp: Math.floor(Date.now() / 1000) - 600 }],
    [
      'body changed after signing',
      { tamper: (payload: string) => payload.replace('"livemode":false', '"livemode":true') },
    ],
    ['without a Stripe-Signature header', { header: null }],
    ['with a garbage header', { header: 't=abc,v1=zzz' }],
  ])('refuses an event %s with 400 and does nothing', async (_name, options) => {
    const brand = await newBrand();
    const sessionId = await paidCheckout(brand.brandId);
    const fetches = sessionFetches(sessionId);
    const response = await sendWebhook(sessionEvent(sessionId), options);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, details: { reason: 'invalid_webhook_signature' } });
    expect(sessionFetches(sessionId)).toBe(fetches);
    expect(await mintRowsFor(brand.brandId)).toHaveLength(0);
  });
});

describe('exactly once', () => {
  it('mints once for 20 concurrent completions of one session (10 payment-mint calls + 10 webhooks)', async () => {
    const brand = await newBrand('Race Brand');
    const sessionId = await paidCheckout(brand.brandId, 2500);
    const calls = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? platform.post('/pts-api/payment-mint', { sessionId }).then((r) => ({ kind: 'mint' as const, ...r }))
        : sendWebhook(
            sessionEvent(
              sessionId,
              i % 4 === 1 ? 'checkout.session.completed' : 'checkout.session.async_payment_succeeded',
            ),
          ).then((r) => ({ kind: 'webhook' as const, ...r })),
    );
    const results = await Promise.all(calls);
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const fresh = results.filter((r) =>
      r.kind === 'mint' ? r.body.alreadyProcessed !== true : r.body.outcome === 'fulfilled',
    );
    expect(fresh).toHaveLength(1);
    for (const r of results.filter((r) => r.kind === 'mint')) expect(r.body.ptsAmount).toBe(25000);

    await waitForMintsSettled(platform);
    const mints = await mintRowsFor(brand.brandId);
    expect(mints).toHaveLength(1);
    expect(mints[0]).toMatchObject({ amount: 25000n, status: 'confirmed', event_id: null });
    expect(await tokenBalance(platform, brand.brandId)).toBe(25000n);
  });

  it('recovers a crash between the claim and the mint: the reward processor mints it, never twice', async () => {
    const brand = await newBrand('Crash Brand');
    const sessionId = await paidCheckout(brand.brandId, 700);
    // The process "dies" right after the fulfilment transaction commits: the minter never hears of the row.
    const crashed = await fulfilPayment(
      {
        ...paymentDepsFrom(platform.deps),
        minter: { submit: () => Promise.reject(new Error('process killed before submit')) },
      },
      sessionId,
    );
    expect(crashed).toMatchObject({ success: true, mintStatus: 'pending', ptsAmount: 7000 });
    expect(crashed).not.toHaveProperty('txHash');
    const [pending] = await mintRowsFor(brand.brandId);
    expect(pending).toMatchObject({ status: 'pending', amount: 7000n });

    // A retry after the "restart" must not mint a second time.
    const retried = await platform.post('/pts-api/payment-mint', { sessionId });
    expect(retried.body).toMatchObject({ success: true, alreadyProcessed: true, mintStatus: 'pending' });

    const processed = await fetch(`${platform.url}/reward-processor/process-pending`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platform.deps.adminToken}` },
    });
    expect(processed.status).toBe(200);
    expect(((await processed.json()) as { claimed: number }).claimed).toBeGreaterThanOrEqual(1);

    await waitForMintsSettled(platform);
    const after = await platform.post('/pts-api/payment-mint', { sessionId });
    expect(after.body).toMatchObject({ alreadyProcessed: true, mintStatus: 'confirmed' });
    expect(after.body.txHash).toMatch(TX_HASH);
    expect(await mintRowsFor(brand.brandId)).toHaveLength(1);
    expect(await tokenBalance(platform, brand.brandId)).toBe(7000n);
  });
});

describe('purchases for the brand CLI', () => {
  it('GET /admin/brands/:id/purchases lists purchases with totals; pts purchase list prints them', async () => {
    const brand = await newBrand('Ledger Brand');
    const paid = await paidCheckout(brand.brandId, 1500);
    await platform.post('/pts-api/payment-mint', { sessionId: paid });
    await platform.post('/pts-api/create-checkout', checkoutBody(brand.brandId, { amount: 100 }));
    await waitForMintsSettled(platform);

    const unauthorized = await platform.get(`/admin/brands/${brand.brandId}/purchases`);
    expect(unauthorized.status).toBe(401);

    const auth = { authorization: `Bearer ${platform.deps.adminToken}` };
    const listed = await platform.get(`/admin/brands/${brand.brandId}/purchases`, auth);
    expect(listed.status).toBe(200);
    expect(listed.body.purchases).toHaveLength(2);
    expect(listed.body.totals).toEqual({
      purchases: 2,
      fulfilled: 1,
      usdAmount: '15.00',
      usdCents: 1500,
      ptsPurchased: 15000,
      ptsMinted: 15000,
      ptsConfirmed: 15000,
    });
    const fulfilled = listed.body.purchases.find((p: { sessionId: string }) => p.sessionId === paid);
    expect(fulfilled).toMatchObject({ status: 'fulfilled', mintStatus: 'confirmed', usdAmount: '15.00' });
    expect(fulfilled.txHash).toMatch(TX_HASH);

    const unknown = await platform.get(`/admin/brands/0x${'12'.repeat(20)}/purchases`, auth);
    expect(unknown.status).toBe(404);

    const output: string[] = [];
    const errors: string[] = [];
    const io = {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
      stdout: { write: (text: string) => output.push(text) },
      stderr: { write: (text: string) => errors.push(text) },
    };
    expect(await runCli(['purchase', 'list', '--brand', brand.brandId], io)).toBe(0);
    const text = output.join('');
    expect(text).toContain(paid);
    expect(text).toContain('USD paid   15.00');
    expect(text).toContain('15000 bought · 15000 minted · 15000 confirmed');

    output.length = 0;
    expect(await runCli(['purchase', 'list', '--brand', brand.brandId, '--json'], io)).toBe(0);
    const json = JSON.parse(output.join(''));
    expect(json.totals.ptsConfirmed).toBe(15000);
    expect(json.purchases).toHaveLength(2);

    expect(await runCli(['purchase', 'list'], io)).toBe(2);
  });
});
