import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  axeViolations,
  expectPageSound,
  goTo,
  pwned,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  signInByInvite,
  startChromium,
} from './browser-helpers.ts';

// The portal's Perks and Members pages in Chromium against a real core-api (PGlite + anvil + our contracts):
// create a perk in the UI, redeem it through the services, see the redemption; find a member, read a
// refused event's reason, give a manual award. Hostile strings stay text; axe-core, 375 px and keyboard.
// Each person starts from an invite link or the sign-in form and reaches a perk or a member as a person
// does: the navigation, the list, the search. Screenshots land in docs/portal/ (docs/portal.md shows them).

const PASSWORD = 'portal password 1';
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`;
const PERK_NAME = `Coffee ${HOSTILE}`.slice(0, 100);
const MEMBER = 'shopper@customer.example';

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };

async function signedIn(email: string, role: 'owner' | 'viewer'): Promise<Page> {
  const page = await chromium.newPage();
  await signInByInvite(platform, page, { brandId: brand.brandId, email, role }, PASSWORD);
  return page;
}

/** From anywhere in the brand: Perks in the navigation, then the perk's link in the list. */
async function openPerk(page: Page, perkId: number) {
  await goTo(page, 'Perks');
  await page.locator(`tr[data-perk-id="${perkId}"]`).getByRole('link').click();
  await page.locator('h1.perk-name').waitFor();
}

/** From anywhere in the brand: Members in the navigation, a search, then the member's link. */
async function openMember(page: Page, search: string, member: string) {
  await goTo(page, 'Members');
  await page.getByLabel('E-mail, platform id (discord:123) or wallet').fill(search);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: member }).click();
  await page.locator('h1.member-name').waitFor();
}

const overflow = (page: Page) => sidewaysOverflow(page);

function signedEvent(eventType: string) {
  platform.clock.advance(61_000); // past the duplicate window
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: MEMBER },
    brand.securityKey,
  );
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Acme Coffee',
    domain: 'acme.example.com',
    rules: [
      { eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_visit', rewardAmount: 5, cooldownHours: 24 },
    ],
  });
  for (let i = 0; i < 3; i++) expect((await signedEvent('purchase')).status).toBe(200);
  expect((await signedEvent('daily_visit')).status).toBe(200);
  expect((await signedEvent('daily_visit')).status).toBe(429);
  await waitForMintsSettled(platform);
  chromium = await startChromium({
    // What this journey provokes on purpose: the perk with a negative cost and the award without a reason
    // (their inline errors), and the award request whose answer it throws away.
    expectedErrors: /status of 400 \(Bad Request\) \(.*\/(perks|awards)\)$|net::ERR_FAILED.*\/awards\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('the Perks and Members pages in Chromium', () => {
  let owner: Page;
  let perkId = 0;

  it('creates a perk in the UI (inline errors from the shared schema), redeems it through the services, shows the redemption', async () => {
    owner = await signedIn('owner@acme.example.com', 'owner');
    await goTo(owner, 'Perks');
    await expectPageSound(owner, chromium.problems);
    await owner.getByRole('button', { name: 'New perk' }).click();
    const form = owner.getByRole('form', { name: 'New perk' });
    await form.getByLabel('Name').fill(PERK_NAME);
    await form.getByLabel('Description').fill(`A hot drink ${HOSTILE}`);
    await form.getByLabel('Cost (pts)').fill('-5');
    await form.getByLabel('Image URL (https://…)').fill('https://acme.example.com/coffee.png');
    await form.getByLabel('Unlimited supply').uncheck();
    await form.getByLabel('Supply', { exact: true }).fill('50');
    await form.getByLabel('Unlimited per member').check();
    // The browser's own checks are bypassed so the server's (the shared schema's) message shows.
    await owner.locator('form.rule-form').evaluate((element) => element.setAttribute('novalidate', ''));
    await form.getByRole('button', { name: 'Save perk' }).click();
    await owner.locator('#perk-cost-error').waitFor();
    expect(await owner.locator('#perk-cost-error').textContent()).toBe('must be ≥ 0');
    await expectPageSound(owner, chromium.problems);
    await form.getByLabel('Cost (pts)').fill('150');
    await owner.screenshot({ path: join(SCREENSHOTS, 'perk-form.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save perk' }).click();
    await owner.locator('h1.perk-name').waitFor({ timeout: 30_000 });
    expect(await owner.locator('h1.perk-name').textContent()).toBe(PERK_NAME);
    perkId = Number(new URL(owner.url()).pathname.split('/').at(-1));
    expect(await owner.getByTestId('collection-address').textContent()).toBe(platform.deps.chain.contracts.perkNft);
    expect(await owner.getByText('No redemptions yet.').count()).toBe(1);

    platform.clock.advance(1_000);
    const redeemed = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId, userIdentifier: MEMBER },
      brand.securityKey,
    );
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    await owner.reload();
    const row = owner.locator(`tr[data-redemption-id="${redeemed.body.redemptionId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain(redeemed.body.confirmationCode);
    expect(await row.textContent()).toContain(MEMBER);
    expect(await row.textContent()).toContain('confirmed');
    expect(await pwned(owner)).toBeUndefined();
    expect(await owner.locator('main img, main script').count()).toBe(0);
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'perk.png'), fullPage: true });

    await goTo(owner, 'Perks');
    const listed = owner.locator(`tr[data-perk-id="${perkId}"]`);
    await listed.waitFor();
    expect(await listed.textContent()).toContain('150 pts');
    expect(await listed.textContent()).toContain('unlimited');
    await owner.screenshot({ path: join(SCREENSHOTS, 'perks.png'), fullPage: true });
  });

  it("finds the member, shows a refused event's reason, and a manual award with a reason changes the balance", async () => {
    await openMember(owner, 'shopper@', MEMBER);
    await expectPageSound(owner, chromium.problems);
    const refused = owner.locator('tr[data-status="rejected"]');
    await refused.first().waitFor();
    expect(await refused.first().textContent()).toContain('daily_visit');
    expect(await refused.first().textContent()).toContain('cooldown had not passed');
    expect(await owner.getByTestId('earned').textContent()).toContain('305 pts');
    const total = async () =>
      Number.parseInt((await owner.getByTestId('balance-on-chain').textContent()) ?? '', 10) +
      Number.parseInt((await owner.getByTestId('balance-pending').textContent()) ?? '', 10);
    expect(await total()).toBe(305 - 150);

    const award = owner.getByRole('form', { name: 'Manual award' });
    await award.getByLabel('Pts to give').fill('40');
    await award.getByRole('button', { name: 'Give pts' }).click();
    await owner.locator('#award-reason-error').waitFor();
    expect(await owner.locator('#award-reason-error').textContent()).toMatch(/is required/);
    await award.getByLabel('Reason (required; kept in the audit log)').fill(`Late delivery ${HOSTILE}`);
    await award.getByRole('button', { name: 'Give pts' }).click();
    await owner.getByText('Awarded 40 pts.').waitFor();
    // The focus stays on the button (a disabled button used to drop it to the page's start).
    expect(await owner.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Give pts');
    await expect.poll(() => owner.getByTestId('earned').textContent()).toContain('345 pts');
    await expect.poll(total).toBe(305 - 150 + 40);
    const awarded = owner.locator('tr[data-status="accepted"]').first();
    expect(await awarded.textContent()).toContain('manual_award');
    expect(await awarded.textContent()).toContain(`Late delivery ${HOSTILE}`);
    expect(await pwned(owner)).toBeUndefined();
    expect(await owner.locator('main img, main script').count()).toBe(0);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'member.award')
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe('portal:owner@acme.example.com');
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'member.png'), fullPage: true });
  });

  it('a retried award (its answer lost) pays once: the form sends one idempotency key per intended award', async () => {
    const award = owner.getByRole('form', { name: 'Manual award' });
    const sent: string[] = [];
    const awards = /\/loyalty-members\/[^/]+\/awards$/;
    // The first request reaches the server and is paid, but its answer never reaches the page.
    let lose = true;
    await owner.route(awards, async (route) => {
      sent.push(JSON.parse(route.request().postData() ?? '{}').idempotencyKey);
      if (!lose) return route.continue();
      lose = false;
      await route.fetch();
      await route.abort('failed');
    });
    await award.getByLabel('Pts to give').fill('7');
    await award.getByLabel('Reason (required; kept in the audit log)').fill('Parcel lost');
    await award.getByRole('button', { name: 'Give pts' }).click();
    await award.getByRole('alert').waitFor();
    // A lost answer is told as such, with what to do (the browser's own "Failed to fetch" said neither).
    expect(await award.getByRole('alert').textContent()).toBe(
      'No answer came back (the connection failed), so this award may or may not have been given. Give pts again: the same award is paid once.',
    );
    await award.screenshot({ path: join(SCREENSHOTS, 'member-award-retry.png') });
    await award.getByRole('button', { name: 'Give pts' }).click();
    await owner.getByText('Awarded 7 pts.').waitFor();
    await expect.poll(() => owner.getByTestId('earned').textContent()).toContain('352 pts');
    // A new award after that one is a new intention: a new key, paid again.
    await award.getByLabel('Reason (required; kept in the audit log)').fill('Parcel lost again');
    await award.getByRole('button', { name: 'Give pts' }).click();
    await expect.poll(() => owner.getByTestId('earned').textContent()).toContain('359 pts');
    await owner.unroute(awards);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^award-[0-9a-f]{32}$/);
    expect(sent[1]).toBe(sent[0]);
    expect(sent[2]).not.toBe(sent[0]);
  });

  it('searches and opens a member by keyboard alone', async () => {
    await goTo(owner, 'Members');
    const input = owner.getByLabel('E-mail, platform id (discord:123) or wallet');
    await input.focus();
    await owner.keyboard.press('Control+A');
    await owner.keyboard.type('shopper');
    await owner.keyboard.press('Enter');
    await owner.getByRole('link', { name: MEMBER }).waitFor();
    // The Search button, the sort and order pickers and the export come before the results: Tab reaches the first
    // result within a few presses, as a keyboard user goes.
    const focusedText = () => owner.evaluate(() => document.activeElement?.textContent ?? '');
    let presses = 0;
    while ((await focusedText()) !== MEMBER && presses < 10) {
      await owner.keyboard.press('Tab');
      presses += 1;
    }
    expect(await focusedText()).toBe(MEMBER);
    await owner.keyboard.press('Enter');
    await owner.locator('h1.member-name').waitFor();
    await expectPageSound(owner, chromium.problems);
    await owner.screenshot({ path: join(SCREENSHOTS, 'members.png') });
  });

  it('a viewer sees perks and members without any change control', async () => {
    const viewer = await signedIn('viewer@acme.example.com', 'viewer');
    await openPerk(viewer, perkId);
    expect(await viewer.getByRole('button', { name: /Edit perk|Add constraint|Remove/ }).count()).toBe(0);
    await expectPageSound(viewer, chromium.problems);
    await goTo(viewer, 'Perks');
    expect(await viewer.getByRole('button', { name: 'New perk' }).count()).toBe(0);
    await openMember(viewer, 'shopper', MEMBER);
    expect(await viewer.getByRole('form', { name: 'Manual award' }).count()).toBe(0);
    await expectPageSound(viewer, chromium.problems);
  });

  it('works at 375 px: no sideways scrolling on the perk and member pages', async () => {
    const page = await chromium.newPage({ width: 375, height: 740 });
    await signIn(page, platform.url, 'owner@acme.example.com', PASSWORD);
    await openPerk(page, perkId);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Edit perk' }).click();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await openMember(page, 'shopper', MEMBER);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    const give = await page.getByRole('button', { name: 'Give pts' }).boundingBox();
    expect(give && give.x >= 0 && give.x + give.width <= 375).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'member-375.png'), fullPage: true });
  });

  it('ran no inline script, broke no CSP rule, opened no dialog and logged no console error', () => {
    expect(chromium.problems).toEqual([]);
  });
});
