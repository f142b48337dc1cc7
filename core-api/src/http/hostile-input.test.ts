import { gzipSync } from 'node:zlib';
import type { CreatedBrand } from '@pts/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';

// Input classes a red-team run turned into 500s (issue 11 §3), sent to every route the API documents:
// each must be a 4xx that says what to fix, whatever the route, its auth or its body reader.

let platform: TestPlatform;
let brand: CreatedBrand;
const routes: { method: string; path: string }[] = [];

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '1000000',
  });
  brand = await platform.createBrand({
    domain: 'hostile.example',
    rules: [{ eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 }],
  });
  const doc = await platform.get('/openapi.json');
  const paths = doc.body.paths as Record<string, Record<string, unknown>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const method of Object.keys(operations)) {
      if (!WRITE_METHODS.has(method)) continue;
      const concrete = path.replace(/\{([^}]+)\}/g, (_, name: string) => (/brand/i.test(name) ? brand.brandId : '1'));
      routes.push({ method: method.toUpperCase(), path: concrete });
    }
  }
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** Sends raw bytes with the admin token (so admin routes read their bodies too); answers status and body. */
async function send(route: { method: string; path: string }, body: Buffer | string, headers: Record<string, string>) {
  const response = await fetch(`${platform.url}${route.path}`, {
    method: route.method,
    headers: { authorization: `Bearer ${platform.deps.adminToken}`, ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers };
}

/** Every route answers each body with a status below 500; returns the answers for closer checks. */
async function everyRouteRefuses(body: Buffer | string, headers: Record<string, string>) {
  const answers = [];
  for (const route of routes) {
    const answer = await send(route, body, headers);
    expect(answer.status, `${route.method} ${route.path}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
    answers.push({ route, ...answer });
  }
  return answers;
}

describe('hostile input on every route', () => {
  it('covers the documented write routes', () => {
    expect(routes.length).toBeGreaterThan(30);
    expect(routes.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/pts-api/manual-event', '/pts-api/bulk-events', '/admin/brands', '/services/checkin']),
    );
  });

  it('a body that does not inflate as its Content-Encoding says: 4xx everywhere', async () => {
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const answers = await everyRouteRefuses('{"not":"compressed"}', {
        'content-type': 'application/json',
        'content-encoding': encoding,
      });
      const event = answers.find((a) => a.route.path === '/pts-api/manual-event');
      expect(event?.status).toBe(400);
    }
  });

  it('an unsupported charset: 415 or another 4xx everywhere', async () => {
    const answers = await everyRouteRefuses('{}', { 'content-type': 'application/json; charset=latin1' });
    const checkout = answers.find((a) => a.route.path === '/pts-api/create-checkout');
    expect(checkout?.status).toBe(415);
  });

  it('a lone surrogate or a NUL in any string: 4xx everywhere, 400 with the reason on JSON routes', async () => {
    const surrogate = `{"brandId":"${brand.brandId}","name":"a\\ud800b","metadata":{"k":"\\udc00"}}`;
    const answers = await everyRouteRefuses(surrogate, { 'content-type': 'application/json' });
    const event = answers.find((a) => a.route.path === '/pts-api/manual-event');
    expect(event?.status).toBe(400);
    expect(JSON.parse(event?.text ?? '{}').details).toMatchObject({ reason: 'lone_surrogate' });
    const nul = `{"brandId":"${brand.brandId}\\u0000","userIdentifier":"a\\u0000"}`;
    const nulAnswers = await everyRouteRefuses(nul, { 'content-type': 'application/json' });
    const roles = nulAnswers.find((a) => a.route.path === '/services/chat-roles');
    expect(roles?.status).toBe(400);
    expect(JSON.parse(roles?.text ?? '{}').details).toMatchObject({ reason: 'nul_character' });
    // A well-formed pair (an emoji written as escapes) is text like any other.
    const pair = await send(
      { method: 'POST', path: '/pts-api/manual-event' },
      JSON.stringify({ brandId: brand.brandId, eventType: 'purchase', userEmail: 'pair@example.com' }).replace(
        '}',
        ',"metadata":{"note":"\\ud83d\\ude00"}}',
      ),
      { 'content-type': 'application/json', origin: 'https://hostile.example' },
    );
    expect(pair.status, pair.text).toBe(200);
  });

  it('9,000 nested arrays: 400 everywhere, never a stack overflow', async () => {
    const deep = `${'['.repeat(9000)}${']'.repeat(9000)}`;
    const answers = await everyRouteRefuses(deep, { 'content-type': 'application/json' });
    const bulk = answers.find((a) => a.route.path === '/pts-api/bulk-events');
    expect(bulk?.status).toBe(400);
    expect(JSON.parse(bulk?.text ?? '{}').details).toMatchObject({ reason: 'too_deep' });
    const wrapped = `{"events":${deep}}`;
    expect(
      (await send({ method: 'POST', path: '/pts-api/bulk-events' }, wrapped, { 'content-type': 'application/json' }))
        .status,
    ).toBe(400);
  });

  it('the checkout form with too many fields or a broken gzip body: 4xx', async () => {
    const pay = { method: 'POST', path: '/pts-api/checkout/00000000-0000-4000-8000-000000000000/pay' };
    const fields = Array.from({ length: 20 }, (_, i) => `f${i}=1`).join('&');
    expect((await send(pay, fields, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBeLessThan(500);
    const broken = await send(pay, 'a=1', {
      'content-type': 'application/x-www-form-urlencoded',
      'content-encoding': 'gzip',
    });
    expect(broken.status).toBeLessThan(500);
    const bogus = await send(pay, gzipSync('a=1'), {
      'content-type': 'application/x-www-form-urlencoded; charset=bogus',
      'content-encoding': 'gzip',
    });
    expect(bogus.status).toBeLessThan(500);
  });

  it('claim limits beyond what the database holds: 400 naming the field', async () => {
    for (const field of ['maxClaims', 'maxTotal']) {
      const answer = await send(
        { method: 'PUT', path: `/admin/brands/${brand.brandId}/rules/huge_${field}` },
        JSON.stringify({ rewardAmount: 1, [field]: 9007199254740991 }),
        { 'content-type': 'application/json' },
      );
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toContain(field);
    }
  });

  it('every JSON answer says nosniff', async () => {
    const health = await platform.get('/health');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await platform.post('/pts-api/manual-event', {});
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('fuzzed strings', () => {
  const anyUnit = fc.nat(0xffff).map((code) => String.fromCharCode(code));
  const anyString = fc.string({ unit: anyUnit, maxLength: 12 });

  it('manual-event never answers 5xx, whatever the strings', async () => {
    await fc.assert(
      fc.asyncProperty(anyString, anyString, anyString, async (email, eventType, note) => {
        const answer = await platform.post(
          '/pts-api/manual-event',
          { brandId: brand.brandId, eventType, userEmail: email, metadata: { note } },
          { origin: 'https://hostile.example' },
        );
        expect(answer.status).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });

  it('brand create and rule set never answer 5xx, whatever the strings', async () => {
    const admin = { authorization: `Bearer ${platform.deps.adminToken}` };
    await fc.assert(
      fc.asyncProperty(anyString, anyString, async (name, channel) => {
        const created = await platform.post('/admin/brands', { name, domain: 'fuzz.example' }, admin);
        expect(created.status).toBeLessThan(500);
        const rule = await fetch(`${platform.url}/admin/brands/${brand.brandId}/rules/fuzzed`, {
          method: 'PUT',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ rewardAmount: 1, channels: [channel] }),
        });
        expect(rule.status).toBeLessThan(500);
      }),
      { numRuns: 40 },
    );
  });
});
