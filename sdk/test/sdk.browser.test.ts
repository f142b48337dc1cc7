import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import { buildSdk, SDK_VERSION } from '../build.ts';

// The SDK as a brand's visitors get it: Debian's Chromium loads pages from the brand's domain
// (shop.example.com, mapped to a local page server) that include `{core-api}/sdk.js`, against a real
// core-api on its embedded defaults (PGlite + anvil). What counts is what core-api received and recorded.

const BRAND_DOMAIN = 'shop.example.com';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  `--host-resolver-rules=MAP ${BRAND_DOMAIN} 127.0.0.1`,
];

let platform: TestPlatform;
let brandId: string;
let browser: Browser;
let pages: Server;
let site: string;

/** The brand's pages; `{{sdk}}` is the script tag (with the command queue set up before it). */
const PAGES: Record<string, string> = {
  '/thank-you': '<h1>Thank you for your order</h1>',
  '/survey': '<h1>Survey</h1>',
  '/signup': `
    <form id="signup">
      <input type="email" name="email" id="email">
      <button type="submit">Subscribe</button>
    </form>
    <p class="form-error" hidden>That did not work.</p>
    <div class="signup-success" hidden>You are subscribed!</div>
    <script>
      // An AJAX form: the "server" refuses addresses containing "fail"; success un-hides the message.
      document.getElementById('signup').addEventListener('submit', (event) => {
        event.preventDefault();
        const ok = !document.getElementById('email').value.includes('fail');
        document.querySelector('.signup-success').hidden = true;
        setTimeout(() => { document.querySelector(ok ? '.signup-success' : '.form-error').hidden = false; }, 300);
      });
    </script>`,
  '/classic': `
    <form id="classic" action="/classic-done" method="get">
      <input type="text" name="subscriber_email" id="subscriber">
      <button type="submit" formaction="/classic-done">Subscribe</button>
      <button type="submit" id="broken" formaction="/classic-failed">Subscribe (refused)</button>
    </form>`,
  '/classic-done': '<div class="classic-success">Welcome aboard!</div>',
  '/classic-failed': '<p class="form-error">We could not subscribe you.</p><div class="classic-success" hidden>x</div>',
  '/app': `
    <nav><a id="done" href="/app/checkout/done">done</a> <a id="other" href="/app/other">other</a></nav>
    <script>
      // A single-page app: links change the URL with history.pushState, never load a page.
      document.addEventListener('click', (event) => {
        if (event.target.tagName !== 'A') return;
        event.preventDefault();
        history.pushState({}, '', event.target.getAttribute('href'));
      });
    </script>`,
  '/welcome': `
    <h1>Welcome</h1>
    <script>setTimeout(() => { document.body.insertAdjacentHTML('beforeend', '<div id="welcome-banner">Hi!</div>'); }, 400);</script>`,
};

function pageHtml(path: string, query: URLSearchParams): string {
  const identify = query.get('email') ? `pts.push(['identify', ${JSON.stringify(query.get('email'))}]);` : '';
  return `<!doctype html><html><head><meta charset="utf-8">
    <script>window.pts = window.pts || []; ${identify}</script>
    <script src="${platform.url}/sdk.js" data-brand-id="${query.get('brand') ?? brandId}" data-form-timeout-ms="2000"
      data-retry-base-ms="300" async></script>
    </head><body>${PAGES[path.startsWith('/app') ? '/app' : path] ?? '<h1>Page</h1>'}</body></html>`;
}

