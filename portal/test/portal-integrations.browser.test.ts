import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  axeViolations,
  elementsPastTheEdge,
  expectPageSound,
  goTo,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  signInByInvite,
  startChromium,
  tabTo,
} from './browser-helpers.ts';

// The Integrations and Billing pages in Chromium against a real core-api (PGlite + anvil, the local payment
// provider, a local webhook receiver): rotating the key with a grace period (the old key verifies until the
// platform clock passes it), a webhook's secret shown once, a test and its delivery, the SDK snippet copied,
// a viewer without controls, buying tokens through the checkout, axe-core, 375 px and the keyboard. Each
// person starts from an invite link or the sign-in form and moves by links and buttons.

const PASSWORD = 'portal password 1';
const RULE = { eventType: 'grace_check', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 };

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
let receiver: Server;
let receiverUrl: string;
const received: string[] = [];

async function newPage(viewport = { width: 1280, height: 900 }) {
  const page = await chromium.newPage(viewport);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: platform.url });
  return page;
}

/** An operator's invite, accepted in a new browser: lands on the dashboard. */
async function signedInAs(email: string, role: 'owner' | 'viewer') {
  const page = await newPage();
  await signInByInvite(platform, page, { brandId: brand.brandId, email, role }, PASSWORD);
  return page;
}

