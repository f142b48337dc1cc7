import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { expectPageSound, goTo, SCREENSHOTS, signInByInvite, startChromium } from './browser-helpers.ts';

// The portal's failures in Chromium (issue 33): a signed-in person who follows a stale link (from an e-mail,
// to an address with no page) reads that there is none inside the frame and gets back by clicking; a page
// whose read fails (core-api answering 503 once) says so and recovers with "Try again", without a reload.
// axe-core, 375 px and the console at each step.

const PASSWORD = 'route error password 1';
const EMAIL = 'admin@lost.example.com';

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string };

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Lost and Found',
    domain: 'lost.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 }],
  });
  chromium = await startChromium({
    // The one read this journey makes fail on purpose: Chromium logs the 503 the page then explains.
    expectedErrors: /status of 503 \(Service Unavailable\) \(.*\/portal\/api\/brands\/0x[0-9a-f]+\/rules\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('route errors in Chromium', () => {
  it('a stale link to an address with no page: said inside the frame, "Back to your brands" by click', async () => {
    const page = await chromium.newPage();
    await signInByInvite(platform, page, { brandId: brand.brandId, email: EMAIL, role: 'admin' }, PASSWORD);
    // The link arrives in an e-mail: the person clicks it in their mail, in the same browser (signed in).
    const mail = await page.context().newPage();
    await mail.setContent(
      `<a href="${platform.url}/portal/brands/${brand.brandId}/loyalty-settings">Review your loyalty settings</a>`,
    );
    await mail.getByRole('link', { name: 'Review your loyalty settings' }).click();
    await mail.getByRole('heading', { name: 'There is no page at this address' }).waitFor();
    expect(await mail.getByRole('alert').textContent()).toContain('The link may be old or mistyped.');
    // The frame stays: the person is still signed in and can move on from it.
    expect(await mail.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    expect(await mail.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    expect(await mail.title()).toMatch(/^Not found · /);
    await expectPageSound(mail, chromium.problems);
    await mail.screenshot({ path: join(SCREENSHOTS, 'route-not-found.png'), fullPage: true });

    await mail.getByRole('link', { name: 'Back to your brands' }).click();
    // One brand: its dashboard is where the brands page leads.
    await mail.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    expect(new URL(mail.url()).pathname).toBe(`/portal/brands/${brand.brandId}/dashboard`);
    await expectPageSound(mail, chromium.problems);
    await mail.close();
    await page.close();
  });

  it('a page whose read fails says so; "Try again" by click recovers once the server answers', async () => {
    const page = await chromium.newPage();
    await signInByInvite(
      platform,
      page,
      { brandId: brand.brandId, email: 'viewer@lost.example.com', role: 'viewer' },
      PASSWORD,
    );
    // core-api is unavailable for the Program page's rules, for as long as the route holds.
    const rules = `**/portal/api/brands/${brand.brandId}/rules`;
    let refused = 0;
    await page.route(rules, async (route) => {
      refused++;
      await route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ success: false, error: 'The service is restarting', code: 'SERVICE_UNAVAILABLE' }),
      });
    });
    await page
      .getByRole('navigation', { name: 'Brand pages' })
      .getByRole('link', { name: 'Program', exact: true })
      .click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'The server could not answer (503, SERVICE_UNAVAILABLE): The service is restarting. Try again in a moment.',
    );
    expect(refused).toBe(1);
    // The frame and its navigation stay; nothing of the program is drawn from a failed read.
    expect(await page.getByRole('navigation', { name: 'Brand pages' }).count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Program', exact: true }).count()).toBe(0);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'route-read-failed.png'), fullPage: true });

    // Still down: "Try again" asks once more and says the same.
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => refused).toBe(2);
    await alert.waitFor();

    await page.unroute(rules);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'Program', exact: true }).waitFor();
    await page.locator('tr[data-event-type="purchase"]').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe(`/portal/brands/${brand.brandId}/program`);
    await expectPageSound(page, chromium.problems);
    // Other pages read on as before.
    await goTo(page, 'Team');
    expect(chromium.problems).toEqual([]);
  });
});
