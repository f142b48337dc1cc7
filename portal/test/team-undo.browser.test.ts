import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  expectPageSound,
  SCREENSHOTS,
  sidewaysOverflow,
  signIn,
  signInByInvite,
  startChromium,
} from './browser-helpers.ts';

// Issue 33 §10 and §11 in Chromium against a real core-api (PGlite + anvil + our contracts), through the UI
// only: the owner revokes an invite, ends a teammate's sessions, removes a teammate, and a teammate leaves;
// then a rule and a perk are archived and restored and a member is blocked and unblocked, each with what the
// page says and what the platform then does. axe-core, 375 px and the console on every page it lands on.

const PASSWORD = 'portal password 1';
const MEMBER = 'shopper@customer.example';

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };
const consoleErrors: string[] = [];

async function page(viewport?: { width: number; height: number }): Promise<Page> {
  const opened = await chromium.newPage(viewport);
  opened.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[149]/.test(message.text())) consoleErrors.push(message.text());
  });
  return opened;
}

async function brandPage(on: Page, name: string) {
  await on.getByRole('navigation', { name: 'Brand pages' }).getByRole('link', { name, exact: true }).click();
  await on.getByRole('heading', { name, exact: true }).waitFor();
}

/** Every page of the journey: no serious axe finding, fits 375 px. */
async function checkPage(on: Page) {
  await expectPageSound(on, chromium.problems);
  const size = on.viewportSize()!;
  await on.setViewportSize({ width: 375, height: 800 });
  expect(await sidewaysOverflow(on)).toBeLessThanOrEqual(0);
  await on.setViewportSize(size);
}

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
    name: 'Acme Team',
    domain: 'team.example.com',
    rules: [
      { eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'test_rule', rewardAmount: 3, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  for (let i = 0; i < 2; i++) expect((await signedEvent('purchase')).status).toBe(200);
  await waitForMintsSettled(platform);
  chromium = await startChromium({
    confirms: /^(Remove|Revoke|Sign .* out everywhere|Leave this brand|Archive)/,
    // The refusals this journey provokes on purpose: the voided invite link, the removed teammate's dashboard,
    // the signed-out teammate's dashboard when its refresh comes before the reload (401), the last owner's leave.
    // The dashboard's reads are its figures and its tier distribution.
    expectedErrors:
      /status of (400 \(Bad Request\) \(.*\/invites\/accept|40[14] \((Unauthorized|Not Found)\) \(.*\/brands\/0x[0-9a-f]{40}\/(dashboard\?days=30|tiers\/distribution)|409 \(Conflict\) \(.*\/brands\/0x[0-9a-f]{40}\/leave)\)$/,
  });
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

describe('the team itself, in Chromium', () => {
  let owner: Page;

  it('revokes an invite, ends a teammate’s sessions, removes a teammate; a teammate leaves', async () => {
    owner = await page();
    await signInByInvite(
      platform,
      owner,
      { brandId: brand.brandId, email: 'owner@team.example', role: 'owner' },
      PASSWORD,
    );
    const admin = await page();
    await signInByInvite(
      platform,
      admin,
      { brandId: brand.brandId, email: 'admin@team.example', role: 'admin' },
      PASSWORD,
    );
    const viewer = await page();
    await signInByInvite(
      platform,
      viewer,
      { brandId: brand.brandId, email: 'viewer@team.example', role: 'viewer' },
      PASSWORD,
    );

    await brandPage(owner, 'Team');
    const form = owner.getByRole('form', { name: 'Invite a teammate' });
    await form.getByLabel('E-mail').fill('oops@wrong.example');
    await form.getByRole('button', { name: 'Send invite' }).click();
    await owner.getByText('Invited oops@wrong.example.').waitFor();
    const inviteUrl = (await owner.getByTestId('invite-url').textContent()) ?? '';
    await owner.getByRole('button', { name: 'Revoke the invite to oops@wrong.example' }).click();
    await owner.getByText('The invite to oops@wrong.example was revoked.').waitFor();
    // The list is read again after the answer: the revoked invite leaves it once that read lands.
    await expect.poll(() => owner.getByRole('heading', { name: 'Pending invites' }).count()).toBe(0);
    // The revoked link is no longer offered to pass on ("The link works once, for 72 hours" was left standing).
    await expect.poll(() => owner.getByTestId('invite-url').count()).toBe(0);
    const stale = await chromium.newPage(); // its refused accept (400) is the point
    await stale.goto(inviteUrl);
    await stale.getByLabel('New password (at least 10 characters)').fill(PASSWORD);
    await stale.getByLabel('Repeat the password').fill(PASSWORD);
    await stale.getByRole('button', { name: 'Set password and sign in' }).click();
    await stale.getByText(/invalid, expired or already used/).waitFor();

    await owner.getByRole('button', { name: 'End sessions of admin@team.example' }).click();
    await owner.getByText('admin@team.example is signed out everywhere.').waitFor();
    await admin.reload();
    await admin.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await signIn(admin, platform.url, 'admin@team.example', PASSWORD);

    await owner.getByRole('button', { name: 'Remove viewer@team.example' }).click();
    await owner.getByText('viewer@team.example was removed from the team; their pending invites are void.').waitFor();
    await expect.poll(() => owner.getByRole('rowheader', { name: 'viewer@team.example' }).count()).toBe(0);
    await viewer.reload();
    await viewer
      .getByRole('alert')
      .getByText(/Brand not found/)
      .first() // the figures and the tier distribution each say so
      .waitFor();
    await viewer.getByRole('link', { name: 'pts portal' }).click();
    await viewer.getByText('You are not in any brand yet').waitFor();

    await checkPage(owner);
    await owner.screenshot({ path: join(SCREENSHOTS, 'team-manage.png'), fullPage: true });

    await brandPage(admin, 'Team');
    expect(await admin.getByRole('button', { name: /^Remove / }).count()).toBe(0); // owners only
    await admin.getByRole('button', { name: 'Leave brand' }).click();
    await admin.getByText('You are not in any brand yet').waitFor();
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('brand_id', '=', brand.brandId)
      .where('action', 'like', 'portal.%')
      .orderBy('id')
      .execute();
    expect(audit.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['portal.invite_revoke', 'portal.sessions_end', 'portal.member_remove', 'portal.leave']),
    );

    // The last owner cannot leave: the page says what to do.
    await owner.getByRole('button', { name: 'Leave brand' }).click();
    await owner
      .getByRole('alert')
      .getByText(/last owner .* make someone else owner before you leave/)
      .waitFor();
    await owner.screenshot({ path: join(SCREENSHOTS, 'team-last-owner.png') });
  });

  it('archives and restores a rule and a perk, and blocks and unblocks a member', async () => {
    await brandPage(owner, 'Program');
    await owner.getByRole('button', { name: 'Archive test_rule' }).click();
    await owner.getByText('test_rule is archived: its events earn nothing now.').waitFor();
    expect(await owner.locator('tr[data-event-type="test_rule"]').textContent()).toContain('archived');
    const refused = await signedEvent('test_rule');
    expect(refused.body.code).toBe('RULE_ARCHIVED');
    await checkPage(owner);
    await owner.locator('tr[data-event-type="test_rule"]').scrollIntoViewIfNeeded();
    await owner.screenshot({ path: join(SCREENSHOTS, 'program-rule-archived.png') });
    await owner.getByRole('button', { name: 'Restore test_rule' }).click();
    await owner.getByText('test_rule is restored, paused: resume it to earn again.').waitFor();
    expect(await owner.locator('tr[data-event-type="test_rule"]').textContent()).toContain('paused');

    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Test perk by mistake', cost: 5 },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(created.status).toBe(201);
    const catalogue = async () =>
      ((await platform.get(`/services/perks/${brand.brandId}`)).body.perks as { name: string }[]).map((p) => p.name);
    expect(await catalogue()).toContain('Test perk by mistake');
    await brandPage(owner, 'Perks');
    await owner.getByRole('link', { name: 'Test perk by mistake' }).click();
    await owner.locator('h1.perk-name').waitFor();
    await owner.getByRole('button', { name: 'Archive perk' }).click();
    await owner.getByText('Archived: members no longer see it.').waitFor();
    await owner.getByText(/^archived .*: in no catalogue, redemptions refused$/).waitFor();
    expect(await catalogue()).not.toContain('Test perk by mistake');
    await checkPage(owner);
    await owner.screenshot({ path: join(SCREENSHOTS, 'perk-archived.png'), fullPage: true });
    await owner.getByRole('button', { name: 'Restore perk' }).click();
    await owner.getByText('Restored, inactive: edit it to offer it again.').waitFor();

    await brandPage(owner, 'Members');
    await owner.getByLabel('E-mail, platform id (discord:123) or wallet').fill('shopper@');
    await owner.getByRole('button', { name: 'Search' }).click();
    await owner.getByRole('link', { name: MEMBER }).click();
    await owner.locator('h1.member-name').waitFor();
    const block = owner.getByRole('form', { name: 'Block or unblock' });
    await block.getByLabel('Reason (required; kept in the audit log)').fill('Self-referral fraud');
    await block.getByRole('button', { name: 'Block member' }).click();
    await owner.getByTestId('member-blocked').waitFor();
    expect(await owner.getByTestId('member-blocked').textContent()).toContain('Self-referral fraud');
    expect((await signedEvent('purchase')).body.code).toBe('MEMBER_BLOCKED');
    await owner.reload();
    const rejected = owner.locator('tr[data-status="rejected"]').first();
    await rejected.waitFor();
    expect(await rejected.textContent()).toContain('the brand had blocked the member');
    await checkPage(owner);
    await owner.screenshot({ path: join(SCREENSHOTS, 'member-blocked.png'), fullPage: true });
    await owner.getByRole('button', { name: 'Unblock member' }).click();
    await owner.getByText('Unblocked.').waitFor();
    await expect.poll(() => owner.getByTestId('member-blocked').count()).toBe(0);
    expect((await signedEvent('purchase')).status).toBe(200);

    expect(chromium.problems).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
