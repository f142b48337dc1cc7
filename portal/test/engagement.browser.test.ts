import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  elementsPastTheEdge,
  expectPageSound,
  goTo,
  pwned,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  signInByInvite,
  startChromium,
  tabTo,
} from './browser-helpers.ts';

// The Program page's streak settings, milestones and achievements in Chromium against a real core-api
// (PGlite + anvil + our contracts): an admin changes the streak settings, adds a milestone and creates an
// achievement in the UI (inline messages from the shared schemas), and the services and the admin API answer
// them at once; a hostile name stays text; a viewer sees no change control (and gets 403 anyway); axe-core,
// the keyboard and 375 px. Screenshots land in docs/portal/ (docs/portal.md shows them).

const PASSWORD = 'portal password 1';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const ACHIEVEMENT = `Super fan ${HOSTILE}`;

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const newPage = (viewport?: { width: number; height: number }) => chromium.newPage(viewport);

/** The Program page, with the streak and achievement sections loaded. */
async function openProgram(page: Page) {
  await goTo(page, 'Program');
  await page.getByRole('heading', { name: 'Streaks and milestones' }).waitFor();
  await page.getByRole('heading', { name: 'Achievements', exact: true }).waitFor();
  await page.locator('[data-testid="milestones"] tbody tr').first().waitFor();
}

