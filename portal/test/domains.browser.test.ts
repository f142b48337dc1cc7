import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { expectPageSound, goTo, signInByInvite, startChromium } from './browser-helpers.ts';

// Removing a verified domain on the Integrations page in Chromium (a scripted TXT resolver): an owner verifies
// a subdomain, removes it after confirming, and it is gone; a viewer sees no Remove control. Each person starts
// from their invite link and moves by the navigation; axe-core, 375 px and the console on each page.

const PASSWORD = 'portal password 1';
let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; apiKey: string };
const txtRecords = new Map<string, string[][]>();

async function signedInAs(email: string, role: 'owner' | 'viewer'): Promise<Page> {
  const page = await chromium.newPage();
  await signInByInvite(platform, page, { brandId: brand.brandId, email, role }, PASSWORD);
  await goTo(page, 'Integrations');
  await expectPageSound(page, chromium.problems);
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
  chromium = await startChromium();
});

afterAll(async () => {
  await chromium?.close();
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

    // This journey answers the confirmation itself: No first, then Yes.
    const confirmations: string[] = [];
    let answer: 'dismiss' | 'accept' = 'dismiss';
    owner.removeAllListeners('dialog');
    owner.on('dialog', (dialog) => {
      confirmations.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog[answer]();
    });
    // Dismissing the confirmation keeps the domain.
    await owner.getByRole('button', { name: 'Remove blog.shop.example.com' }).click();
    expect(await listed.textContent()).toMatch(/blog\.shop\.example\.com/);
    await expectPageSound(owner, chromium.problems);

    answer = 'accept';
    await owner.getByRole('button', { name: 'Remove blog.shop.example.com' }).click();
    await owner.getByText('blog.shop.example.com is no longer a verified domain.').waitFor();
    await owner.getByText('No verified domain yet.').waitFor();
    const stored = await platform.get(`/admin/brands/${brand.brandId}`, {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(stored.body.brand.verifiedDomains).toEqual([]);
    expect(confirmations).toHaveLength(2);
    expect(confirmations[0]).toMatch(/^confirm: .*blog\.shop\.example\.com/);
    await expectPageSound(owner, chromium.problems);
    expect(chromium.problems).toEqual([]);
  });
});
