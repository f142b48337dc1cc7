import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { postWithHeaders } from '../../../test/raw-post.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
/** Stands in for the brand's website: answers every request with its own URL, so redirects can be followed. */
let shop: Server;
let shopUrl: string;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  brand = await platform.createBrand({ name: 'Acme <script>alert(1)</script> & "Co"', domain: 'acme.example' });
  shop = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ shop: true, url: req.url }));
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await platform?.stop();
  await new Promise((resolve) => shop?.close(resolve));
});

async function createCheckout(amount = 1000) {
  const response = await platform.post('/pts-api/create-checkout', {
    brandId: brand.brandId,
    amount,
    userEmail: 'buyer@acme.example',
    successUrl: `${shopUrl}/thanks?order=7`,
    cancelUrl: `${shopUrl}/cart`,
  });
  expect(response.status).toBe(200);
  return response.body as { success: true; checkoutUrl: string; sessionId: string };
}

async function openPage(checkoutUrl: string) {
  const response = await fetch(checkoutUrl);
  const html = await response.text();
  const token = /name="token" value="([0-9a-f]+)"/.exec(html)?.[1];
  return { response, html, token };
}

function submit(url: string, fields: Record<string, string>, redirect: 'manual' | 'follow' = 'manual') {
  return fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect });
}

describe('local checkout (embedded provider, no account)', () => {
  it('builds the checkout link from the listening address, never from a hostile Host header', async () => {
    const answer = await postWithHeaders(
      platform.url,
      '/pts-api/create-checkout',
      {
        brandId: brand.brandId,
        amount: 1000,
        userEmail: 'buyer@acme.example',
        successUrl: `${shopUrl}/thanks`,
        cancelUrl: `${shopUrl}/cart`,
      },
      { host: 'evil.example', 'x-forwarded-host': 'evil-proxy.example', 'x-forwarded-proto': 'https' },
    );
    expect(answer.status).toBe(200);
    const { checkoutUrl, sessionId } = JSON.parse(answer.body) as { checkoutUrl: string; sessionId: string };
    expect(checkoutUrl).toBe(`${platform.url}/pts-api/checkout/${sessionId}`);
  });

  it('serves a hosted page, Pay redirects to successUrl with the session id, and the tokens are minted', async () => {
    const checkout = await createCheckout(1000);
    expect(checkout.sessionId).toMatch(/^cs_local_[0-9a-f]{32}$/);
    expect(checkout.checkoutUrl).toBe(`${platform.url}/pts-api/checkout/${checkout.sessionId}`);

    const page = await openPage(checkout.checkoutUrl);
    expect(page.response.status).toBe(200);
    expect(page.response.headers.get('content-type')).toContain('text/html');
    expect(page.response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.html).toContain('10.00 USD');
    expect(page.html).toContain('10000');
    expect(page.html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(page.html).not.toContain('<script>');
    expect(page.token).toMatch(/^[0-9a-f]{64}$/);

    // A real browser follows the 303 to the shop's success page.
    const paid = await submit(`${checkout.checkoutUrl}/pay`, { token: page.token! }, 'follow');
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ shop: true, url: `/thanks?order=7&session_id=${checkout.sessionId}` });

    const minted = await platform.post('/pts-api/payment-mint', { sessionId: checkout.sessionId });
    expect(minted.status).toBe(200);
    expect(minted.body).toMatchObject({
      success: true,
      alreadyProcessed: true,
      walletAddress: brand.brandId,
      usdAmount: 10,
      ptsAmount: 10000,
    });
    expect(minted.body.paymentIntentId).toMatch(/^pi_local_/);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, brand.brandId)).toBe(10000n);

    const again = await openPage(checkout.checkoutUrl);
    expect(again.html).toContain('already paid');
    expect(again.token).toBeUndefined();
  });

  it('answers the Pay redirect with 303 and the exact success URL', async () => {
    const checkout = await createCheckout(200);
    const { token } = await openPage(checkout.checkoutUrl);
    const paid = await submit(`${checkout.checkoutUrl}/pay`, { token: token! });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${shopUrl}/thanks?order=7&session_id=${checkout.sessionId}`);
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { token: 'f'.repeat(64) }],
    ['a short token', { token: 'abc' }],
  ])('refuses Pay with %s (403) and charges nothing', async (_name, fields) => {
    const checkout = await createCheckout(300);
    const response = await submit(`${checkout.checkoutUrl}/pay`, fields);
    expect(response.status).toBe(403);
    const minted = await platform.post('/pts-api/payment-mint', { sessionId: checkout.sessionId });
    expect(minted.status).toBe(409);
    expect(minted.body.message).toBe('Payment not completed: payment status is unpaid');
  });

  it('Cancel redirects to cancelUrl, marks the purchase canceled, and Pay is refused afterwards', async () => {
    const checkout = await createCheckout(400);
    const { token } = await openPage(checkout.checkoutUrl);
    const canceled = await submit(`${checkout.checkoutUrl}/cancel`, { token: token! });
    expect(canceled.status).toBe(303);
    expect(canceled.headers.get('location')).toBe(`${shopUrl}/cart`);
    const row = await platform.deps.db
      .selectFrom('payments')
      .selectAll()
      .where('session_id', '=', checkout.sessionId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('canceled');

    const pay = await submit(`${checkout.checkoutUrl}/pay`, { token: token! });
    expect(pay.status).toBe(409);
    const page = await openPage(checkout.checkoutUrl);
    expect(page.html).toContain('canceled');
  });

  it('answers 404 pages for unknown or malformed session ids', async () => {
    expect((await fetch(`${platform.url}/pts-api/checkout/cs_local_${'0'.repeat(32)}`)).status).toBe(404);
    expect((await fetch(`${platform.url}/pts-api/checkout/%3Cscript%3E`)).status).toBe(404);
    expect((await submit(`${platform.url}/pts-api/checkout/cs_local_nope/pay`, { token: 'x' })).status).toBe(404);
  });

  it('refuses webhooks: the local provider has none (400)', async () => {
    const response = await platform.post('/pts-api/payment-webhook', {
      id: 'evt_1',
      type: 'checkout.session.completed',
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, details: { reason: 'webhooks_not_supported' } });
  });
});
