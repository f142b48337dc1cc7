import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { portalMember } from '../../core-api/test/portal-browser.ts';
import { CHROMIUM_FLAGS } from './browser-helpers.ts';

// Issue 33 §7: no page of the portal breaks its Content-Security-Policy. Chromium dispatches a
// `securitypolicyviolation` event for every refused eval, inline script or style, even when the script catches
// the error (zod's JIT probe did, on every page, and printed nothing to the console): the events are the count.

const PASSWORD = 'portal password 1';
let platform: TestPlatform;
let browser: Browser;
let context: BrowserContext;
const violations: string[] = [];

/** A page whose every CSP violation (from the first script on) is reported to `violations`. */
async function watchedPage(): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.exposeBinding('reportCspViolation', ({ page }, text: string) => {
    violations.push(`${new URL(page.url()).pathname}: ${text}`);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      // biome-ignore lint/suspicious/noExplicitAny: the binding exposed above
      (window as any).reportCspViolation(`${event.effectiveDirective} blocked ${event.blockedURI}`);
    });
  });
  return context.newPage();
}

beforeAll(async () => {
  platform = await startTestPlatform();
  const { brandId } = await platform.createBrand({ name: 'Strict Shop', domain: 'strict.example.com' });
  await portalMember(platform, brandId, 'owner@strict.example.com', 'owner', PASSWORD);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close();
  await platform?.stop();
});

describe('the portal under its CSP in Chromium', () => {
  it('signs in through the form and visits every page by its link with no CSP violation', async () => {
    const page = await watchedPage();
    await page.goto(`${platform.url}/portal/sign-in`);
    await page.getByLabel('E-mail').fill('owner@strict.example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    const pages: [string, string][] = [
      ['Program', 'Program'],
      ['Team', 'Team'],
      ['Perks', 'Perks'],
      ['Members', 'Members'],
      ['Integrations', 'Integrations'],
      ['Billing', 'Billing'],
      ['Audit log', 'Audit log'],
      ['Dashboard', 'Dashboard'],
    ];
    for (const [link, heading] of pages) {
      await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
    }
    await page.getByRole('link', { name: 'owner@strict.example.com' }).click();
    await page.waitForURL(/\/portal\/account$/);
    // A fresh load of a deep page: every module evaluates again from the start.
    await page.reload();
    await page.getByRole('heading').first().waitFor();
    expect(violations).toEqual([]);
  });
});
