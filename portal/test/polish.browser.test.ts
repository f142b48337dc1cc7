import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { expectPageSound, goTo, signIn, signInByInvite, signOut, startChromium } from './browser-helpers.ts';

// What a person notices (issue 33 §14), walked through the UI: every page has its own title, the favicon
// loads (no 404, no console error), and a person in two brands switches between them from the frame.

const PASSWORD = 'polish password 1';
const EMAIL = 'both@polish.example.com';
const PAGES = ['Dashboard', 'Program', 'Team', 'Perks', 'Members', 'Integrations', 'Billing', 'Audit log'];

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let shop: { brandId: string };
let cafe: { brandId: string };

beforeAll(async () => {
  platform = await startTestPlatform();
  shop = await platform.createBrand({ name: 'Polish Shop', domain: 'shop.polish.example.com' });
  cafe = await platform.createBrand({ name: 'Polish Cafe', domain: 'cafe.polish.example.com' });
  chromium = await startChromium();
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('the portal as a person notices it', () => {
  it('one title for every page, a favicon, and no console error on any of them', async () => {
    const page = await chromium.newPage();
    await signInByInvite(platform, page, { brandId: shop.brandId, email: EMAIL, role: 'owner' }, PASSWORD);
    expect(await page.title()).toBe('Dashboard · Polish Shop · pts portal');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toMatch(/^\/portal\/assets\/favicon-[\w-]+\.svg$/);
    const favicon = await fetch(`${platform.url}${icon}`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);

    const titles: string[] = [];
    for (const name of PAGES) {
      await goTo(page, name);
      await expect.poll(() => page.title()).toBe(`${name} · Polish Shop · pts portal`);
      titles.push(await page.title());
      await expectPageSound(page, chromium.problems);
    }
    expect(new Set(titles).size).toBe(PAGES.length);
    await page.getByRole('link', { name: EMAIL }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect(await page.title()).toBe('Your account · pts portal');

    await signOut(page);
    expect(await page.title()).toBe('Sign in · pts portal');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await page.title()).toBe('Reset your password · pts portal');
    expect(chromium.problems).toEqual([]);
  });

  it('a person in two brands switches brand from the frame and stays on the same page', async () => {
    // The second membership is made in the database: how a person joins a second brand is the invite flow's
    // business (issue 33 §1), not this journey's.
    const user = await platform.deps.db
      .selectFrom('portal_users')
      .select('id')
      .where('email', '=', EMAIL)
      .executeTakeFirstOrThrow();
    await platform.deps.db
      .insertInto('portal_memberships')
      .values({ user_id: user.id, brand_id: cafe.brandId, role: 'viewer', created_at: new Date() })
      .execute();

    const page = await chromium.newPage();
    await signIn(page, platform.url, EMAIL, PASSWORD, 'Your brands');
    await page.getByRole('link', { name: 'Polish Shop' }).click();
    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    await goTo(page, 'Perks');
    const switcher = page.getByLabel('Switch brand');
    expect(await switcher.inputValue()).toBe(shop.brandId);
    await switcher.selectOption({ label: 'Polish Cafe (viewer)' });
    await expect.poll(() => page.url()).toBe(`${platform.url}/portal/brands/${cafe.brandId}/perks`);
    await expect.poll(() => page.title()).toBe('Perks · Polish Cafe · pts portal');
    expect(await page.locator('.brand-line .role').textContent()).toBe('viewer');
    await expectPageSound(page, chromium.problems);

    // One brand: no switcher.
    const single = await chromium.newPage();
    await signInByInvite(
      platform,
      single,
      { brandId: cafe.brandId, email: 'one@polish.example.com', role: 'viewer' },
      PASSWORD,
    );
    expect(await single.getByLabel('Switch brand').count()).toBe(0);
    expect(chromium.problems).toEqual([]);
  });
});
