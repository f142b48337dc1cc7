import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { expectPageSound, goTo, signIn, signInByInvite, signOut, startChromium } from './browser-helpers.ts';

// A returning person signs in from the form and lands (issue 33 §2), and the README's first user,
// demo@localhost, is one of them (§3): every move here goes through the UI, as a person makes it.

const PASSWORD = 'returning password 1';

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string };

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Returning Co', domain: 'returning.example.com' });
  chromium = await startChromium();
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('signing in again from the form', () => {
  it('invite → choose a password → sign out → sign in through the form → lands on the dashboard', async () => {
    const page = await chromium.newPage();
    await signInByInvite(
      platform,
      page,
      { brandId: brand.brandId, email: 'back@returning.example.com', role: 'owner' },
      PASSWORD,
    );
    await goTo(page, 'Program');
    await signOut(page);
    expect(page.url()).toBe(`${platform.url}/portal/sign-in`);

    await page.getByLabel('E-mail').fill('back@returning.example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor({ timeout: 10_000 });
    expect(page.url()).toBe(`${platform.url}/portal/brands/${brand.brandId}/dashboard`);
    await expectPageSound(page, chromium.problems);

    // Twice in a row in the same tab: the second sign-out and sign-in land as well.
    await signOut(page);
    await signIn(page, platform.url, 'back@returning.example.com', PASSWORD);
    await goTo(page, 'Team');
    expect(chromium.problems).toEqual([]);
  });

  it("demo@localhost (the README's first user) signs in again after signing out", async () => {
    const page = await chromium.newPage();
    await signInByInvite(platform, page, { brandId: brand.brandId, email: 'demo@localhost', role: 'owner' }, PASSWORD);
    await signOut(page);
    await signIn(page, platform.url, 'demo@localhost', PASSWORD);
    expect(page.url()).toBe(`${platform.url}/portal/brands/${brand.brandId}/dashboard`);
    await expect(page.getByRole('link', { name: 'demo@localhost' }).isVisible()).resolves.toBe(true);

    // The forgotten-password form takes the address as well (no mail server: the answer is the same for all).
    await signOut(page);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('E-mail').fill('demo@localhost');
    await page.getByRole('button', { name: /send/i }).click();
    await page.getByRole('status').or(page.getByRole('alert')).first().waitFor();
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    expect(chromium.problems).toEqual([]);
  });
});
