import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { type PortalBrowser, portalMember } from '../../core-api/test/portal-browser.ts';
import {
  elementsPastTheEdge,
  expectPageSound,
  SCREENSHOTS,
  sidewaysOverflow,
  signInByInvite,
  startChromium,
} from './browser-helpers.ts';

// Issue 33 §1 in Chromium: a person who already has an account (owner of brand A) is invited into brand B. The
// link alone cannot set their password: they sign in on the invite page with their own password, accept, and
// land on brand B's dashboard. axe-core, 375 px, and no console errors on the way.

const PASSWORD = 'portal password 1';
let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brandA: { brandId: string };
let brandB: { brandId: string };
let ownerB: PortalBrowser;

/** Console errors of the page (a refused request shows as one). */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

async function inviteFromB(email: string): Promise<string> {
  const sent = await ownerB.request('POST', `/brands/${brandB.brandId}/invites`, { email, role: 'admin' });
  expect(sent.status).toBe(201);
  return sent.body.inviteUrl;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brandA = await platform.createBrand({ name: 'Alpha Shop', domain: 'alpha.example.com' });
  brandB = await platform.createBrand({ name: 'Beta Shop', domain: 'beta.example.com' });
  ownerB = await portalMember(platform, brandB.brandId, 'owner@beta.example.com', 'owner');
  chromium = await startChromium({
    // The journey sets a new password on the link of an e-mail that has an account, on purpose: refused (409).
    expectedErrors: /status of 409 .*\/portal\/api\/invites\/accept\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('an existing account accepts an invite in Chromium', () => {
  it('signs in on the invite page with their own password, accepts, and lands on the new brand', async () => {
    // Alpha's owner has an account (they set its password from their own invite), then signs out.
    const first = await chromium.newPage();
    await signInByInvite(
      platform,
      first,
      { brandId: brandA.brandId, email: 'owner@alpha.example.com', role: 'owner' },
      PASSWORD,
    );
    await first.getByRole('button', { name: 'Sign out' }).click();
    await first.getByRole('heading', { name: 'Sign in' }).waitFor();

    const inviteUrl = await inviteFromB('owner@alpha.example.com');
    const page = await chromium.newPage();
    const errors = consoleErrors(page);
    await page.goto(inviteUrl);
    await page.getByRole('heading', { name: 'Welcome: choose your password' }).waitFor();
    await page.getByRole('button', { name: 'I already have a pts account' }).click();
    await page.getByRole('heading', { name: 'Sign in to accept your invite' }).waitFor();
    await expectPageSound(page, chromium.problems);
    await page.getByLabel('E-mail').fill('owner@alpha.example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
    await expect.poll(() => page.getByText('You are signed in as owner@alpha.example.com').count()).toBe(1);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'invite-existing.png') });
    await page.getByRole('button', { name: 'Accept the invite' }).click();

    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/portal/brands/${brandB.brandId}/dashboard`);
    expect(new URL(page.url()).hash).toBe('');
    expect(errors).toEqual([]);
    expect(chromium.problems).toEqual([]);

    // Both brands are theirs now, and the join is in Beta's audit log under their name.
    const audit = await ownerB.request('GET', `/brands/${brandB.brandId}/audit`);
    expect(audit.body.entries).toContainEqual(
      expect.objectContaining({ actor: 'portal:owner@alpha.example.com', action: 'portal.invite_accepted' }),
    );
  });

  it('someone with the link and a new password is sent to sign in instead; at 375 px the page fits', async () => {
    const inviteUrl = await inviteFromB('owner@alpha.example.com');
    const page = await chromium.newPage({ width: 375, height: 740 });
    await page.goto(inviteUrl);
    await page.getByLabel('New password (at least 10 characters)').fill('an attacker password');
    await page.getByLabel('Repeat the password').fill('an attacker password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in to accept your invite' }).waitFor();
    await page.getByText('This e-mail already has a pts account').waitFor();
    await expectPageSound(page, chromium.problems);
    // The account's own password still works; the one typed with the link does not.
    await page.getByLabel('E-mail').fill('owner@alpha.example.com');
    await page.getByLabel('Password').fill('an attacker password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong e-mail or password').waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
    expect(await sidewaysOverflow(page), await elementsPastTheEdge(page)).toBeLessThanOrEqual(0);
  });
});
