import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { CreatedBrand } from '@pts/shared';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { portalMember } from '../../core-api/test/portal-browser.ts';
import { expectPageSound, SCREENSHOTS, startChromium } from './browser-helpers.ts';

// Issue 33 §9 in Chromium at 375 px: an owner signs in through the form, opens Integrations by its link, is
// asked before the rotation and told what breaks, cancels, rotates with the default grace of a day (the old key
// keeps signing events), then ends the old key as its own confirmed action (refused at once); the audit log
// page shows both. axe-core on each step; no console error.

const PASSWORD = 'portal password 1';
const RULE = { eventType: 'rotation_check', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 };
let platform: TestPlatform;
let brand: CreatedBrand;
// The shared harness: every console error, page error, CSP report and unexpected dialog is counted.
let chromium: Awaited<ReturnType<typeof startChromium>>;

const signedEvent = (securityKey: string) =>
  platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: RULE.eventType, userEmail: `m${randomBytes(4).toString('hex')}@rot.example` },
    securityKey,
  );

const phonePage = (): Promise<Page> => chromium.newPage({ width: 375, height: 800 });

/** axe-core (nothing serious or critical), nothing past the edge at 375 px, and no console error so far. */
const fitsThePhone = (page: Page): Promise<void> => expectPageSound(page, chromium.problems);

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Rotation Shop', domain: 'rot.example.com', rules: [RULE] });
  await portalMember(platform, brand.brandId, 'owner@rot.example.com', 'owner', PASSWORD);
  chromium = await startChromium();
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('rotating the key in Chromium (issue 33 §9)', () => {
  let page: Page;
  let newKey = '';

  it('asks before rotating, says what breaks, and Cancel changes nothing', async () => {
    page = await phonePage();
    await page.goto(`${platform.url}/portal/sign-in`);
    await page.getByLabel('E-mail').fill('owner@rot.example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'Integrations', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Rotate key' }).click();
    const confirm = page.getByRole('form', { name: 'Rotate the security key' });
    await confirm.getByRole('heading', { name: 'Rotate the keys?' }).waitFor();
    const text = (await confirm.textContent()) ?? '';
    expect(text).toMatch(/your back end/);
    expect(text).toMatch(/WordPress plugin/);
    expect(text).toMatch(/bots/);
    expect(await confirm.getByLabel(/^Grace period in minutes/).inputValue()).toBe('1440');
    // The confirmation takes the focus, so a keyboard or screen reader user lands on it.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Rotate the keys?');
    await fitsThePhone(page);
    await page.screenshot({ path: join(SCREENSHOTS, 'integrations-rotate-confirm-375.png'), fullPage: true });

    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Rotate key' }).waitFor();
    expect((await signedEvent(brand.securityKey)).status).toBe(200);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('subject', '=', brand.brandId)
      .where('action', 'like', 'brand.keys%')
      .execute();
    expect(audit).toEqual([]);
  });

  it('rotates with the default grace of a day: the old key still signs, the new keys are shown once', async () => {
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    const shown = page.getByTestId('new-security-key');
    await shown.waitFor();
    newKey = (await shown.textContent()) ?? '';
    expect(newKey).toMatch(/^pts_sk_/);
    expect(await page.locator('.shown-once').textContent()).toMatch(/old security key keeps working until/);
    await expect.poll(() => page.getByTestId('previous-key').textContent()).not.toBe('no longer');
    // A day of grace on the platform's clock (the page shows it in the browser's time zone).
    const keys = await page.evaluate(
      async (id) => (await fetch(`/portal/api/brands/${id}/integrations`)).json(),
      brand.brandId,
    );
    expect(Date.parse(keys.keys.previousKeyValidUntil) - platform.clock.now().getTime()).toBe(24 * 3600_000);
    expect((await signedEvent(brand.securityKey)).status).toBe(200);
    expect((await signedEvent(newKey)).status).toBe(200);
    await fitsThePhone(page);
  });

  it('"End the old key now" is its own confirmed action: the old key is refused at once, and both are audited', async () => {
    await page.getByRole('button', { name: 'End the old key now' }).click();
    const confirm = page.getByRole('region', { name: 'End the old key now?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toMatch(/WordPress plugin/);
    await fitsThePhone(page);
    await page.screenshot({ path: join(SCREENSHOTS, 'integrations-end-old-key-375.png'), fullPage: true });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await signedEvent(brand.securityKey)).status).toBe(200);

    await page.getByRole('button', { name: 'End the old key now' }).click();
    await page.getByRole('button', { name: 'End the old key', exact: true }).click();
    await expect.poll(() => page.getByTestId('previous-key').textContent()).toBe('no longer');
    expect(await page.getByRole('button', { name: 'End the old key now' }).count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-heading');
    expect((await signedEvent(brand.securityKey)).status).toBe(401);
    expect((await signedEvent(newKey)).status).toBe(200);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).first().waitFor();
    await page.getByText('brand.keys_end_previous').first().waitFor();
    await page.getByText('brand.keys_rotate').first().waitFor();
    expect(await page.getByText('portal:owner@rot.example.com').count()).toBeGreaterThanOrEqual(2);
    await fitsThePhone(page);
    expect(chromium.problems).toEqual([]);
  });
});
