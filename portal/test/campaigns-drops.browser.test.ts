import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  elementsPastTheEdge,
  expectPageSound,
  goTo,
  pwned,
  SCREENSHOTS,
  sidewaysOverflow,
  signInByInvite,
  startChromium,
  tabTo,
} from './browser-helpers.ts';

// The Program page's hashtag campaigns and drops in Chromium against a real core-api (PGlite + anvil + our
// contracts): an admin creates a campaign and a drop in the UI (inline messages from the shared schema and
// the services), both are what the services answer at once (the X bot's active list, a claim); hostile
// names stay text; a viewer sees no change control; axe-core, the keyboard and 375 px.

const PASSWORD = 'portal password 1';
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`;
const DROP_NAME = `Launch ${HOSTILE}`.slice(0, 100);

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

/** An operator's invite, accepted in a new browser, then the Program page. */
async function onProgram(email: string, role: 'admin' | 'viewer', viewport?: { width: number; height: number }) {
  const page = await chromium.newPage(viewport);
  await signInByInvite(platform, page, { brandId: brand.brandId, email, role }, PASSWORD);
  await goTo(page, 'Program');
  await page.getByRole('heading', { name: 'Hashtag campaigns (X bot)' }).waitFor();
  await page.getByRole('heading', { name: 'Drops', exact: true }).waitFor();
  return page;
}

/** What a datetime-local field shows for `offsetMs` from the browser's now. */
const localInput = (page: Page, offsetMs: number) =>
  page.evaluate((offset) => {
    const date = new Date(Date.now() + offset);
    return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  }, offsetMs);
/** Turns the browser's own checks off so the server's message shows (what an outdated browser would send). */
const serverChecksOnly = (page: Page) =>
  page.locator('form.rule-form').evaluateAll((forms) => {
    for (const form of forms) form.setAttribute('novalidate', '');
  });

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Springfield Shop',
    domain: 'springfield.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  // Ending a drop asks first; any other dialog is a finding (an injected alert would open one).
  chromium = await startChromium({
    confirms: /^End .+ now\? Claims stop at once/,
    // The invalid campaign and drops sent on purpose: Chromium logs the 400s the forms then explain.
    expectedErrors: /status of 400 \(Bad Request\) \(.*\/(campaigns|drops)(\/[\w-]+)?\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('campaigns and drops on the Program page in Chromium', () => {
  let page: Page;

  it('an admin creates a hashtag campaign in the UI; the X bot sees it at once', async () => {
    page = await onProgram('admin@springfield.example.com', 'admin');
    expect(await page.getByText('No hashtag campaign yet.').count()).toBe(1);
    await page.getByRole('button', { name: 'New campaign' }).click();
    const form = page.getByRole('form', { name: 'New campaign' });
    await form.getByLabel(/^Hashtag/).fill('spring fest');
    await serverChecksOnly(page);
    await form.getByRole('button', { name: 'Save campaign' }).click();
    await page.locator('#campaign-hashtag-error').waitFor();
    expect(await page.locator('#campaign-hashtag-error').textContent()).toBe(
      'must be # followed by 1 to 100 word characters',
    );
    expect(await form.getByLabel(/^Hashtag/).getAttribute('aria-invalid')).toBe('true');
    await expectPageSound(page, chromium.problems);

    await form.getByLabel(/^Hashtag/).fill('#springfest');
    await form.getByLabel('Reward (pts)').fill('30');
    await form.getByLabel('Starts').fill(await localInput(page, -24 * 3600_000));
    await form.getByLabel('Rewarded posts per member').fill('2');
    await page.screenshot({ path: join(SCREENSHOTS, 'program-campaign-form.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save campaign' }).click();
    const row = page.locator('tr[data-campaign="#springfest"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('30 pts');
    expect(await row.textContent()).toContain('active');

    // Through the services: the admin API's list and the X bot's active campaigns.
    const listed = await platform.get(`/admin/brands/${brand.brandId}/campaigns`, admin());
    expect(listed.body.campaigns).toEqual([
      expect.objectContaining({ hashtag: '#springfest', reward: 30, maxClaimsPerUser: 2, excludeBrandPosts: true }),
    ]);
    const active = await platform.get(`/services/campaigns/${brand.brandId}/active`);
    expect(active.body.campaigns.map((c: { hashtag: string }) => c.hashtag)).toEqual(['#springfest']);
  });

  it('an admin creates a drop by keyboard (inline messages), members claim it, its name stays text', async () => {
    await tabTo(page, 'New drop');
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'New drop' });
    await form.waitFor();
    await tabTo(page, 'Name (members see it)');
    await page.keyboard.type(DROP_NAME);
    await tabTo(page, 'Amount per claim (pts)');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('0');
    await serverChecksOnly(page);
    await tabTo(page, 'Create drop');
    await page.keyboard.press('Enter');
    await page.locator('#drop-amount-error').waitFor();
    expect(await page.locator('#drop-amount-error').textContent()).toBe('must be at least 1');
    await expectPageSound(page, chromium.problems);

    await form.getByLabel('Amount per claim (pts)').fill('25');
    await form.getByLabel('Supply (claims in all)').fill('10');
    await form.getByLabel('Closes').fill(await localInput(page, -3600_000));
    await form.getByRole('button', { name: 'Create drop' }).click();
    await page.locator('#drop-endsAt-error').waitFor();
    expect(await page.locator('#drop-endsAt-error').textContent()).toMatch(/^endsAt must be after startsAt/);

    await form.getByLabel('Closes').fill(await localInput(page, 48 * 3600_000));
    await tabTo(page, 'Create drop');
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    const drops = await platform.deps.db
      .selectFrom('drops')
      .selectAll()
      .where('brand_id', '=', brand.brandId)
      .execute();
    expect(drops.map((drop) => [drop.name, Number(drop.amount), drop.total_supply])).toEqual([[DROP_NAME, 25, 10]]);
    const dropId = drops[0]!.id;
    const row = page.locator(`tr[data-drop="${dropId}"]`);
    await row.waitFor();
    expect(await row.locator('th').textContent()).toBe(DROP_NAME);
    expect(await row.textContent()).toContain('0 of 10');

    // It takes effect at once: a member claims it through the brand-signed services.
    platform.clock.advance(1_000);
    const claim = await platform.signedPost(
      '/services/drops/claim',
      { brandId: brand.brandId, dropId, userIdentifier: 'fan@customer.example' },
      brand.securityKey,
    );
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body).toMatchObject({ amount: 25, remaining: 9 });
    await waitForMintsSettled(platform);
    await page.reload();
    await page.locator(`tr[data-drop="${dropId}"]`).waitFor();
    expect(await page.locator(`tr[data-drop="${dropId}"]`).textContent()).toContain('1 of 10');
    // The drop created the drop_claim rule, listed with the others.
    expect(await page.locator('tr[data-event-type="drop_claim"]').count()).toBe(1);
    expect(await pwned(page)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'program-campaigns-drops.png'), fullPage: true });
  });

  it('a viewer at 375 px reads both lists but sees no change control', async () => {
    const viewer = await onProgram('viewer@springfield.example.com', 'viewer', { width: 375, height: 812 });
    await viewer.locator('tr[data-campaign="#springfest"]').waitFor();
    expect(await viewer.locator('tr[data-drop]').count()).toBe(1);
    for (const name of [
      'New campaign',
      'New drop',
      'Edit #springfest',
      'End now #springfest',
      `Edit ${DROP_NAME}`,
      `End now ${DROP_NAME}`,
      'New rule',
    ]) {
      expect(await viewer.getByRole('button', { name }).count(), name).toBe(0);
    }
    await expectPageSound(viewer, chromium.problems);
    expect(await pwned(viewer)).toBeUndefined();
    await viewer.screenshot({ path: join(SCREENSHOTS, 'program-viewer-375.png'), fullPage: true });
    expect(chromium.problems).toEqual([]);
  });

  it('an admin changes the drop where it is safe, then ends it early; claims are refused from then on', async () => {
    const dropId = (await platform.get(`/admin/brands/${brand.brandId}/drops`, admin())).body.drops[0].dropId;
    const row = page.locator(`tr[data-drop="${dropId}"]`);
    await page.getByRole('button', { name: `Edit ${DROP_NAME}` }).click();
    const form = page.getByRole('form', { name: `Edit ${DROP_NAME}` });
    await form.waitFor();
    // Claimed once: the amount is fixed, and the form says so.
    expect(await form.getByLabel(/^Amount per claim/).getAttribute('readonly')).not.toBeNull();
    expect(await form.getByLabel(/^Opened/).getAttribute('readonly')).not.toBeNull();
    await form.getByLabel(/^Supply/).fill('0');
    await serverChecksOnly(page);
    await form.getByRole('button', { name: 'Save drop' }).click();
    await page.locator('#drop-totalSupply-error').waitFor();
    expect(await page.locator('#drop-totalSupply-error').textContent()).toBe('must be at least 1');
    // axe, 375 px and the console with the drop form open: the form's heading (the drop's long hostile name,
    // one unbroken "word") wraps instead of pushing the page 48 px sideways; the tables scroll in their regions.
    await expectPageSound(page, chromium.problems);
    expect(chromium.problems).toEqual([]);

    await form.getByLabel(/^Supply/).fill('20');
    await form.getByLabel(/^Name/).fill('Launch (extended)');
    await page.screenshot({ path: join(SCREENSHOTS, 'program-drop-edit.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save drop' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(async () => row.textContent()).toContain('1 of 20');
    expect(await row.locator('th').textContent()).toBe('Launch (extended)');
    // Only what was changed was sent: the same drop through the admin API, its amount and start untouched.
    const changed = (await platform.get(`/admin/brands/${brand.brandId}/drops`, admin())).body.drops[0];
    expect(changed).toMatchObject({ dropId, name: 'Launch (extended)', totalSupply: 20, amount: 25, claimed: 1 });

    // The server's clock runs an hour ahead of this browser's: the drop it ends now still ends in the browser's
    // future, and the row must say ended at once all the same (the page shows the server's status; judged by
    // the browser's clock, it offered Edit and End now on a drop the server had ended, each then a 409).
    const serverTime = platform.clock.now();
    platform.clock.set(new Date(Date.now() + 3_600_000));
    await page.getByRole('button', { name: 'End now Launch (extended)' }).click();
    // Wait on the Status cell, not the row: the row's text holds the name, and "Launch (extended)" contains
    // "ended", so a row-wide match held at once, before the end's refetch had rendered (a race that the
    // slower round trips of PostgreSQL lost, and PGlite mostly won).
    const status = row.locator('td').nth(4);
    await expect.poll(async () => status.textContent()).toBe('ended');
    expect(await page.getByRole('button', { name: 'Edit Launch (extended)' }).count()).toBe(0);
    const claim = await platform.signedPost(
      '/services/drops/claim',
      { brandId: brand.brandId, dropId, userIdentifier: 'late@customer.example' },
      brand.securityKey,
    );
    expect(claim.status).toBe(400);
    expect(claim.body.details.reason).toBe('ended');
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('subject', '=', dropId)
      .orderBy('id')
      .execute();
    expect(audit.map((entry) => `${entry.actor} ${entry.action}`)).toEqual([
      'portal:admin@springfield.example.com drop.create',
      'portal:admin@springfield.example.com drop.update',
      'portal:admin@springfield.example.com drop.end',
    ]);
    platform.clock.set(serverTime);
    await expectPageSound(page, chromium.problems);
    expect(chromium.problems).toEqual([]);
  });

  it("a campaign's status is the server's, whatever this browser's clock says", async () => {
    // The server ended this campaign an hour ago; this browser's clock runs 90 minutes behind, inside the
    // window. Judged by the browser's clock the row said "active" and offered End now (then a 409).
    const serverNow = platform.clock.now().getTime();
    const created = await platform.post(
      `/admin/brands/${brand.brandId}/campaigns`,
      {
        hashtag: '#lasthour',
        reward: 5,
        startDate: new Date(serverNow - 2 * 3600_000).toISOString(),
        endDate: new Date(serverNow - 3600_000).toISOString(),
      },
      admin(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const behind = await chromium.newPage();
    await behind.clock.install({ time: new Date(serverNow - 90 * 60_000) });
    await signInByInvite(
      platform,
      behind,
      { brandId: brand.brandId, email: 'late@springfield.example.com', role: 'admin' },
      PASSWORD,
    );
    await goTo(behind, 'Program');
    const row = behind.locator('tr[data-campaign="#lasthour"]');
    await row.waitFor();
    expect(await row.locator('td').nth(3).textContent()).toBe('ended');
    expect(await behind.getByRole('button', { name: 'End now #lasthour' }).count()).toBe(0);
    expect(await behind.evaluate(() => Date.now())).toBeLessThan(serverNow - 3600_000);
  });

  it("an admin at 375 px ends the campaign early at the server's now; the X bot no longer sees it", async () => {
    const narrow = await onProgram('admin2@springfield.example.com', 'admin', { width: 375, height: 812 });
    await narrow.locator('tr[data-campaign="#springfest"]').waitFor();
    expect(await sidewaysOverflow(narrow), await elementsPastTheEdge(narrow)).toBeLessThanOrEqual(0);
    // The page sends no time: the server ends it at its own clock's now, and says ended at once.
    await narrow.getByRole('button', { name: 'End now #springfest' }).click();
    await expect.poll(async () => narrow.locator('tr[data-campaign="#springfest"]').textContent()).toContain('ended');
    const active = await platform.get(`/services/campaigns/${brand.brandId}/active`);
    expect(active.body.campaigns).toEqual([]);
    expect(chromium.problems).toEqual([]);
  });
});
