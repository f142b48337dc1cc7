import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import type { TestPlatform } from '../../core-api/test/platform.ts';

// What the portal's Chromium journeys share: how Chromium starts, where screenshots go, axe-core.

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '../../docs/portal');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected above
    const axe = (window as any).axe;
    const run = await axe.run(document, { resultTypes: ['violations'] });
    return run.violations.map((v: { id: string; impact: string; nodes: { target: string[] }[] }) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return results
    .filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: { id: string; targets: string[] }) => `${v.id}: ${v.targets.join(', ')}`);
}

/** How far the page scrolls sideways (0 or less: it fits the viewport). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/**
 * The elements that reach past the viewport's right edge, or whose own text does (an unbroken word overflows a
 * box that fits): what to fix when the page scrolls sideways. The innermost are named (their ancestors overflow
 * because of them), and what scrolls inside a region of its own (a wide table in its `.table-wrap`) is left out:
 * it reaches past the edge without moving the page, and listing it hid the element that did.
 */
export function elementsPastTheEdge(page: Page): Promise<string> {
  return page.evaluate(() => {
    const scrollsInside = (element: Element) => {
      for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(up).overflowX)) return true;
      }
      return false;
    };
    const past = [...document.querySelectorAll('body *')].filter((element) => {
      const box = element.getBoundingClientRect();
      return Math.max(box.right, box.left + element.scrollWidth) > window.innerWidth + 0.5 && !scrollsInside(element);
    });
    return past
      .filter((element) => !past.some((other) => other !== element && element.contains(other)))
      .slice(0, 5)
      .map((element) => `${element.tagName.toLowerCase()}.${element.className}: ${element.textContent?.slice(0, 40)}`)
      .join('; ');
  });
}

/** Presses Tab until the focused element's name (aria-label, label or text) is `name` (at most `limit` presses). */
export async function tabTo(page: Page, name: string, limit = 80): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLInputElement | null;
      const label = element?.labels?.[0]?.textContent;
      return element?.getAttribute('aria-label') ?? label?.trim() ?? element?.textContent?.trim() ?? '';
    });
    if (focused === name) return;
  }
  throw new Error(`Tab never reached "${name}"`);
}

/**
 * The operator invites `email` into the brand with `role` (`POST /admin/portal/invites`, as
 * `pts portal invite`), and `page` opens the link, sets `password` and lands on the dashboard, signed in.
 */
export async function signInByInvite(
  platform: TestPlatform,
  page: Page,
  invite: { brandId: string; email: string; role: 'owner' | 'admin' | 'viewer' },
  password: string,
): Promise<void> {
  const answer = await platform.post('/admin/portal/invites', invite, {
    authorization: `Bearer ${platform.deps.adminToken}`,
  });
  if (answer.status !== 201) throw new Error(`invite refused: ${answer.status} ${JSON.stringify(answer.body)}`);
  await page.goto(answer.body.inviteUrl);
  await page.getByLabel('New password (at least 10 characters)').fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
}

/**
 * `page` opens the portal and signs in through the form, as a returning person does: from the portal's
 * address (which sends a signed-out visitor to the sign-in page), never by opening a page after the fact.
 * It waits for the page the portal lands on (`lands`: the dashboard's heading by default).
 */
export async function signIn(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
  lands = 'Dashboard',
): Promise<void> {
  await page.goto(`${baseUrl}/portal/`);
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: lands, exact: true }).waitFor({ timeout: 10_000 });
}

/** Signs out with the frame's button and waits for the sign-in form. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
}

/**
 * Goes to one of the brand's pages by its link in the navigation (`Program`, `Team`, `Audit log`, …) and
 * waits for its heading (`heading`, the link's name unless told).
 */
export async function goTo(page: Page, link: string, heading = link): Promise<void> {
  await page.getByRole('navigation', { name: 'Brand pages' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
}

/**
 * What every page must hold, checked where a journey stands: no serious or critical axe-core finding, nothing
 * reaching sideways at 375 px (the viewport is put back afterwards), and no console error so far.
 */
export async function expectPageSound(page: Page, problems: string[]): Promise<void> {
  const where = page.url();
  const violations = await axeViolations(page);
  if (violations.length > 0) throw new Error(`axe on ${where}: ${violations.join('; ')}`);
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 375, height: 800 });
  try {
    const overflow = await sidewaysOverflow(page);
    if (overflow > 0)
      throw new Error(`${where} scrolls ${overflow}px sideways at 375 px: ${await elementsPastTheEdge(page)}`);
  } finally {
    if (viewport) await page.setViewportSize(viewport);
  }
  const errors = problems.filter((problem) => problem.startsWith('console error') || problem.startsWith('page error'));
  if (errors.length > 0) throw new Error(`console errors up to ${where}: ${errors.join('; ')}`);
}

/** Whether a hostile string ran on the page (the tests' payloads set `window.__pwned`). */
export const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned);

/**
 * One Chromium for a test file. Its pages record Content-Security-Policy violations, console errors, uncaught
 * page errors and every dialog in `problems` (a dialog is dismissed: an injected `alert` would open one),
 * except the confirmations `confirms` matches, which are accepted (the portal asks before ending a drop or
 * unlinking a group), and the console errors `expectedErrors` matches (a refusal a journey provokes on
 * purpose, which Chromium logs as a failed resource). `clipboard` grants each page the clipboard on that origin
 * (the portal's Copy buttons).
 */
export async function startChromium(
  options: { confirms?: RegExp; expectedErrors?: RegExp; clipboard?: () => string } = {},
) {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  return {
    problems,
    async newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      if (options.clipboard) {
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.clipboard() });
      }
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) problems.push(message.text());
        else if (message.type() === 'error') {
          const error = `console error on ${page.url()}: ${message.text()} (${message.location().url})`;
          if (!options.expectedErrors?.test(error)) problems.push(error);
        }
      });
      page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
      page.on('dialog', (dialog) => {
        if (dialog.type() === 'confirm' && options.confirms?.test(dialog.message())) return void dialog.accept();
        problems.push(`dialog opened: ${dialog.message()}`);
        void dialog.dismiss();
      });
      return page;
    },
    async close(): Promise<void> {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
    },
  };
}
