/**
 * Portal first-visit bench (issue 33 §8 and "Done when": the JavaScript of a first visit, measured over the
 * wire, compressed, ≤ 200 KB). See docs/benchmarks.md, "Portal first visit".
 *
 *   npm run bench -- portal-first-visit [--json]
 *
 * Starts the platform as the tests do (the real app over PGlite, anvil), with the portal built as `npm start`
 * builds it (its assets precompressed), creates a brand and a signed-in owner, then opens two pages in a fresh
 * Chromium (empty cache, its own Accept-Encoding): the sign-in page (someone arriving) and the brand's dashboard
 * (a signed-in person's first page). For each it sums, from Chromium's network events, the bytes received for
 * every script (`encodedDataLength`: what crossed the wire, headers included) and the scripts' decoded size.
 */
import { type Browser, chromium } from 'playwright-core';
import { startTestPlatform } from '../test/platform.ts';
import { portalMember } from '../test/portal-browser.ts';
import { loadLine, machineLine } from './bench-support.ts';

const TARGET_FIRST_VISIT_JS_BYTES = 200 * 1024;
const JSON_OUT = process.argv.includes('--json');
const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'];

interface Script {
  url: string;
  encoding: string;
  wireBytes: number;
  decodedBytes: number;
}

/** Opens `url` in a new context (no cache) and returns what each script cost on the wire. */
async function scriptsOfFirstVisit(
  browser: Browser,
  url: string,
  cookies: { name: string; value: string; url: string }[],
): Promise<Script[]> {
  const context = await browser.newContext();
  await context.addCookies(cookies);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const scripts = new Map<string, Script>();
  cdp.on('Network.responseReceived', (event) => {
    if (event.type !== 'Script') return;
    const headers = Object.fromEntries(Object.entries(event.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    scripts.set(event.requestId, {
      url: new URL(event.response.url).pathname,
      encoding: String(headers['content-encoding'] ?? 'identity'),
      wireBytes: 0,
      decodedBytes: 0,
    });
  });
  cdp.on('Network.dataReceived', (event) => {
    const script = scripts.get(event.requestId);
    if (script) script.decodedBytes += event.dataLength;
  });
  cdp.on('Network.loadingFinished', (event) => {
    const script = scripts.get(event.requestId);
    if (script) script.wireBytes = event.encodedDataLength;
  });
  await page.goto(url, { waitUntil: 'networkidle' });
  await context.close();
  return [...scripts.values()];
}

async function main(): Promise<void> {
  const machine = machineLine();
  log(`portal first-visit bench — ${machine}, load ${loadLine()}`);
  const { ensurePortalBuild } = await import('@pts/portal/build');
  await ensurePortalBuild({ log });
  const platform = await startTestPlatform();
  let browser: Browser | undefined;
  try {
    const { brandId } = await platform.createBrand({ name: 'First Visit', domain: 'first-visit.example.com' });
    const owner = await portalMember(platform, brandId, 'owner@first-visit.example.com', 'owner');
    const cookies = [...owner.cookies].map(([name, value]) => ({ name, value, url: platform.url }));
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    const pages = [
      { label: 'sign-in page (not signed in)', url: `${platform.url}/portal/sign-in`, cookies: [] },
      { label: 'dashboard (signed in)', url: `${platform.url}/portal/brands/${brandId}/dashboard`, cookies },
    ];
    const results = [];
    for (const visit of pages) {
      const scripts = await scriptsOfFirstVisit(browser, visit.url, visit.cookies);
      const wire = scripts.reduce((sum, s) => sum + s.wireBytes, 0);
      const decoded = scripts.reduce((sum, s) => sum + s.decodedBytes, 0);
      log(`\n${visit.label}:`);
      for (const s of scripts)
        log(
          `  ${s.url.padEnd(48)} ${s.encoding.padEnd(8)} ${kb(s.wireBytes).padStart(7)} KB wire ${kb(s.decodedBytes).padStart(8)} KB`,
        );
      log(
        `  total ${kb(wire)} KB of JavaScript over the wire (${kb(decoded)} KB decoded) — ${wire <= TARGET_FIRST_VISIT_JS_BYTES ? 'within' : 'OVER'} the ${TARGET_FIRST_VISIT_JS_BYTES / 1024} KB goal`,
      );
      results.push({ page: visit.label, scripts, wireBytes: wire, decodedBytes: decoded });
    }
    if (JSON_OUT)
      process.stdout.write(
        `${JSON.stringify({ machine, goalBytes: TARGET_FIRST_VISIT_JS_BYTES, pages: results }, null, 2)}\n`,
      );
    if (results.some((r) => r.wireBytes > TARGET_FIRST_VISIT_JS_BYTES)) process.exitCode = 1;
  } finally {
    await browser?.close();
    await platform.stop();
  }
}

await main();