const streakSettings = async () => (await platform.get(`/services/streak/settings/${brand.brandId}`)).body;
const achievements = async () => (await platform.get(`/admin/brands/${brand.brandId}/achievements`, admin())).body;

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Corner Bakery',
    domain: 'bakery.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
  });
  chromium = await startChromium({
    // The viewer's changes sent around the UI on purpose: Chromium logs the 403s.
    expectedErrors: /status of 403 \(Forbidden\) \(.*\/(streak-settings|achievements)\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('streaks and achievements on the Program page in Chromium', () => {
  let page: Page;

  it('an admin changes the streak settings and adds a milestone; the services answer them at once', async () => {
    page = await newPage();
    await signInByInvite(
      platform,
      page,
      { brandId: brand.brandId, email: 'admin@bakery.example', role: 'admin' },
      PASSWORD,
    );
    await openProgram(page);
    await expectPageSound(page, chromium.problems);

    await page.getByRole('button', { name: 'Edit streak settings' }).click();
    const form = page.getByRole('form', { name: 'Streak settings' });
    await form.getByLabel(/^Grace period in hours/).fill('12');
    await form.getByRole('button', { name: 'Add milestone' }).click();
    // Default milestones are 7, 30, 100 and 365 days: the fifth must come after 365.
    await form.getByLabel('Milestone 5: days').fill('200');
    await form.getByLabel('Milestone 5: bonus (pts)').fill('15000');
    await form.getByRole('button', { name: 'Save streak settings' }).click();
    // The shared schema's messages, next to their fields; nothing was sent.
    await page.locator('#streak-graceHours-error').waitFor();
    expect(await page.locator('#streak-graceHours-error').textContent()).toBe('must be at least 24 (a day)');
    expect(await page.locator('#streak-milestones-error').textContent()).toBe(
      'milestones must be sorted by days, each longer than the one before',
    );
    expect(await form.getByLabel(/^Grace period in hours/).getAttribute('aria-invalid')).toBe('true');
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'streak-form.png'), fullPage: true });
    expect((await streakSettings()).custom).toBe(false);

    await form.getByLabel(/^Grace period in hours/).fill('48');
    await form.getByLabel('Milestone 5: days').fill('400');
    await form.getByRole('button', { name: 'Save streak settings' }).click();
    await page.getByText('Streak settings saved; they apply at once.').waitFor();
    const row = page.locator('[data-testid="milestones"] tr[data-days="400"]');
    expect(await row.textContent()).toContain('15000 pts');
    expect(await page.getByTestId('streak-facts').textContent()).toContain('48 h');

    // The services API (bots, the site plugin, brand back-ends) answers the same, at once.
    const settings = await streakSettings();
    expect(settings.custom).toBe(true);
    expect(settings.settings.graceHours).toBe(48);
    expect(settings.settings.milestones.at(-1)).toEqual({ days: 400, bonus: 15000 });
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'streak.settings')
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe('portal:admin@bakery.example');
  });

  it('the admin creates an achievement (inline message first); the admin API answers it; the name stays text', async () => {
    await page.getByRole('button', { name: 'New achievement' }).click();
    const form = page.getByRole('form', { name: 'New achievement' });
    await form.getByLabel('Name (members see it)').fill(ACHIEVEMENT);
    await form.getByLabel('What it counts').selectOption({ label: 'Rewards earned' });
    await form.getByLabel('Threshold (the count that unlocks it)').fill('0');
    await form.getByLabel('Description').fill(`Earn 3 rewards ${HOSTILE}`);
    await form.getByRole('button', { name: 'Save achievement' }).click();
    await page.locator('#achievement-threshold-error').waitFor();
    expect(await page.locator('#achievement-threshold-error').textContent()).toMatch(/>=\s*1/);
    await expectPageSound(page, chromium.problems);
    expect((await achievements()).defaults).toBe(true);

    await form.getByLabel('Threshold (the count that unlocks it)').fill('3');
    const id = await form.getByLabel(/^Id /).inputValue();
    expect(id).toMatch(/^super_fan_[a-z0-9_]+$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'achievement-form.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save achievement' }).click();
    await page.getByText(`Saved “${ACHIEVEMENT}”.`).waitFor();
    const row = page.locator(`tr[data-achievement-id="${id}"]`);
    expect(await row.locator('th').textContent()).toBe(`${ACHIEVEMENT}${id}`);
    expect(await row.textContent()).toContain('Rewards earned');
    expect(await pwned(page)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.getByTestId('achievement-defaults').count()).toBe(0);

    // The admin API (and the CLI and the agent behind it) sees the defaults plus the new one.
    const answer = await achievements();
    expect(answer.defaults).toBe(false);
    expect(answer.definitions.at(-1)).toEqual({
      id,
      type: 'events_claimed',
      threshold: 3,
      name: ACHIEVEMENT,
      description: `Earn 3 rewards ${HOSTILE}`,
    });
    expect(answer.definitions).toHaveLength(18);
    await expectPageSound(page, chromium.problems);
    await page.screenshot({ path: join(SCREENSHOTS, 'program-engagement.png'), fullPage: true });
  });

  it('creates an achievement by keyboard alone', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Achievements', exact: true }).waitFor();
    await page.locator('[data-testid="milestones"] tbody tr').first().waitFor();
    await tabTo(page, 'New achievement', 200);
    await page.keyboard.press('Enter');
    // The form's first field has the focus.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe('name');
    await page.keyboard.type('Keyboard hero');
    await tabTo(page, 'Threshold (the count that unlocks it)');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('5');
    await tabTo(page, 'Save achievement');
    await page.keyboard.press('Enter');
    await page.getByText('Saved “Keyboard hero”.').waitFor();
    expect((await achievements()).definitions.at(-1)).toMatchObject({ id: 'keyboard_hero', threshold: 5 });
  });

  it('a viewer sees the settings and achievements without any change control, and is refused anyway', async () => {
    const viewer = await newPage();
    await signInByInvite(
      platform,
      viewer,
      { brandId: brand.brandId, email: 'viewer@bakery.example', role: 'viewer' },
      PASSWORD,
    );
    await openProgram(viewer);
    expect(await viewer.locator('[data-testid="milestones"] tr[data-days="400"]').count()).toBe(1);
    expect(await viewer.locator('tr[data-achievement-id="keyboard_hero"]').count()).toBe(1);
    const controls = viewer.getByRole('button', {
      name: /Edit streak settings|New achievement|Restore the defaults|^Edit |^Remove /,
    });
    expect(await controls.count()).toBe(0);
    expect(await viewer.getByRole('form').count()).toBe(0);
    // The API refuses the viewer's change even with a valid session and CSRF token.
    const statuses = await viewer.evaluate(async (brandId) => {
      const session = await (await fetch('/portal/api/session')).json();
      const put = (path: string, body: unknown) =>
        fetch(`/portal/api/brands/${brandId}/${path}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
          body: JSON.stringify(body),
        }).then((r) => r.status);
      return [await put('streak-settings', { graceHours: 24 }), await put('achievements', { definitions: [] })];
    }, brand.brandId);
    expect(statuses).toEqual([403, 403]);
    expect((await streakSettings()).settings.graceHours).toBe(48);
    expect((await achievements()).defaults).toBe(false);
    await expectPageSound(viewer, chromium.problems);
  });

  it('works at 375 px: no sideways scrolling with both forms open', async () => {
    const narrow = await newPage({ width: 375, height: 740 });
    await signIn(narrow, platform.url, 'admin@bakery.example', PASSWORD);
    await openProgram(narrow);
    expect(await sidewaysOverflow(narrow), await elementsPastTheEdge(narrow)).toBeLessThanOrEqual(0);
    await narrow.getByRole('button', { name: 'Edit streak settings' }).click();
    await narrow.getByRole('button', { name: 'New achievement' }).click();
    await narrow.getByRole('form', { name: 'Streak settings' }).waitFor();
    await narrow.getByRole('form', { name: 'New achievement' }).waitFor();
    expect(await sidewaysOverflow(narrow), await elementsPastTheEdge(narrow)).toBeLessThanOrEqual(0);
    const save = await narrow.getByRole('button', { name: 'Save streak settings' }).boundingBox();
    expect(save && save.x >= 0 && save.x + save.width <= 375).toBe(true);
    await expectPageSound(narrow, chromium.problems);
    await narrow.getByRole('form', { name: 'Streak settings' }).screenshot({
      path: join(SCREENSHOTS, 'streak-form-375.png'),
    });
  });

  it('ran no inline script and broke no CSP rule', () => {
    expect(chromium.problems).toEqual([]);
  });
});
