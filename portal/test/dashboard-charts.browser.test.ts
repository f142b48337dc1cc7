import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// Charts that read at real volume (issue 33 §13), in Chromium: a brand whose pts run to hundreds of thousands
// a day. The y labels are whole (inside their chart, not cut to "00,000"), the figures carry thousands
// separators, relayer gas is not 18 decimals, and the "Refused" column is on screen at 1280 px.

const PASSWORD = 'charts password 1';
const EMAIL = 'owner@charts.example.com';
/** A long, real-looking event type: the one that pushed the Refused column off screen. */
const EVENT = 'newsletter_subscribe_double_opt_in';
const REWARD = 300_000;

let platform: TestPlatform;
let chromium: Awaited<ReturnType<typeof startChromium>>;
let brand: Awaited<ReturnType<TestPlatform['createBrand']>>;

/** A brand-signed event a minute after the previous one. */
async function earn(identity: string, status = 200) {
  platform.clock.set(new Date(platform.clock.now().getTime() + 60_000));
  const answer = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: EVENT, userEmail: identity, domain: 'charts.example.com', metadata: {} },
    brand.securityKey,
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  brand = await platform.createBrand({
    name: 'Charts',
    domain: 'charts.example.com',
    rules: [{ eventType: EVENT, rewardAmount: REWARD, cooldownHours: 0, maxClaims: 1 }],
  });
  // 600,000 pts issued in a day, and one refusal (the second claim of a one-claim rule).
  await earn('ann@charts.example.com');
  await earn('bob@charts.example.com');
  await earn('ann@charts.example.com', 429);
  platform.clock.set(new Date(platform.clock.now().getTime() + 60_000));
  chromium = await startChromium();
  // The owner's account: invited, password chosen, signed out; each test signs in through the form.
  const page = await chromium.newPage();
  await signInByInvite(platform, page, { brandId: brand.brandId, email: EMAIL, role: 'owner' }, PASSWORD);
  await signOut(page);
  await page.close();
});

afterAll(async () => {
  await chromium?.close();
  await platform?.stop();
});

/** Every y-axis label of every chart on the page: its text, and whether its box lies inside its svg. */
function axisLabels(page: import('playwright-core').Page) {
  return page.locator('.chart svg').evaluateAll((svgs) =>
    svgs.flatMap((svg) => {
      const frame = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text.y-label')].map((label) => {
        const box = label.getBoundingClientRect();
        return {
          text: label.textContent ?? '',
          inside:
            box.width > 0 &&
            box.left >= frame.left - 0.5 &&
            box.right <= frame.right + 0.5 &&
            box.top >= frame.top - 0.5 &&
            box.bottom <= frame.bottom + 0.5,
        };
      });
    }),
  );
}

describe('dashboard charts at real volume', () => {
  it('the "Refused" column of the top event types is on screen at 1280 px', async () => {
    const page = await chromium.newPage();
    await signIn(page, platform.url, EMAIL, PASSWORD);
    const table = page.getByRole('table', { name: 'Top event types' });
    const refused = table.getByRole('columnheader', { name: 'Refused' });
    const box = await refused.boundingBox();
    const region = await page.getByRole('region', { name: 'Top event types' }).boundingBox();
    expect(box && region).toBeTruthy();
    expect(box!.x + box!.width).toBeLessThanOrEqual(region!.x + region!.width);
    expect(box!.x + box!.width).toBeLessThanOrEqual(1280);
    const row = table.getByRole('row', { name: new RegExp(EVENT) });
    expect(await row.getByRole('cell').allInnerTexts()).toEqual(['2', '1', '2', '600,000']);

    await page.close();
  });

  it('y labels are whole at 1280 and 375 px, figures have separators, pts spent has its own chart', async () => {
    const page = await chromium.newPage();
    await signIn(page, platform.url, EMAIL, PASSWORD);
    await goTo(page, 'Program');
    await goTo(page, 'Dashboard');
    await page
      .getByRole('img', { name: /pts issued/ })
      .first()
      .waitFor();

    const stats = page.getByRole('definition');
    await expect.poll(() => stats.allInnerTexts()).toContainEqual(expect.stringContaining('600,000'));
    // Relayer gas reads as a short ETH figure, never 18 decimals.
    const gas = (await page.locator('.stat', { hasText: 'Relayer gas' }).locator('.stat-value').textContent()) ?? '';
    expect(gas).toMatch(/^[\d,]+(\.\d{1,9})? ETH$/);
    expect(gas.replace(/\D/g, '').replace(/^0+/, '').replace(/0+$/, '').length).toBeLessThanOrEqual(6);

    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      await expect.poll(async () => (await axisLabels(page)).length).toBeGreaterThan(0);
      const labels = await axisLabels(page);
      // The pts axis reaches past 600,000 and says so whole ("600K"), not "00,000".
      expect(labels.map((l) => l.text)).toContainEqual(expect.stringMatching(/^(600K|600,000|800K)$/));
      for (const label of labels)
        expect(label, `${width} px: ${JSON.stringify(label)}`).toMatchObject({ inside: true });
    }

    // pts spent and perks redeemed have their own chart, not flat lines under 600,000 pts.
    await page.setViewportSize({ width: 1280, height: 900 });
    const issued = page.getByRole('img', { name: /pts issued/ });
    const spent = page.getByRole('img', { name: /pts spent/ });
    expect(await issued.count()).toBe(1);
    expect(await spent.count()).toBe(1);
    expect(await issued.getAttribute('aria-label')).not.toMatch(/pts spent|Perks redeemed/);
    await page.locator('.charts').screenshot({ path: join(SCREENSHOTS, 'dashboard-charts.png') });

    await expectPageSound(page, chromium.problems);
  });
});
