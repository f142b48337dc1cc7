import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { axeViolations, CHROMIUM_FLAGS } from './browser-helpers.ts';

// Removing a verified domain on the Integrations page in Chromium (a scripted TXT resolver): an owner verifies
// a subdomain, removes it after confirming, and it is gone; a viewer sees no Remove control. axe-core.

const PASSWORD = 'portal password 1';
let platform: TestPlatform;
let browser: Browser;
let brand: { brandId: string; apiKey: string };
const contexts: BrowserContext[] = [];
const txtRecords = new Map<string, string[][]>();

async function signedInAs(email: string, role: 'owner' | 'viewer'): Promise<Page> {
  const invite = await platform.post(
    '/admin/portal/invites',
    { brandId: brand.brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(invite.status).toBe(201);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(invite.body.inviteUrl);
  await page.getByLabel('New password (at least 10 characters)').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
  await page.getByRole('link', { name: 'Integrations' }).click();
  await page.getByRole('heading', { name: 'Integrations', exact: true }).waitFor();
  return page;
}

beforeAll(async () => {
  platform = await startTestPlatform(
    {},
    {
      resolveTxt: async (host) => {
        const records = txtRecords.get(host);
        if (!records) throw Object.assign(new Error(`no record at ${host}`), { code: 'ENOTFOUND' });
        return records;
      },
    },
  );
  brand = await platform.createBrand({ name: 'Domain Shop', domain: 'shop.example.com' });
  txtRecords.set('_pts.blog.shop.example.com', [[`brand_id=${brand.brandId};api_key=${brand.apiKey}`]]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await platform?.stop();
});

describe('removing a verified domain in Chromium', () => {
  it('an owner verifies a domain, removes it after confirming; a viewer has no Remove control', async () => {
    const owner = await signedInAs('owner@shop.example.com', 'owner');
    await owner.getByLabel('Domain to verify').fill('blog.shop.example.com');
    await owner.getByRole('button', { name: 'Verify domain' }).click();
    const listed = owner.getByTestId('verified-domains');
    await expect.poll(() => listed.textContent()).toMatch(/blog\.shop\.example\.com/);

    const viewer = await signedInAs('viewer@shop.example.com', 'viewer');
    await viewer.getByTestId('verified-domains').waitFor();
    expect(await viewer.getByRole('button', { name: /^Remove/ }).count()).toBe(0);

    // Dismissing the confirmation keeps the domain.
    owner.once('dialog', (dialog) => void dialog.dismiss());
    await owner.getByRole('button', { name: 'Remove blog.shop.example.com' }).click();
    expect(await listed.textContent()).toMatch(/blog\.shop\.example\.com/);
    expect(await axeViolations(owner)).toEqual([]);

    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Remove blog.shop.example.com' }).click();
    await owner.getByText('blog.shop.example.com is no longer a verified domain.').waitFor();
    await owner.getByText('No verified domain yet.').waitFor();
    const stored = await platform.get(`/admin/brands/${brand.brandId}`, {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(stored.body.brand.verifiedDomains).toEqual([]);
    expect(await axeViolations(owner)).toEqual([]);
  });
});
