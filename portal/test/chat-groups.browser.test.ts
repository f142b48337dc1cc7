import { join } from 'node:path';
import { createCoreClient } from '@pts/shared';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  axeViolations,
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

// Chat groups on the Integrations page in Chromium against a real core-api (PGlite + anvil): a group the
// bots set up with /setup is listed; an admin changes its rewards (inline messages from the shared schema)
// and the bots read the change at once; then unlinks it. A hostile group name stays text; a viewer sees no
// control; axe-core, the keyboard and 375 px. The group's rewards are brand-wide rules: the form says so and
// shows them, and saving a reward leaves the rule's cooldown and claim limit as the brand set them (issue 33 §4).

const PASSWORD = 'portal password 1';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const GROUP = 'discord:5550001';
const NAME = `Fans ${HOSTILE}`;

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
const bot = () =>
  createCoreClient({
    baseUrl: platform.url,
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    clock: platform.clock,
  });

/** A new browser signed in by invite, on the Integrations page. */
async function onIntegrations(email: string, role: 'admin' | 'viewer', viewport?: { width: number; height: number }) {
  const page = await chromium.newPage(viewport);
  await signInByInvite(platform, page, { brandId: brand.brandId, email, role }, PASSWORD);
  await goTo(page, 'Integrations');
  await page.getByRole('heading', { name: 'Chat groups' }).waitFor();
  return page;
}
const row = (page: Page) => page.locator(`tr[data-chat-group="${GROUP}"]`);

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Chatty Shop', domain: 'chatty.example.com' });
  await platform.setRule(brand.brandId, {
    eventType: 'daily_checkin',
    rewardAmount: 10,
    cooldownHours: 20,
    maxClaims: 1,
  });
  await bot().chatGroupSetup({
    securityKey: brand.securityKey,
    platform: 'discord',
    chatGroupId: '5550001',
    groupName: NAME,
    setupBy: 'mod#1',
  });
  chromium = await startChromium({
    confirms: /^Unlink .+\? The bots stop rewarding in it\.$/,
    // The refused -5 reward, provoked on purpose: Chromium logs the 400 the form then explains.
    expectedErrors: /status of 400 \(Bad Request\) \(.*\/chat-groups\//,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('chat groups on the Integrations page in Chromium', () => {
  let page: Page;

  it('an admin changes a group by keyboard (inline messages first); the bots read it at once', async () => {
    page = await onIntegrations('admin@chatty.example.com', 'admin');
    await row(page).waitFor();
    expect(await row(page).locator('th').textContent()).toBe(NAME);
    expect(await row(page).textContent()).toContain('check-in 10');
    await tabTo(page, `Edit ${NAME}`);
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: `Edit ${NAME}` });
    await form.waitFor();
    await tabTo(page, 'Daily check-in reward (pts)');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('-5');
    await tabTo(page, 'Save group');
    await page.keyboard.press('Enter');
    await page.locator('#chat-dailyReward-error').waitFor();
    expect(await page.locator('#chat-dailyReward-error').textContent()).toBe('must be at least 0');
    expect(await form.getByLabel('Daily check-in reward (pts)').getAttribute('aria-invalid')).toBe('true');
    expect(await axeViolations(page)).toEqual([]);
    // Brand-wide, and the rule it changes as it stands now.
    const brandWide = form.getByRole('note', { name: 'Brand-wide rules' });
    await expect.poll(() => brandWide.textContent()).toContain('daily_checkin: 10 pts, 20 h cooldown, at most 1 claim');
    expect(await brandWide.textContent()).toContain('Brand-wide');

    await form.getByLabel('Daily check-in reward (pts)').fill('35');
    await form.getByLabel('Reward good-morning and good-night messages').uncheck();
    await page.screenshot({ path: join(SCREENSHOTS, 'integrations-chat-group.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save group' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(async () => row(page).textContent()).toContain('check-in 35');
    expect(await row(page).textContent()).toContain('good morning/night off');
    const seen = await bot().chatGroupGet(GROUP);
    expect(seen.configMetadata).toMatchObject({ dailyReward: 35, naturalParticipation: { enabled: false } });
    expect(seen.groupName).toBe(NAME);
    expect(await pwned(page)).toBeUndefined();

    // The Program page shows the rule: the new reward, the brand's 20 h cooldown and one claim kept.
    await goTo(page, 'Program');
    const checkin = page.locator('tr[data-event-type="daily_checkin"]');
    await expect.poll(() => checkin.textContent()).toContain('daily_checkin35 pts20 h1manual');
    await expectPageSound(page, chromium.problems);
    await goTo(page, 'Integrations');
    await row(page).waitFor();
    await expectPageSound(page, chromium.problems);
  });

  it('a viewer at 375 px sees the group without any control', async () => {
    const viewer = await onIntegrations('viewer@chatty.example.com', 'viewer', { width: 375, height: 812 });
    await row(viewer).waitFor();
    expect(await viewer.getByRole('button', { name: `Edit ${NAME}` }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: `Unlink ${NAME}` }).count()).toBe(0);
    expect(await sidewaysOverflow(viewer), await elementsPastTheEdge(viewer)).toBeLessThanOrEqual(0);
    expect(await axeViolations(viewer)).toEqual([]);
    expect(await pwned(viewer)).toBeUndefined();
  });

  it('an admin unlinks the group: the bots see it inactive, the audit log names the admin', async () => {
    await page.getByRole('button', { name: `Unlink ${NAME}` }).click();
    await expect.poll(async () => row(page).textContent()).toContain('unlinked');
    expect(await page.getByRole('button', { name: `Edit ${NAME}` }).count()).toBe(0);
    expect((await bot().chatGroupGet(GROUP)).isActive).toBe(false);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('subject', '=', GROUP)
      .where('actor', 'like', 'portal:%')
      .orderBy('id')
      .execute();
    expect(audit.map((entry) => `${entry.actor} ${entry.action}`)).toEqual([
      'portal:admin@chatty.example.com chat_group.update',
      'portal:admin@chatty.example.com chat_group.deactivate',
    ]);
    expect(await axeViolations(page)).toEqual([]);
    expect(chromium.problems).toEqual([]);
  });
});
