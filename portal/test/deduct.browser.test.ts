import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { portalMember } from '../../core-api/test/portal-browser.ts';
import {
  axeViolations,
  expectPageSound,
  goTo,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  startChromium,
} from './browser-helpers.ts';

// A manual deduction in Chromium against a real core-api (PGlite + anvil + our contracts): an admin signs in
// through the form, finds a member, deducts pts with a reason (a missing reason and an amount above what the
// member holds are refused inline), sees the deduction listed under "Reversals and deductions", the balance
// drop once mined, and the audit entry; a brand's refund shows beside the event it reverses. axe, 375 px.
// Screenshots land in docs/portal/ (docs/portal.md shows them).

const PASSWORD = 'portal password 1';
const MEMBER = 'deduct-me@customer.example';

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
let eventId = '';

async function openMember(page: Page) {
  await goTo(page, 'Members');
  await page.getByLabel('E-mail, platform id (discord:123) or wallet').fill('deduct-me');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: MEMBER }).click();
  await page.locator('h1.member-name').waitFor();
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Deduct Coffee',
    domain: 'deduct-coffee.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  for (let i = 0; i < 2; i++) {
    platform.clock.advance(61_000);
    const earned = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'purchase', userEmail: MEMBER },
      brand.securityKey,
    );
    expect(earned.status).toBe(200);
    eventId = earned.body.eventId;
  }
  await waitForMintsSettled(platform);
  await portalMember(platform, brand.brandId, 'admin@deduct-coffee.example.com', 'admin', PASSWORD);
  chromium = await startChromium({
    // What this journey provokes on purpose: the deduction without a reason and the one above the balance.
    expectedErrors: /status of 400 \(Bad Request\) \(.*\/deductions\)$/,
  });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('a manual deduction in Chromium', () => {
  let admin: Page;

  it('an admin deducts with a reason: listed, the balance drops once mined, audited', async () => {
    admin = await chromium.newPage();
    await signIn(admin, platform.url, 'admin@deduct-coffee.example.com', PASSWORD);
    await openMember(admin);
    await expectPageSound(admin, chromium.problems);
    expect(await admin.getByTestId('balance-on-chain').textContent()).toBe('200 pts');
    expect(await admin.getByText('Nothing taken back.').count()).toBe(1);

    const form = admin.getByRole('form', { name: 'Deduct pts' });
    await form.getByLabel('Pts to deduct').fill('30');
    await form.getByRole('button', { name: 'Deduct pts' }).click();
    await admin.locator('#deduct-reason-error').waitFor();
    expect(await admin.locator('#deduct-reason-error').textContent()).toMatch(/is required/);

    await form.getByLabel('Reason for the deduction (required; kept in the audit log)').fill('Bonus given twice');
    await form.getByLabel('Pts to deduct').fill('500');
    await form.getByRole('button', { name: 'Deduct pts' }).click();
    // The refusal names the amount: its message shows under that field.
    await admin.locator('#deduct-amount-error').waitFor();
    expect(await admin.locator('#deduct-amount-error').textContent()).toMatch(/Cannot deduct 500 pts: .*not a refund/);

    await form.getByLabel('Pts to deduct').fill('30');
    await form.getByRole('button', { name: 'Deduct pts' }).click();
    await form.getByRole('status').waitFor();
    expect(await form.getByRole('status').textContent()).toMatch(/^Deducted 30 pts/);
    const row = admin.locator('tr[data-reversal-kind="deduction"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('Bonus given twice');
    expect(await row.textContent()).toContain('portal:admin@deduct-coffee.example.com');
    await expect.poll(() => admin.getByTestId('balance-on-chain').textContent()).toBe('170 pts');
    await expect.poll(() => row.getAttribute('data-status')).toBe('confirmed');
    expect(await admin.getByTestId('reversed').textContent()).toBe('30 pts');
    expect(await admin.getByTestId('earned').textContent()).toContain('170 pts');
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'member.deduct')
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe('portal:admin@deduct-coffee.example.com');
    expect(audit.details).toMatchObject({ amount: 30, reason: 'Bonus given twice' });
    await expectPageSound(admin, chromium.problems);
    await admin.screenshot({ path: join(SCREENSHOTS, 'member-deduction.png'), fullPage: true });
  });

  it("lists a brand's refund beside the event it reverses", async () => {
    const refund = await platform.signedPost(
      '/pts-api/reversals',
      { brandId: brand.brandId, reversalId: 'order-9-refund', eventId },
      brand.securityKey,
    );
    expect(refund.status).toBe(200);
    await admin.reload();
    await admin.locator('tr[data-reversal-kind="reversal"]').waitFor();
    expect(await admin.locator(`tr[data-event-id="${eventId}"]`).textContent()).toContain('(−100 reversed)');
    expect(await admin.locator('tr[data-reversal-kind="reversal"]').textContent()).toContain('order-9-refund');
    await expectPageSound(admin, chromium.problems);
  });

  it('works at 375 px with no axe violations', async () => {
    const page = await chromium.newPage({ width: 375, height: 740 });
    await signIn(page, platform.url, 'admin@deduct-coffee.example.com', PASSWORD);
    await openMember(page);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    const button = await page.getByRole('button', { name: 'Deduct pts' }).boundingBox();
    expect(button && button.x >= 0 && button.x + button.width <= 375).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'member-deduction-375.png'), fullPage: true });
  });

  it('ran no inline script, broke no CSP rule, opened no dialog and logged no console error', () => {
    expect(chromium.problems).toEqual([]);
  });
});