const signedEvent = (securityKey: string) =>
  platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: RULE.eventType, userEmail: `m${randomBytes(4).toString('hex')}@shop.example` },
    securityKey,
  );

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Integrations Shop', domain: 'shop.example.com', rules: [RULE] });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/pts-hooks`;
  // The refusal this journey provokes on purpose: the viewer's rotation sent anyway.
  chromium = await startChromium({ expectedErrors: /status of 403 \(Forbidden\) \(.*\/keys\/rotate\)$/ });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('the Integrations and Billing pages in Chromium', () => {
  let owner: Page;

  it('rotates the key with a grace period: the old key verifies during the grace and is refused after it', async () => {
    owner = await signedInAs('owner@shop.example.com', 'owner');
    await expectPageSound(owner, chromium.problems);
    await goTo(owner, 'Integrations');
    await expectPageSound(owner, chromium.problems);

    await owner.getByRole('button', { name: 'Rotate key' }).click();
    await owner.getByLabel(/^Grace period in minutes/).fill('5');
    await owner.getByRole('button', { name: 'Rotate now' }).click();
    const shown = owner.getByTestId('new-security-key');
    await shown.waitFor();
    const newKey = (await shown.textContent()) ?? '';
    expect(newKey).toMatch(/^pts_sk_/);
    await expect.poll(() => owner.getByTestId('previous-key').textContent()).not.toBe('no longer');
    await owner.screenshot({ path: join(SCREENSHOTS, 'integrations-key.png') });

    expect((await signedEvent(brand.securityKey)).status).toBe(200);
    expect((await signedEvent(newKey)).status).toBe(200);
    // Past the grace on the platform's clock: the old key is refused, the new one works.
    platform.clock.advance(5 * 60_000 + 1_000);
    expect((await signedEvent(brand.securityKey)).status).toBe(401);
    expect((await signedEvent(newKey)).status).toBe(200);

    // The new key was shown once: after a reload it is gone from the page.
    await owner.reload();
    await owner.getByRole('heading', { name: 'Integrations', exact: true }).waitFor();
    await expect.poll(() => owner.getByTestId('previous-key').textContent()).toBe('no longer');
    expect(await owner.getByTestId('new-security-key').count()).toBe(0);
    expect(await owner.content()).not.toContain(newKey);
  });

  it('creates a webhook, shows its secret once, sends a test and lists the delivery', async () => {
    const form = owner.getByRole('form', { name: 'Webhook endpoint' });
    await form.getByLabel('Webhook URL').fill(receiverUrl);
    await form.getByRole('button', { name: 'Save webhook' }).click();
    const secretCode = owner.getByTestId('webhook-secret');
    await secretCode.waitFor();
    const secret = (await secretCode.textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await owner.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => owner.getByTestId('test-result').textContent()).toMatch(/Test delivered: .* 204/);
    expect(JSON.parse(received.at(-1) ?? '{}')).toMatchObject({ type: 'webhook.test' });
    const row = owner.locator('tr[data-delivery-id]').first();
    await expect.poll(() => row.textContent()).toMatch(/webhook\.test.*delivered/);
    await expectPageSound(owner, chromium.problems);
    await owner.getByRole('heading', { name: 'Webhooks' }).scrollIntoViewIfNeeded();
    await owner.screenshot({ path: join(SCREENSHOTS, 'integrations-webhook.png') });

    await row.getByRole('button', { name: /^Replay webhook\.test/ }).click();
    await expect.poll(() => row.textContent()).toMatch(/pending|sending|delivered/);

    await owner.reload();
    await owner.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await owner.locator('tr[data-delivery-id]').first().waitFor();
    expect(await owner.getByTestId('webhook-secret').count()).toBe(0);
    expect(await owner.content()).not.toContain(secret);
  });

  it('copies the sdk.js snippet with its button', async () => {
    const snippet = `<script src="${platform.url}/sdk.js" data-brand-id="${brand.brandId}" async></script>`;
    expect(await owner.getByTestId('sdk-snippet').textContent()).toBe(snippet);
    await owner.getByRole('button', { name: 'Copy snippet' }).click();
    await owner.getByText('Copied').first().waitFor();
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    expect(await owner.getByTestId('wp-api-url').textContent()).toBe(platform.url);
    await owner.screenshot({ path: join(SCREENSHOTS, 'integrations.png'), fullPage: true });
  });

  it('a viewer sees no rotate control, and a rotation sent anyway is refused with 403', async () => {
    const viewer = await signedInAs('viewer@shop.example.com', 'viewer');
    await goTo(viewer, 'Integrations');
    await expectPageSound(viewer, chromium.problems);
    await viewer.getByText('Only owners rotate the key.').waitFor();
    expect(await viewer.getByRole('button', { name: 'Rotate key' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Save webhook' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    const status = await viewer.evaluate(async (id) => {
      const session = await (await fetch('/portal/api/session')).json();
      const response = await fetch(`/portal/api/brands/${id}/keys/rotate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
        body: JSON.stringify({ graceMinutes: 0 }),
      });
      return response.status;
    }, brand.brandId);
    expect(status).toBe(403);
  });

  it('buys tokens through the checkout and sees the purchase and the relayer gas', async () => {
    await goTo(owner, 'Billing');
    await expectPageSound(owner, chromium.problems);
    await owner.getByLabel('Amount (USD)').fill('12.5');
    await owner.getByRole('button', { name: 'Buy 12,500 tokens' }).click();
    // The local payment provider's hosted page stands in for Stripe Checkout.
    await owner.getByRole('button', { name: /^Pay / }).click();
    await owner.getByTestId('checkout-return').waitFor();
    expect(owner.url()).toContain(`/portal/brands/${brand.brandId}/billing?session_id=cs_local_`);
    const row = owner.locator('tr[data-session-id]').first();
    await expect.poll(() => row.textContent()).toMatch(/12\.50.*12,500.*fulfilled/);
    expect(await owner.getByTestId('gas').textContent()).toMatch(/Transactions0/);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'billing.png'), fullPage: true });
  });

  it('works at 375 px and by keyboard alone: the snippet is copied and an agent key created without a mouse', async () => {
    const page = await newPage({ width: 375, height: 740 });
    await signIn(page, platform.url, 'owner@shop.example.com', PASSWORD);
    await goTo(page, 'Integrations');
    await page.locator('tr[data-delivery-id]').first().waitFor();
    expect(await sidewaysOverflow(page), await elementsPastTheEdge(page)).toBeLessThanOrEqual(0);
    expect(await axeViolations(page)).toEqual([]);

    await tabTo(page, 'Copy snippet');
    await page.keyboard.press('Enter');
    await page.getByText('Copied').first().waitFor();
    await tabTo(page, 'Key name');
    await page.keyboard.type('Keyboard agent');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await page.keyboard.press('Enter');
    await page.getByTestId('agent-secret').waitFor();
    const row = page.locator('tr[data-key-id]').first();
    await expect.poll(() => row.textContent()).toMatch(/Keyboard agent.*reads and changes the program.*active/);
    expect(await sidewaysOverflow(page), await elementsPastTheEdge(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'integrations-375.png'), fullPage: true });

    await goTo(page, 'Billing');
    expect(await sidewaysOverflow(page), await elementsPastTheEdge(page)).toBeLessThanOrEqual(0);
    const buy = await page.getByRole('button', { name: /^Buy / }).boundingBox();
    expect(buy && buy.x >= 0 && buy.x + buy.width <= 375).toBe(true);
    await expectPageSound(page, chromium.problems);
  });

  it('ran no inline script, broke no CSP rule, opened no dialog and logged no console error', () => {
    expect(chromium.problems).toEqual([]);
  });
});
