import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  axeViolations,
  expectPageSound,
  goTo,
  pwned,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  startChromium,
} from './browser-helpers.ts';

// The brand portal in Debian's Chromium against a real core-api (PGlite + anvil): the journeys of a brand
// team, what a viewer may not do, hostile strings, accessibility (axe-core), 375 px and keyboard use. Every
// journey starts where a person starts (an invite link, the sign-in form) and moves by links and buttons.
// Screenshots land in docs/portal/ (docs/portal.md shows them).

const PASSWORD = 'portal password 1';
/** A brand name that would run script if the portal ever rendered it as HTML. */
const HOSTILE_NAME = `Acme <img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`;

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };

async function adminInvite(email: string, role: 'owner' | 'admin' | 'viewer'): Promise<string> {
  const answer = await platform.post(
    '/admin/portal/invites',
    { brandId: brand.brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(answer.status).toBe(201);
  return answer.body.inviteUrl;
}

/** Opens an invite link, sets the password, and waits for the dashboard (the portal's home). */
async function acceptInvite(page: Page, inviteUrl: string) {
  await page.goto(inviteUrl);
  await page.getByLabel('New password (at least 10 characters)').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
}

/** A change through the page's own fetch with its CSRF token: what a viewer who bypasses the UI gets. */
function putRuleFromPage(page: Page, brandId: string) {
  return page.evaluate(async (id) => {
    const session = await (await fetch('/portal/api/session')).json();
    const response = await fetch(`/portal/api/brands/${id}/rules/sneaky_rule`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
      body: JSON.stringify({ rewardAmount: 1000 }),
    });
    return response.status;
  }, brandId);
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: HOSTILE_NAME, domain: 'acme.example.com' });
  chromium = await startChromium({
    // The refusals this journey provokes on purpose: the used invite link, the rule with a negative reward
    // (its inline error), the viewer's change sent anyway, the signed-out read.
    expectedErrors:
      /status of (400 \(Bad Request\) \(.*\/(invites\/accept|rules\/portal_signup)|403 \(Forbidden\) \(.*\/rules\/sneaky_rule|401 \(Unauthorized\) \(.*\/brands\/0x[0-9a-f]{40}\/rules)\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('the brand portal in Chromium', () => {
  let owner: Page;
  let viewerInviteUrl = '';

  it('serves its pages with a strict CSP, no-cache pages and immutable hashed assets', async () => {
    const page = await fetch(`${platform.url}/portal/brands/x/program`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const asset = /src="(\/portal\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${platform.url}${asset}`);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${platform.url}/portal/assets/missing-abc.js`)).status).toBe(404);
  });

  it('invite → set password → lands in the portal; the hostile brand name is only text', async () => {
    owner = await chromium.newPage();
    const inviteUrl = await adminInvite('owner@acme.example.com', 'owner');
    await owner.goto(inviteUrl);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'invite.png') });
    await acceptInvite(owner, inviteUrl);
    expect(owner.url()).toContain(`/portal/brands/${brand.brandId}/dashboard`);
    expect(owner.url()).not.toContain('token=');
    await expect.poll(() => owner.locator('.brand-name').textContent()).toBe(HOSTILE_NAME);
    expect(await pwned(owner)).toBeUndefined();
    expect(await owner.locator('.brand-line img, .brand-line script').count()).toBe(0);
    // The link worked once: a second visit cannot set a password.
    const again = await chromium.newPage();
    await again.goto(inviteUrl);
    await again.getByLabel('New password (at least 10 characters)').fill('someone else 123');
    await again.getByLabel('Repeat the password').fill('someone else 123');
    await again.getByRole('button', { name: 'Set password and sign in' }).click();
    await again.getByText('This link is invalid, expired or already used').waitFor();
  });

  it('creates a rule in the UI, and the rule works: a signed event is accepted with its reward', async () => {
    await goTo(owner, 'Program');
    await expectPageSound(owner, chromium.problems);
    await owner.getByRole('button', { name: 'New rule' }).click();
    await owner.getByLabel('Event type (letters, digits, underscores)').fill('portal_signup');
    await owner.getByLabel('Reward (pts)').fill('-5');
    await owner.getByLabel('Cooldown (hours between two claims by one member)').fill('0');
    await owner.getByLabel('Unlimited').check();
    await owner
      .getByLabel('URL patterns (one per line, e.g. /thank-you or /checkout/*)')
      .fill('/welcome\n/signup/done');
    // Inline validation from the server's answer: the browser's own check is bypassed to see it.
    await owner.locator('form.rule-form').evaluate((form) => form.setAttribute('novalidate', ''));
    await owner.getByRole('button', { name: 'Save rule' }).click();
    await owner.locator('#rewardAmount-error').waitFor();
    expect(await owner.locator('#rewardAmount-error').textContent()).toMatch(/0|greater|>=/);
    await expectPageSound(owner, chromium.problems);
    await owner.getByLabel('Reward (pts)').fill('123');
    await owner.screenshot({ path: join(SCREENSHOTS, 'rule-form.png'), fullPage: true });
    await owner.getByRole('button', { name: 'Save rule' }).click();
    const row = owner.locator('tr[data-event-type="portal_signup"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('123 pts');
    expect(await row.textContent()).toContain('unlimited');
    await owner.screenshot({ path: join(SCREENSHOTS, 'program.png'), fullPage: true });

    const body = { brandId: brand.brandId, eventType: 'portal_signup', userEmail: 'first@customer.example' };
    const accepted = await platform.signedPost('/pts-api/manual-event', body, brand.securityKey);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ success: true });
    expect(JSON.stringify(accepted.body)).toContain('123');
    // Unlimited claims and no cooldown: the same member earns again.
    const second = await platform.signedPost('/pts-api/manual-event', body, brand.securityKey);
    expect(second.status).toBe(200);

    // Pause: events of the rule are refused from now on.
    await owner.getByRole('button', { name: 'Pause portal_signup' }).click();
    await expect.poll(() => row.textContent()).toContain('paused');
    const paused = await platform.signedPost(
      '/pts-api/manual-event',
      { ...body, userEmail: 'late@customer.example' },
      brand.securityKey,
    );
    expect(paused.status).toBeGreaterThanOrEqual(400);
    await owner.getByRole('button', { name: 'Resume portal_signup' }).click();
    await expect.poll(() => row.textContent()).toContain('active');
  });

  it('shows the events on the dashboard within seconds, and the rule changes in the audit log', async () => {
    const stat = (label: string) =>
      owner
        .locator('.stat')
        .filter({ has: owner.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
        .locator('.stat-value');
    // The platform's clock is manual: a second on, the events of the previous test are inside the window
    // that ends now (it ends before `to`, as every analytics window does).
    platform.clock.advance(1_000);
    await goTo(owner, 'Dashboard');
    // The previous test's events: accepted ones of one member, and the one refused while the rule was paused.
    await expect
      .poll(async () => Number(await stat('Events accepted').textContent()), { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(Number(await stat('Events refused').textContent())).toBeGreaterThan(0);
    expect(await stat('Members').textContent()).toBe('1');
    const acceptedBefore = Number(await stat('Events accepted').textContent());
    // A new member's signed event (as curl would send it) shows on the open page with its next refresh.
    const body = { brandId: brand.brandId, eventType: 'portal_signup', userEmail: 'second@customer.example' };
    expect((await platform.signedPost('/pts-api/manual-event', body, brand.securityKey)).status).toBe(200);
    platform.clock.advance(1_000);
    await expect.poll(() => stat('Members').textContent(), { timeout: 10_000 }).toBe('2');
    expect(Number(await stat('Events accepted').textContent())).toBe(acceptedBefore + 1);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'dashboard.png'), fullPage: true });

    await goTo(owner, 'Audit log');
    const change = owner.locator('tr', { hasText: 'portal:owner@acme.example.com' }).first();
    await change.waitFor();
    expect(await change.textContent()).toMatch(/rule/);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'audit.png'), fullPage: true });
  });

  it('the owner invites a viewer from the team page', async () => {
    await goTo(owner, 'Team');
    const form = owner.getByRole('form', { name: 'Invite a teammate' });
    await form.getByLabel('E-mail').fill('viewer@acme.example.com');
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Send invite' }).click();
    viewerInviteUrl = (await owner.getByTestId('invite-url').textContent()) ?? '';
    expect(viewerInviteUrl).toMatch(/\/portal\/invite#token=/);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'team.png'), fullPage: true });
  });

  it('a viewer reads the program, sees no change controls, and a change sent anyway is refused with 403', async () => {
    const viewer = await chromium.newPage();
    await acceptInvite(viewer, viewerInviteUrl);
    await goTo(viewer, 'Program');
    await viewer.locator('tr[data-event-type="portal_signup"]').waitFor();
    expect(await viewer.getByRole('button', { name: 'New rule' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /^(Edit|Pause|Resume) / }).count()).toBe(0);
    expect(await viewer.getByText('reads the program').count()).toBe(1);
    expect(await putRuleFromPage(viewer, brand.brandId)).toBe(403);
    await expectPageSound(viewer, chromium.problems);
    await goTo(viewer, 'Team');
    expect(await viewer.getByRole('form', { name: 'Invite a teammate' }).count()).toBe(0);
    expect(await viewer.getByRole('combobox').count()).toBe(0);
    const rules = await platform.get(`/admin/brands/${brand.brandId}/rules`, {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(rules.body.rules.map((r: { eventType: string }) => r.eventType)).not.toContain('sneaky_rule');

    // Sign-out ends the session: the pages send the browser to sign-in (the Back button too), the API
    // answers 401.
    await viewer.getByRole('button', { name: 'Sign out' }).click();
    await viewer.getByRole('heading', { name: 'Sign in' }).waitFor();
    const status = await viewer.evaluate(
      async (id) => (await fetch(`/portal/api/brands/${id}/rules`)).status,
      brand.brandId,
    );
    expect(status).toBe(401);
    await viewer.goBack();
    await viewer.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(viewer.url()).toBe(`${platform.url}/portal/sign-in`);
    expect(await viewer.getByRole('form', { name: 'Invite a teammate' }).count()).toBe(0);
    await expectPageSound(viewer, chromium.problems);
    await viewer.screenshot({ path: join(SCREENSHOTS, 'sign-in.png') });
  });

  it('signs in and creates a rule by keyboard alone', async () => {
    const page = await chromium.newPage();
    await page.goto(`${platform.url}/portal/sign-in`);
    await page.getByLabel('E-mail').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('email');
    await page.keyboard.type('viewer@acme.example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
    await expectPageSound(page, chromium.problems);

    await goTo(owner, 'Program');
    await owner.getByRole('button', { name: 'New rule' }).focus();
    await owner.keyboard.press('Enter');
    await owner.getByLabel('Event type (letters, digits, underscores)').focus();
    await owner.keyboard.type('keyboard_rule');
    await owner.keyboard.press('Tab');
    await owner.keyboard.press('Control+A');
    await owner.keyboard.type('7');
    await owner.keyboard.press('Enter');
    await owner.locator('tr[data-event-type="keyboard_rule"]').waitFor();
    const focused = await owner.evaluate(() => {
      const element = document.activeElement;
      return element ? getComputedStyle(element).outlineStyle : 'none';
    });
    expect(typeof focused).toBe('string');
  });

  it('is usable at 375 px: no sideways scrolling of the page, controls reachable', async () => {
    const page = await chromium.newPage({ width: 375, height: 740 });
    await signIn(page, platform.url, 'owner@acme.example.com', PASSWORD);
    const overflow = () => sidewaysOverflow(page);
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await axeViolations(page)).toEqual([]);
    await goTo(page, 'Program');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'New rule' }).click();
    expect(await overflow()).toBeLessThanOrEqual(0);
    const save = await page.getByRole('button', { name: 'Save rule' }).boundingBox();
    expect(save && save.x >= 0 && save.x + save.width <= 375).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'program-375.png'), fullPage: true });
    await goTo(page, 'Team');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: 'owner@acme.example.com' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await expectPageSound(page, chromium.problems);
  });

  it('ran no inline script, broke no CSP rule, opened no dialog and logged no console error on any page', () => {
    expect(chromium.problems).toEqual([]);
  });
});
