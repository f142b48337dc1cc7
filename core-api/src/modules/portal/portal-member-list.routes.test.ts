import { signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { parseCsv } from '../../../test/csv.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { createPerkViaAdmin } from '../../agent/tools/tool-test-support.ts';

// The Members list (issue 33 §12) against the real platform (PGlite or PostgreSQL, anvil, the contracts):
// members made by signed events, a link and a redemption through the real routes; sorted by the member
// ledger's figures, paged by cursor without gaps or repeats, searched anywhere, exported as CSV; roles
// checked before the query is read; another brand's team refused.

const DAY = 86_400_000;
// Noon UTC today: near the chain's real time (permits carry a deadline from the clock).
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
const SHOPPER = 'a.shopper@customer.example';
const UNDERSCORE = '100_real@customer.example';
const LOOKALIKE = '1000real@customer.example';
const MINUS = '-minus@customer.example';
const DISCORD = 'discord_3401@pts.example';
const TELEGRAM = 'telegram_3402@pts.example';
const QUIET = 'quiet@customer.example';
const OTHER_BRAND = 'only-b@customer.example';

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let ownerA: PortalBrowser;
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
let seq = 0;

async function signed(brand: { securityKey: string }, method: string, path: string, body: unknown) {
  const raw = JSON.stringify(body);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 250);
  const headers = signRequest({ securityKey: brand.securityKey, method, pathWithQuery: path, body: raw, timestamp });
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: raw,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function earn(brand: { brandId: string; securityKey: string }, identityKey: string): Promise<TestResponse> {
  platform.clock.advance(61_000); // past the duplicate window; each member joins at its own time
  const res = await signed(brand, 'POST', '/pts-api/manual-event', {
    brandId: brand.brandId,
    eventType: 'earn',
    userEmail: identityKey,
    metadata: { n: seq },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

const list = (who: PortalBrowser, query: string, brandId = brandA.brandId) =>
  who.request('GET', `/brands/${brandId}/member-list?${query}`);

/** Every page of a listing, following `nextCursor`. */
async function allPages(query: string, limit: number) {
  const keys: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await list(ownerA, `${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.members.length).toBeLessThanOrEqual(limit);
    keys.push(...res.body.members.map((m: { accountKey: string }) => m.accountKey));
    cursor = res.body.nextCursor;
    if (!cursor) return keys;
  }
  throw new Error('more than 50 pages');
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_TRUST_PROXY: 'true',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  platform.clock.set(new Date(T0.getTime() - DAY));
  const rules = [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }];
  brandA = await platform.createBrand({ name: 'List A', domain: 'a.example.com', rules });
  brandB = await platform.createBrand({ name: 'List B', domain: 'b.example.com', rules });
  const perk = await createPerkViaAdmin(platform, brandA.brandId, { name: 'Mug', cost: 50 });
  // Earned: shopper 300, the linked Discord+Telegram member 500 (then spends 50), the lookalike 200, the rest 100.
  for (const key of [SHOPPER, UNDERSCORE, LOOKALIKE, MINUS, DISCORD, TELEGRAM, QUIET]) await earn(brandA, key);
  for (const key of [SHOPPER, SHOPPER, LOOKALIKE, DISCORD, TELEGRAM, DISCORD]) await earn(brandA, key);
  await earn(brandB, OTHER_BRAND);
  const code = await signed(brandA, 'POST', '/services/link/code', {
    brandId: brandA.brandId,
    userIdentifier: DISCORD,
  });
  expect(code.status, JSON.stringify(code.body)).toBe(200);
  const linked = await signed(brandA, 'POST', '/services/link/confirm', {
    brandId: brandA.brandId,
    userIdentifier: TELEGRAM,
    code: code.body.code,
  });
  expect(linked.status, JSON.stringify(linked.body)).toBe(200);
  await waitForMintsSettled(platform);
  platform.clock.set(T0);
  const redeemed = await signed(brandA, 'POST', '/services/perks/redeem', {
    brandId: brandA.brandId,
    perkId: perk.uuid,
    userIdentifier: TELEGRAM,
  });
  expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
  platform.clock.advance(60_000);
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  adminA = await portalMember(platform, brandA.brandId, 'admin@a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
  for (const browser of [ownerA, adminA, viewerA, ownerB]) await browser.session();
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the member list', () => {
  it('lists accounts with their identities and the member ledger’s figures, sorted by each of them', async () => {
    const byEarned = await list(viewerA, 'sort=earned&order=desc&limit=100');
    expect(byEarned.status, JSON.stringify(byEarned.body)).toBe(200);
    const rows = byEarned.body.members as {
      accountKey: string;
      identityKeys: string[];
      earned: number;
      spent: number;
      balance: number;
      joinedAt: string;
      lastActivityAt: string;
      walletAddress: string | null;
    }[];
    // One row per account: the Telegram identity is Discord's account's, with its earnings and its spending.
    expect(rows.map((r) => r.accountKey)).toEqual([DISCORD, SHOPPER, LOOKALIKE, QUIET, UNDERSCORE, MINUS]);
    expect(rows[0]).toMatchObject({ identityKeys: [DISCORD, TELEGRAM], earned: 500, spent: 50, balance: 450 });
    expect(rows[0]!.walletAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(rows[1]).toMatchObject({ identityKeys: [SHOPPER], earned: 300, spent: 0, balance: 300 });
    // The same figures as the member's page (one ledger).
    const page = await viewerA.request(
      'GET',
      `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(TELEGRAM)}`,
    );
    expect(page.body.ledger).toMatchObject({ earned: 500 });
    expect(page.body.ledger.redeemed + page.body.ledger.redeeming).toBe(50);

    const byEarnedAsc = await list(viewerA, 'sort=earned&order=asc&limit=100');
    // Ties (100 each) are broken by the account key (byte order on both databases), in the asked direction.
    expect(byEarnedAsc.body.members.map((m: { accountKey: string }) => m.accountKey)).toEqual([
      MINUS,
      UNDERSCORE,
      QUIET,
      LOOKALIKE,
      SHOPPER,
      DISCORD,
    ]);
    const byJoined = await list(viewerA, 'sort=joined&order=asc&limit=100');
    expect(byJoined.body.members.map((m: { accountKey: string }) => m.accountKey)).toEqual([
      SHOPPER,
      UNDERSCORE,
      LOOKALIKE,
      MINUS,
      DISCORD,
      QUIET,
    ]);
    // Last activity: the redemption (Discord's account) is the latest, then the second round of events.
    const byActivity = await list(viewerA, 'sort=lastActivity&order=desc&limit=100');
    expect(byActivity.body.members.map((m: { accountKey: string }) => m.accountKey)).toEqual([
      DISCORD,
      LOOKALIKE,
      SHOPPER,
      QUIET,
      MINUS,
      UNDERSCORE,
    ]);
    const byBalance = await list(viewerA, 'sort=balance&order=desc&limit=100');
    expect(byBalance.body.members.map((m: { balance: number }) => m.balance)).toEqual([450, 300, 200, 100, 100, 100]);
    // Another brand's members are never listed.
    expect(rows.map((r) => r.accountKey)).not.toContain(OTHER_BRAND);
  });

  it('pages through every sort and order without gaps or repeats', async () => {
    for (const sort of ['balance', 'earned', 'lastActivity', 'joined']) {
      for (const order of ['asc', 'desc']) {
        const whole = (await list(ownerA, `sort=${sort}&order=${order}&limit=100`)).body.members.map(
          (m: { accountKey: string }) => m.accountKey,
        );
        expect(whole).toHaveLength(6);
        for (const limit of [1, 2, 4]) {
          expect(await allPages(`sort=${sort}&order=${order}`, limit), `${sort} ${order} by ${limit}`).toEqual(whole);
        }
      }
    }
  });

  it('finds the text anywhere in an e-mail, identity or wallet, with % and _ taken literally', async () => {
    const keys = async (q: string) => {
      const res = await list(viewerA, `q=${encodeURIComponent(q)}&sort=joined&order=asc`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.members.map((m: { accountKey: string }) => m.accountKey);
    };
    expect(await keys('shopper')).toEqual([SHOPPER]);
    expect(await keys('SHOPPER')).toEqual([SHOPPER]);
    expect(await keys('customer.example')).toEqual([SHOPPER, UNDERSCORE, LOOKALIKE, MINUS, QUIET]);
    // Unescaped, `_` would match any one character (1000real) and `%` everything.
    expect(await keys('0_r')).toEqual([UNDERSCORE]);
    expect(await keys('_real')).toEqual([UNDERSCORE]);
    expect(await keys('%%')).toEqual([]);
    expect(await keys('r%l')).toEqual([]);
    // A linked identity finds its account; so does the platform form.
    expect(await keys('telegram_3402')).toEqual([DISCORD]);
    expect(await keys('telegram:3402')).toEqual([DISCORD]);
    const wallet = (await list(viewerA, 'sort=earned&order=desc&limit=1')).body.members[0].walletAddress as string;
    expect(await keys(wallet.slice(10, 22))).toEqual([DISCORD]);
    expect(await keys(wallet.toUpperCase().replace('0X', '0x'))).toEqual([DISCORD]);
    expect(await keys('only-b')).toEqual([]);
    // The search endpoint matches anywhere too.
    const search = await viewerA.request('GET', `/brands/${brandA.brandId}/loyalty-members?q=shopper`);
    expect(search.body.members.map((m: { userKey: string }) => m.userKey)).toEqual([SHOPPER]);
    const literal = await viewerA.request(
      'GET',
      `/brands/${brandA.brandId}/loyalty-members?q=${encodeURIComponent('0_r')}`,
    );
    expect(literal.body.members.map((m: { userKey: string }) => m.userKey)).toEqual([UNDERSCORE]);
  });

  it('pages a search, and a cursor of another sort or search is 400 with what to do', async () => {
    expect(await allPages('q=customer&sort=earned&order=desc', 2)).toEqual([
      SHOPPER,
      LOOKALIKE,
      QUIET,
      UNDERSCORE,
      MINUS,
    ]);
    const first = await list(ownerA, 'sort=earned&order=desc&limit=2');
    const cursor = encodeURIComponent(first.body.nextCursor);
    const otherSort = await list(ownerA, `sort=joined&order=desc&limit=2&cursor=${cursor}`);
    expect(otherSort.status).toBe(400);
    expect(otherSort.body.error).toMatch(/start again from the first page/);
    const damaged = await list(ownerA, 'sort=earned&order=desc&cursor=not-a-cursor');
    expect(damaged.status).toBe(400);
    for (const bad of ['sort=name', 'order=up', 'limit=0', 'limit=101', 'q=a']) {
      const res = await list(ownerA, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toBeTruthy();
    }
  });
});

describe('CSV exports', () => {
  it('exports the member list with its sort and search, quoted and with formulas defused', async () => {
    const res = await fetch(
      `${platform.url}/portal/api/brands/${brandA.brandId}/member-list.csv?sort=earned&order=desc`,
      {
        headers: { cookie: cookieOf(adminA), 'x-forwarded-for': adminA.ip },
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="members-0x[0-9a-f]{8}-earned-desc\.csv"$/,
    );
    const rows = parseCsv(await res.text());
    expect(rows[0]).toEqual([
      'account',
      'identities',
      'wallet',
      'balance',
      'earned',
      'spent',
      'joined_at',
      'last_activity_at',
    ]);
    expect(rows.slice(1).map((r) => r[0])).toEqual([DISCORD, SHOPPER, LOOKALIKE, QUIET, UNDERSCORE, `'${MINUS}`]);
    expect(rows[1]!.slice(1, 6)).toEqual([`${DISCORD} ${TELEGRAM}`, expect.stringMatching(/^0x/), '450', '500', '50']);
    const searched = await fetch(`${platform.url}/portal/api/brands/${brandA.brandId}/member-list.csv?q=shopper`, {
      headers: { cookie: cookieOf(adminA), 'x-forwarded-for': adminA.ip },
    });
    expect(parseCsv(await searched.text()).map((r) => r[0])).toEqual(['account', SHOPPER]);
  });

  it("exports a period's events, accepted and refused, oldest first", async () => {
    const from = new Date(T0.getTime() - DAY).toISOString();
    const to = new Date(T0.getTime() + DAY).toISOString();
    const res = await fetch(`${platform.url}/portal/api/brands/${brandA.brandId}/events.csv?from=${from}&to=${to}`, {
      headers: { cookie: cookieOf(ownerA), 'x-forwarded-for': ownerA.ip },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(
      new RegExp(`filename="events-0x[0-9a-f]{8}-${from.slice(0, 10)}-to-${to.slice(0, 10)}\\.csv"`),
    );
    const rows = parseCsv(await res.text());
    expect(rows[0]).toEqual([
      'event_id',
      'created_at',
      'event_type',
      'member',
      'status',
      'reason',
      'reward',
      'sent_by',
    ]);
    const events = rows.slice(1);
    const stored = await platform.deps.db
      .selectFrom('events')
      .select(['id', 'user_email'])
      .where('brand_id', '=', brandA.brandId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(events.map((r) => r[0])).toEqual(stored.map((e) => e.id));
    expect(events.filter((r) => r[3] === `'${MINUS}`)).toHaveLength(1);
    expect(events.every((r) => r[1]! >= from && r[1]! < to)).toBe(true);
    // An empty window is a header alone; a window the wrong way round is 400.
    const empty = await fetch(
      `${platform.url}/portal/api/brands/${brandA.brandId}/events.csv?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`,
      { headers: { cookie: cookieOf(ownerA), 'x-forwarded-for': ownerA.ip } },
    );
    expect(await empty.text()).toBe('event_id,created_at,event_type,member,status,reason,reward,sent_by\r\n');
    const backwards = await ownerA.request('GET', `/brands/${brandA.brandId}/events.csv?from=${to}&to=${from}`);
    expect(backwards.status).toBe(400);
    expect(backwards.body.error).toMatch(/from must be before to/);
    const missing = await ownerA.request('GET', `/brands/${brandA.brandId}/events.csv?from=yesterday`);
    expect(missing.status).toBe(400);
  });
});

describe('roles and brand isolation', () => {
  it('a viewer lists but may not export (personal data): 403', async () => {
    expect((await list(viewerA, 'sort=earned')).status).toBe(200);
    for (const path of ['member-list.csv', 'events.csv?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z']) {
      const res = await viewerA.request('GET', `/brands/${brandA.brandId}/${path}`);
      expect(res.status, path).toBe(403);
    }
  });

  it('answers 403 (or 404 for another brand) before reading a malformed request, on every member route', async () => {
    const a = brandA.brandId;
    const member = encodeURIComponent(SHOPPER);
    const malformedForViewer: [string, string, unknown?][] = [
      ['GET', `/brands/${a}/member-list.csv?sort=name`],
      ['GET', `/brands/${a}/events.csv?from=yesterday`],
      ['POST', `/brands/${a}/loyalty-members/${member}/awards`, { amount: -1 }],
      ['POST', `/brands/${a}/loyalty-members/${member}/block`, { reason: '' }],
      ['DELETE', `/brands/${a}/loyalty-members/x/block`],
    ];
    for (const [method, path, body] of malformedForViewer) {
      const res = await viewerA.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const malformedForOutsider: [string, string, unknown?][] = [
      ...malformedForViewer,
      ['GET', `/brands/${a}/member-list?sort=name`],
      ['GET', `/brands/${a}/loyalty-members?q=a`],
      ['GET', `/brands/${a}/loyalty-members/x`],
    ];
    for (const [method, path, body] of malformedForOutsider) {
      const res = await ownerB.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  it("another brand's owner gets 404 for brand A's list and exports", async () => {
    const a = brandA.brandId;
    for (const path of [
      'member-list?sort=earned',
      'member-list.csv',
      'events.csv?from=2026-01-01T00:00:00Z&to=2030-01-01T00:00:00Z',
    ]) {
      const res = await ownerB.request('GET', `/brands/${a}/${path}`);
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain(SHOPPER);
    }
    const own = await list(ownerB, 'sort=earned', brandB.brandId);
    expect(own.body.members.map((m: { accountKey: string }) => m.accountKey)).toEqual([OTHER_BRAND]);
  });
});

function cookieOf(browser: PortalBrowser): string {
  return [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}
