import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  expectPageSound,
  goTo,
  SCREENSHOTS,
  signIn,
  signInByInvite,
  signOut,
  startChromium,
} from './browser-helpers.ts';

// Find your customers (issue 33 §12), walked in Chromium against a real core-api (PGlite + anvil + the
// contracts): sign in through the form, open Members by its link, sort, page, search anywhere, then follow a
// name on the dashboard's leaderboard to the member's page. axe, 375 px and the console checked on the way.

const PASSWORD = 'members list password';
const OWNER = 'owner@list.journey.example';
const TOP = 'top.earner@customer.example';
const SHOPPER = 'a.shopper@customer.example';
const CROWD = Array.from({ length: 28 }, (_, i) => `member${String(i).padStart(2, '0')}@crowd.example`);

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: { brandId: string; securityKey: string };

async function earn(identityKey: string) {
  platform.clock.advance(61_000);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'earn', userEmail: identityKey },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000' });
  brand = await platform.createBrand({
    name: 'List Journey',
    domain: 'list.journey.example',
    rules: [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
  });
  // 30 members: the crowd earns 10 each, the shopper 20, the top earner 30 (and joins last).
  for (const key of [...CROWD, SHOPPER, SHOPPER, TOP, TOP, TOP]) await earn(key);
  await waitForMintsSettled(platform);
  chromium = await startChromium();
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

const firstMember = (page: import('playwright-core').Page) =>
  page
    .getByRole('table', { name: /^Members, page/ })
    .getByRole('rowheader')
    .first()
    .innerText();

describe('find your customers', () => {
  it('sorts, pages and searches the members, and a leaderboard name opens the member', async () => {
    const page = await chromium.newPage();
    await signInByInvite(platform, page, { brandId: brand.brandId, email: OWNER, role: 'owner' }, PASSWORD);
    await signOut(page);
    await signIn(page, platform.url, OWNER, PASSWORD);

    await goTo(page, 'Members');
    // By last activity, latest first: the top earner acted last.
    await expect.poll(() => firstMember(page)).toBe(TOP);
    await page.getByLabel('Sort by').selectOption('earned');
    await page.getByLabel('Order').selectOption('asc');
    await page.getByRole('table', { name: 'Members, page 1, by earned' }).waitFor();
    await expect.poll(() => firstMember(page)).toBe(CROWD[0]);
    await expectPageSound(page, chromium.problems);

    // 25 a page: page 2 holds the last five, the highest earners last.
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('table', { name: 'Members, page 2, by earned' }).waitFor();
    const secondPage = await page
      .getByRole('table', { name: /^Members, page 2/ })
      .getByRole('rowheader')
      .allInnerTexts();
    expect(secondPage.map((text) => text.split(' ')[0])).toEqual([...CROWD.slice(25), SHOPPER, TOP]);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('table', { name: 'Members, page 1, by earned' }).waitFor();

    // Anywhere in the e-mail: `shopper` finds a.shopper@….
    await page.getByLabel('E-mail, platform id (discord:123) or wallet').fill('shopper');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect
      .poll(() =>
        page
          .getByRole('table', { name: /^Members, page 1/ })
          .getByRole('rowheader')
          .allInnerTexts(),
      )
      .toEqual([SHOPPER]);
    expect(await page.getByRole('link', { name: 'Export these members (CSV)' }).getAttribute('href')).toContain(
      'q=shopper',
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'members-list.png'), fullPage: true });
    await expectPageSound(page, chromium.problems);

    // The dashboard's leaderboard names the members; a name opens their page.
    await goTo(page, 'Dashboard');
    const leaderboard = page.getByRole('table', { name: /^Leaderboard/ });
    await leaderboard.getByRole('link', { name: TOP }).click();
    await page.waitForURL(new RegExp(`/members/${encodeURIComponent(TOP)}$`));
    await page.getByText('30', { exact: false }).first().waitFor();
    await expectPageSound(page, chromium.problems);
    expect(chromium.problems).toEqual([]);
  });
});