beforeAll(async () => {
  // No duplicate window either: core-api would otherwise answer a second identical event within 60 s
  // with 409, hiding a double send by the SDK.
  platform = await startTestPlatform({ PTS_DUPLICATE_WINDOW_SECONDS: '0' });
  const brand = await platform.createBrand({
    domain: BRAND_DOMAIN,
    rules: [
      // Unlimited claims and no cooldown: whatever the SDK sends twice, core-api would accept twice.
      ...(
        [
          ['thank_you_visit', 'url_pattern', { urlPatterns: ['/thank-you'] }],
          ['checkout_done', 'url_pattern', { urlPatterns: ['/app/checkout/*'] }],
          ['newsletter_subscribe', 'form_auto', { urlPatterns: ['/signup'], successSelectors: ['.signup-success'] }],
          ['classic_subscribe', 'form_auto', { urlPatterns: ['/classic'], successSelectors: ['.classic-success'] }],
          ['account_creation', 'sdk_auto', { urlPatterns: ['/welcome'], successSelectors: ['#welcome-banner'] }],
          ['complete_survey', 'manual', {}],
          ['rate_experience', 'manual', {}],
        ] as const
      ).map(([eventType, detectionMethod, detectionConfig]) => ({
        eventType,
        rewardAmount: 10,
        cooldownHours: 0,
        maxClaims: -1,
        detectionMethod,
        detectionConfig: { ...detectionConfig },
      })),
      // A shop's rule that pays by the order's value (issue 35 §1): 3 pts per $1, rounded down.
      { eventType: 'order_placed', rate: { pts: 3, per: '1.00', currency: 'USD' }, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  brandId = brand.brandId;
  pages = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(pageHtml(url.pathname, url.searchParams));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  site = `http://${BRAND_DOMAIN}:${(pages.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await platform?.stop();
});

/** A visitor: a fresh browser context (its own sessionStorage and localStorage) recording event POSTs. */
async function visitor(): Promise<{
  page: Page;
  posts: () => number;
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}> {
  const context: BrowserContext = await browser.newContext();
  const page = await context.newPage();
  let posts = 0;
  const bodies: Record<string, unknown>[] = [];
  const errors: string[] = [];
  page.on('request', (request) => {
    if (request.method() !== 'POST' || !request.url().endsWith('/pts-api/manual-event')) return;
    posts += 1;
    bodies.push(request.postDataJSON());
  });
  // Nothing the SDK does may surface as an error in the host page.
  page.on('pageerror', (error) => errors.push(error.message));
  return {
    page,
    posts: () => posts,
    bodies,
    async close() {
      await context.close();
      expect(errors).toEqual([]);
    },
  };
}

/** Events core-api recorded for a user, accepted or rejected. */
async function eventsOf(email: string) {
  return platform.deps.db
    .selectFrom('events')
    .select(['event_type', 'status', 'reason', 'domain', 'metadata'])
    .where('brand_id', '=', brandId)
    .where('user_email', '=', email)
    .execute();
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The tab's outbox (sessionStorage) as JSON, `[]` once every event has had its final answer. */
const outbox = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), `pts:${brandId}:q`);
const ready = (page: Page) => page.evaluate(() => (window.pts as import('../sdk.d.ts').PtsApi).ready());
const settle = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sdk.js in Chromium against core-api', () => {
  it('rewards a URL-pattern visit once: a reload in the same session sends nothing more', async () => {
    const email = 'visit@example.com';
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/thank-you?email=${email}`);
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([
      {
        event_type: 'thank_you_visit',
        status: 'accepted',
        domain: BRAND_DOMAIN,
        metadata: { detection: 'url_pattern' },
      },
    ]);
    // Reloading while the answer is still on its way would send it again (core-api's duplicate window
    // answers that with 409 in production): wait for the answer.
    expect(
      await waitFor(
        () => outbox(page),
        (value) => value === '[]',
      ),
    ).toBe('[]');
    await page.reload();
    await ready(page);
    await settle();
    expect(posts()).toBe(1);
    expect(await eventsOf(email)).toHaveLength(1);
    await close();
  });

  it('rewards a form once its success selector appears, and never a form that failed', async () => {
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/signup`);
    await ready(page);

    await page.fill('#email', 'fail@example.com');
    await page.click('button[type=submit]');
    await page.waitForSelector('.form-error', { state: 'visible' });
    await settle(2500); // past the 2 s form timeout
    expect(posts()).toBe(0);
    expect(await eventsOf('fail@example.com')).toHaveLength(0);

    await page.fill('#email', 'joiner@example.com');
    await page.click('button[type=submit]');
    const events = await waitFor(
      () => eventsOf('joiner@example.com'),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([
      { event_type: 'newsletter_subscribe', status: 'accepted', metadata: { detection: 'form_auto' } },
    ]);
    // The form's email identifies the visitor.
    expect(await page.evaluate(() => (window.pts as import('../sdk.d.ts').PtsApi).user())).toBe('joiner@example.com');

    // Submitted again in the same session: success shows again, nothing more is sent.
    await page.click('button[type=submit]');
    await page.waitForSelector('.signup-success', { state: 'visible' });
    await settle();
    expect(posts()).toBe(1);
    expect(await eventsOf('joiner@example.com')).toHaveLength(1);
    await close();
  });

  it('follows a classic form to the page it navigates to: success there rewards, an error page does not', async () => {
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/classic`);
    await ready(page);
    await page.fill('#subscriber', 'refused@example.com');
    await Promise.all([page.waitForURL(/classic-failed/), page.click('#broken')]);
    await ready(page);
    await settle(2500); // past the 2 s form timeout
    expect(posts()).toBe(0);

    await page.goto(`${site}/classic`);
    await ready(page);
    await page.fill('#subscriber', 'classic@example.com');
    await Promise.all([page.waitForURL(/classic-done/), page.click('button[formaction="/classic-done"]')]);
    const events = await waitFor(
      () => eventsOf('classic@example.com'),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([{ event_type: 'classic_subscribe', status: 'accepted' }]);
    expect(await eventsOf('refused@example.com')).toHaveLength(0);
    expect(posts()).toBe(1);
    await close();
  });

  it('sends a manual pts.track with domain and sourceUrl, and tells listeners', async () => {
    const email = 'surveyed@example.com';
    const { page, posts, bodies, close } = await visitor();
    await page.goto(`${site}/survey#top`);
    const result = await page.evaluate(async (userEmail) => {
      const pts = window.pts as import('../sdk.d.ts').PtsApi;
      const rewards: number[] = [];
      pts.on('reward', (reward) => rewards.push(reward.rewardAmount));
      const first = await pts.track('complete_survey', { email: userEmail, metadata: { answers: 3 } });
      const second = await pts.track('complete_survey', { email: userEmail });
      return { first, second: second.status, rewards };
    }, email);
    expect(result.first).toMatchObject({ status: 'sent', response: { success: true, rewardAmount: 10 } });
    expect(result.second).toBe('duplicate');
    expect(result.rewards).toEqual([10]);
    expect(posts()).toBe(1);
    expect(bodies[0]).toMatchObject({
      brandId,
      eventType: 'complete_survey',
      userEmail: email,
      domain: BRAND_DOMAIN,
      sourceUrl: `${site}/survey`, // without its fragment
    });
    expect(await eventsOf(email)).toMatchObject([
      {
        event_type: 'complete_survey',
        status: 'accepted',
        domain: BRAND_DOMAIN,
        metadata: { answers: 3, detection: 'manual', sdkVersion: SDK_VERSION },
      },
    ]);
    await close();
  });

  it("sends pts.track's value: a rate rule pays by it, and core-api keeps it; a number amount is refused unsent", async () => {
    const email = 'shopper@example.com';
    const { page, posts, bodies, close } = await visitor();
    await page.goto(`${site}/thank-you-page`);
    const result = await page.evaluate(async (userEmail) => {
      const pts = window.pts as import('../sdk.d.ts').PtsApi;
      const order = await pts.track('order_placed', {
        email: userEmail,
        id: 'order-1001',
        value: { amount: '19.99', currency: 'USD' },
      });
      const float = await pts.track('order_placed', {
        email: userEmail,
        id: 'order-1002',
        value: { amount: 19.99 as unknown as string, currency: 'USD' },
      });
      return { order, float };
    }, email);
    expect(result.order).toMatchObject({
      status: 'sent',
      response: { rewardAmount: 59, value: { amount: '19.99', currency: 'USD' } },
    });
    expect(result.float).toMatchObject({
      status: 'rejected',
      error: { message: 'value.amount must be a decimal string such as "12.50" (not a number)' },
    });
    expect(posts()).toBe(1);
    expect(bodies[0]).toMatchObject({ eventType: 'order_placed', value: { amount: '19.99', currency: 'USD' } });
    const stored = await platform.deps.db
      .selectFrom('events')
      .select(['reward_amount', 'value_minor', 'value_currency', 'status'])
      .where('brand_id', '=', brandId)
      .where('user_email', '=', email)
      .execute();
    expect(stored).toEqual([{ reward_amount: 59n, value_minor: 1999n, value_currency: 'USD', status: 'accepted' }]);
    await close();
  });

  it('counts an SPA navigation to a matching URL (pushState and popstate), once per page', async () => {
    const email = 'spa@example.com';
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/app?email=${email}`);
    await ready(page);
    expect(posts()).toBe(0);

    await page.click('#done');
    await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    await page.click('#other');
    await page.goBack(); // popstate back to /app/checkout/done: already counted
    expect(page.url()).toBe(`${site}/app/checkout/done`);
    await settle();
    expect(posts()).toBe(1);

    await page.evaluate(() => history.replaceState({}, '', '/app/checkout/second'));
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 1,
    );
    expect(events.map((row) => [row.event_type, row.status])).toEqual([
      ['checkout_done', 'accepted'],
      ['checkout_done', 'accepted'],
    ]);
    expect(posts()).toBe(2);
    await close();
  });

  it('detects sdk_auto when its selector shows on a matching page', async () => {
    const email = 'welcomed@example.com';
    const { page, close } = await visitor();
    await page.goto(`${site}/welcome?email=${email}`);
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([{ event_type: 'account_creation', metadata: { detection: 'sdk_auto' } }]);
    await close();
  });

  it('waits out Retry-After on a 429 rate limit and backs off on 5xx, but takes a cooldown as final', async () => {
    const email = 'throttled@example.com';
    const { page, posts, close } = await visitor();
    const answers: { status: number; headers: Record<string, string>; body: Record<string, unknown> }[] = [
      { status: 429, headers: { 'Retry-After': '2' }, body: { code: 'RATE_LIMIT_EXCEEDED', retryAfter: 2 } },
      { status: 503, headers: {}, body: { code: 'SERVICE_UNAVAILABLE' } },
    ];
    const attempts: number[] = [];
    await page.route('**/pts-api/manual-event', async (route) => {
      attempts.push(Date.now());
      const answer = answers.shift();
      if (!answer) return route.continue();
      await route.fulfill({
        status: answer.status,
        headers: {
          ...answer.headers,
          'Access-Control-Allow-Origin': site,
          'Access-Control-Expose-Headers': 'Retry-After',
        },
        contentType: 'application/json',
        body: JSON.stringify({ success: false, error: 'busy', ...answer.body }),
      });
    });
    await page.goto(`${site}/survey`);
    const first = await page.evaluate(
      (userEmail) => (window.pts as import('../sdk.d.ts').PtsApi).track('rate_experience', { email: userEmail }),
      email,
    );
    expect(first.status).toBe('queued');
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([{ event_type: 'rate_experience', status: 'accepted' }]);
    expect(attempts).toHaveLength(3);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(2000); // Retry-After: 2
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(200); // back-off after the 503

    // A cooldown is the rule's answer: not retried.
    await page.unroute('**/pts-api/manual-event');
    await page.route('**/pts-api/manual-event', (route) =>
      route.fulfill({
        status: 429,
        headers: { 'Retry-After': '1', 'Access-Control-Allow-Origin': site },
        contentType: 'application/json',
        body: JSON.stringify({ success: false, error: 'Cooldown active', code: 'COOLDOWN_ACTIVE', retryAfter: 1 }),
      }),
    );
    const before = posts();
    const cooled = await page.evaluate(
      (userEmail) => (window.pts as import('../sdk.d.ts').PtsApi).track('complete_survey', { email: userEmail }),
      email,
    );
    expect(cooled).toMatchObject({ status: 'rejected', error: { status: 429, code: 'COOLDOWN_ACTIVE' } });
    await settle(1500);
    expect(posts()).toBe(before + 1);
    expect(await outbox(page)).toBe('[]');
    await close();
  });

  it('holds events while the browser is offline and sends them once when it is back online', async () => {
    const email = 'offline@example.com';
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/survey`);
    await ready(page);
    await page.context().setOffline(true);
    const result = await page.evaluate(
      (userEmail) => (window.pts as import('../sdk.d.ts').PtsApi).track('rate_experience', { email: userEmail }),
      email,
    );
    expect(result.status).toBe('queued');
    await settle(1500);
    expect(posts()).toBe(0); // offline: not even tried
    await page.context().setOffline(false);
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([{ event_type: 'rate_experience', status: 'accepted' }]);
    await settle();
    expect(posts()).toBe(1);
    await close();
  });

  it('never throws into the page, whatever it is given', async () => {
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/survey?brand=not-a-brand`);
    const results = await page.evaluate(async () => {
      const pts = window.pts as import('../sdk.d.ts').PtsApi;
      const anyPts = pts as unknown as Record<string, (...args: unknown[]) => unknown>;
      anyPts.identify!(42);
      anyPts.identify!(undefined);
      anyPts.push!(['no_such_command']);
      anyPts.push!(null);
      anyPts.on!('nothing', null);
      const track = await pts.track('complete_survey', { email: 'a@example.com' });
      return { track: track.status, ready: await pts.ready() };
    });
    expect(results).toEqual({ track: 'rejected', ready: [] });

    // With a valid brand, bad arguments are refused with a reason, not an exception.
    await page.goto(`${site}/survey`);
    const refused = await page.evaluate(async () => {
      const pts = window.pts as import('../sdk.d.ts').PtsApi;
      const anyTrack = pts.track as (...args: unknown[]) => Promise<{ status: string }>;
      pts.on('reward', () => {
        throw new Error('a listener that throws');
      });
      return [
        (await anyTrack('bad type!', { email: 'a@example.com' })).status,
        (await anyTrack('complete_survey', { email: 'not-an-email' })).status,
        (await anyTrack(undefined)).status,
        (await anyTrack('complete_survey', { email: 'listener@example.com' })).status,
      ];
    });
    expect(refused).toEqual(['rejected', 'rejected', 'rejected', 'sent']);
    expect(posts()).toBe(1);
    await close();
  });

  it('keeps an event while core-api is down, across a reload, and delivers it exactly once when it is back', async () => {
    const email = 'patient@example.com';
    const { page, posts, close } = await visitor();
    await page.goto(`${site}/survey`);
    await ready(page);

    const server = platform.server!;
    const { port, address } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    try {
      const result = await page.evaluate(
        (userEmail) => (window.pts as import('../sdk.d.ts').PtsApi).track('rate_experience', { email: userEmail }),
        email,
      );
      expect(result.status).toBe('queued');
      // A reload while core-api is still down: the script and configuration come from the browser's cache,
      // the event from the tab's sessionStorage.
      await page.goto(`${site}/survey`);
      await ready(page);
      await settle(1000);
      expect(await eventsOf(email)).toHaveLength(0);
      expect(posts()).toBeGreaterThanOrEqual(2); // tried before and after the reload
    } finally {
      await new Promise<void>((resolve) => server.listen(port, address, resolve));
    }
    const events = await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    expect(events).toMatchObject([{ event_type: 'rate_experience', status: 'accepted' }]);
    const attempts = posts();
    await settle(3000);
    expect(await eventsOf(email)).toHaveLength(1);
    expect(posts()).toBe(attempts); // nothing sent after the delivery
    // The tab's outbox is empty again.
    expect(await outbox(page)).toBe('[]');
    await close();
  });

  it('never pays twice when an answer is lost to a reload: the resend carries the same externalId', async () => {
    const email = 'reloader@example.com';
    const { page, bodies, close } = await visitor();
    await page.goto(`${site}/survey`);
    await ready(page);
    // The first send reaches core-api, which pays it, but its answer never reaches the page.
    let sends = 0;
    await page.route('**/pts-api/manual-event', async (route) => {
      sends += 1;
      if (sends === 1) {
        await route.fetch();
        return;
      }
      await route.continue();
    });
    void page
      .evaluate(
        (userEmail) => (window.pts as import('../sdk.d.ts').PtsApi).track('rate_experience', { email: userEmail }),
        email,
      )
      .catch(() => undefined);
    await waitFor(
      () => eventsOf(email),
      (rows) => rows.length > 0,
    );
    // The visitor reloads while the answer is still out: the tab's outbox sends the event again.
    await page.goto(`${site}/survey`);
    await ready(page);
    await waitFor(
      () => outbox(page),
      (value) => value === '[]',
    );
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    expect(bodies[0]?.externalId).toMatch(/^sdk_[0-9a-f]{32}$/);
    expect(bodies.map((body) => body.externalId)).toEqual(bodies.map(() => bodies[0]?.externalId));
    const rows = await eventsOf(email);
    expect(rows.filter((row) => row.status === 'accepted')).toHaveLength(1);
    await close();
  });
});

/** A GET or HEAD with exactly these headers (fetch would add Accept-Encoding and decompress). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${platform.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /sdk.js', () => {
  it('serves the built SDK as JavaScript with a strong ETag and a 5-minute Cache-Control', async () => {
    const plain = await rawRequest('GET', '/sdk.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=300');
    expect(plain.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toBe(await buildSdk());

    const gzipped = await rawRequest('GET', '/sdk.js', { 'accept-encoding': 'br, gzip;q=0.8' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/Accept-Encoding/i);
    expect(gzipped.headers.etag).not.toBe(plain.headers.etag); // another representation, another strong tag
    expect(gzipped.body.length).toBeLessThanOrEqual(8 * 1024);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);

    const refused = await rawRequest('GET', '/sdk.js', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();

    const head = await rawRequest('HEAD', '/sdk.js');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(plain.body.length));
  });

  it('answers 304 without a body when If-None-Match carries its ETag', async () => {
    const { headers } = await rawRequest('GET', '/sdk.js');
    const etag = headers.etag as string;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const revalidated = await rawRequest('GET', '/sdk.js', { 'if-none-match': ifNoneMatch });
      expect(revalidated.status, ifNoneMatch).toBe(304);
      expect(revalidated.body.length).toBe(0);
      expect(revalidated.headers.etag).toBe(etag);
      expect(revalidated.headers['cache-control']).toBe('public, max-age=300');
    }
    const changed = await rawRequest('GET', '/sdk.js', { 'if-none-match': '"an-older-build"' });
    expect(changed.status).toBe(200);
    expect(changed.body.length).toBeGreaterThan(0);
  });
});
