import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let n = 0;

const body = (overrides: Record<string, unknown> = {}) => ({
  brandId: brand.brandId,
  eventType: 'ping',
  userEmail: `sec${++n}@example.com`,
  ...overrides,
});

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '40' });
  brand = await platform.createBrand({
    domain: 'brand.example',
    rules: [{ eventType: 'ping', rewardAmount: 1, cooldownHours: 0, maxClaims: -1 }],
  });
});

afterAll(async () => {
  await platform?.stop();
});

/** Sends raw bytes with chosen signature headers. */
async function sendSigned(raw: string, headers: Record<string, string>) {
  const res = await fetch(`${platform.url}/pts-api/manual-event`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  return {
    status: res.status,
    body: (await res.json()) as { code?: string; eventId?: string; details?: { reason?: string } },
  };
}

describe('brand-signed requests', () => {
  const now = () => Math.floor(platform.clock.now().getTime() / 1000);

  it('accepts a valid signature without any domain (server to server)', async () => {
    const res = await platform.signedPost('/pts-api/manual-event', body(), brand.securityKey);
    expect(res.status).toBe(200);
  });

  it('answers 401 for a wrong key, a tampered body, a wrong path and a malformed signature', async () => {
    const raw = JSON.stringify(body());
    const wrongKey = signRequest({
      securityKey: 'pts_sk_wrong',
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now(),
    });
    expect((await sendSigned(raw, wrongKey)).status).toBe(401);

    const good = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now(),
    });
    const tampered = raw.replace('"ping"', '"pong"');
    const res = await sendSigned(tampered, good);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_SIGNATURE');

    const otherPath = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/bulk-events',
      body: raw,
      timestamp: now(),
    });
    expect((await sendSigned(raw, otherPath)).status).toBe(401);

    expect((await sendSigned(raw, { 'x-pts-timestamp': String(now()), 'x-pts-signature': 'zz' })).status).toBe(401);
    expect((await sendSigned(raw, { 'x-pts-signature': good['x-pts-signature']! })).status).toBe(401);
  });

  it('answers 401 outside the ±300 s window and accepts inside it', async () => {
    const raw = JSON.stringify(body());
    const stale = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now() - 301,
    });
    const res = await sendSigned(raw, stale);
    expect(res.status).toBe(401);
    expect(res.body.details?.reason).toBe('timestamp_out_of_window');
    const future = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now() + 301,
    });
    expect((await sendSigned(raw, future)).status).toBe(401);
    const edge = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now() - 299,
    });
    expect((await sendSigned(raw, edge)).status).toBe(200);
  });

  it('never accepts the same signature twice: the repeat gets the first answer back, with no second effect', async () => {
    const raw = JSON.stringify(body());
    const headers = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp: now(),
    });
    const first = await sendSigned(raw, headers);
    expect(first.status).toBe(200);
    const replay = await sendSigned(raw, headers);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    const events = await platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('id', '=', first.body.eventId as string)
      .execute();
    expect(events).toHaveLength(1);
  });

  it('stores the security key hashed and encrypted, never in clear', async () => {
    const row = await platform.deps.db
      .selectFrom('brands')
      .selectAll()
      .where('address', '=', brand.brandId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(brand.securityKey);
    expect(JSON.stringify(row)).not.toContain(brand.apiKey);
  });
});

describe('a brand that takes signed events only', () => {
  it('`pts brand set --unsigned-events off` refuses unsigned events with 401 and keeps signed ones working', async () => {
    const strict = await platform.createBrand({
      domain: 'strict.example',
      rules: [{ eventType: 'ping', rewardAmount: 1, cooldownHours: 0, maxClaims: -1 }],
    });
    const event = { brandId: strict.brandId, eventType: 'ping', userEmail: 'strict@example.com' };
    const open = await platform.post('/pts-api/manual-event', { ...event, domain: 'strict.example' });
    expect(open.status, JSON.stringify(open.body)).toBe(200);

    let stdout = '';
    const code = await runCli(['brand', 'set', '--brand', strict.brandId, '--unsigned-events', 'off', '--json'], {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ brandId: strict.brandId, unsignedEvents: false });

    // At once (the brand cache hears the change), for single and bulk events, whatever domain is claimed.
    const refused = await platform.post('/pts-api/manual-event', { ...event, domain: 'strict.example' });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'INVALID_SIGNATURE', details: { reason: 'signature_required' } });
    expect(refused.body.error).toMatch(/accepts only signed events/);
    const bulk = await platform.post('/pts-api/bulk-events', { events: [{ ...event, domain: 'strict.example' }] });
    expect(bulk.body.results?.[0] ?? bulk.body).toMatchObject({ code: 'INVALID_SIGNATURE' });
    platform.clock.advance(1_000);
    const signed = await platform.signedPost(
      '/pts-api/manual-event',
      { ...event, userEmail: 'strict-signed@example.com' },
      strict.securityKey,
    );
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const others = await platform.post('/pts-api/manual-event', { ...body(), domain: 'brand.example' });
    expect(others.status).toBe(200);
  });
});

describe('CORS', () => {
  it("echoes a brand's domain and its subdomains, with credentials, never *", async () => {
    const res = await fetch(`${platform.url}/pts-api/event-config?brandId=${brand.brandId}`, {
      headers: { origin: 'https://app.brand.example' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.brand.example');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toContain('Origin');
    // The browser SDK reads Retry-After; browsers hide it from scripts unless it is exposed.
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
    );
  });

  it('answers preflight on every path with the spec methods and headers', async () => {
    for (const path of ['/pts-api/manual-event', '/pts-api/bulk-events', '/health', '/no/such/path']) {
      const res = await fetch(`${platform.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://brand.example', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization');
    }
  });

  it('gives an unknown origin no CORS headers', async () => {
    const res = await fetch(`${platform.url}/pts-api/event-config?brandId=${brand.brandId}`, {
      headers: { origin: 'https://attacker.example' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetch(`${platform.url}/pts-api/manual-event`, {
      method: 'OPTIONS',
      headers: { origin: 'https://brand.example.attacker.example' },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('always allows the service domains', async () => {
    const res = await fetch(`${platform.url}/health`, { headers: { origin: 'http://localhost:5173' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });
});

describe('rate limits', () => {
  it('puts X-RateLimit-* headers on event-handler responses', async () => {
    const res = await fetch(`${platform.url}/pts-api/event-config?brandId=${brand.brandId}`);
    expect(Number(res.headers.get('x-ratelimit-limit'))).toBe(40);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(40);
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
  });

  it('answers 429 rate_limit_exceeded once an IP spends its minute, while signed brand traffic goes on', async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 45 && !limited; i++) {
      const res = await fetch(`${platform.url}/pts-api/event-config?brandId=${brand.brandId}`);
      if (res.status === 429) limited = res;
    }
    expect(limited).toBeDefined();
    const payload = (await limited!.json()) as { code: string; retryAfter: number; details: { reason: string } };
    expect(payload.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(payload.details.reason).toBe('rate_limit_exceeded');
    expect(payload.retryAfter).toBeGreaterThan(0);
    expect(limited!.headers.get('x-ratelimit-remaining')).toBe('0');

    const signed = await platform.signedPost('/pts-api/manual-event', body(), brand.securityKey);
    expect(signed.status).toBe(200);
    expect(Number(signed.headers.get('x-ratelimit-limit'))).toBe(120000);
  });
});
