import type { AddressInfo } from 'node:net';
import { createManualClock } from '@pts/shared';
import express from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { type FakeDnsServer, startFakeDnsServer } from '../../../test/fakes/dns-server.ts';
import { loadConfig } from '../../config.ts';
import { createErrorHandler, notFoundHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { createLogger } from '../../observability/logger.ts';
import { hashSecret } from '../../security/secret-box.ts';
import { type BrandChange, createChangeNotifier } from '../brands/brand-changes.ts';
import { dnsRoutes } from './dns.routes.ts';
import { createDnsService, createSystemTxtResolver } from './dns.service.ts';

const BRAND = '0x1111111111111111111111111111111111111111';
const OTHER_BRAND = '0x2222222222222222222222222222222222222222';
const API_KEY = 'pts_ak_Z3JlYXQtc2VjcmV0LWtleS1mb3ItZG5zLXRlc3Rz';
const OTHER_API_KEY = 'pts_ak_b3RoZXItYnJhbmQta2V5LWZvci10ZXN0cw';

describe('POST /pts-api/verify-dns', () => {
  let database: TestDatabase;
  let dns: FakeDnsServer;
  let base = '';
  let close: () => void = () => {};
  const clock = createManualClock('2026-04-01T00:00:00.000Z');
  const changes = createChangeNotifier();
  const announced: BrandChange[] = [];
  changes.subscribe((change) => announced.push(change));

  async function startApp(lookupsPerMinutePerIp?: number) {
    const app = express();
    const logger = createLogger({ level: 'silent' });
    const router = routerFrom(
      dnsRoutes(
        {
          dns: createDnsService({
            db: database.db,
            // The real resolver path: node's c-ares talking UDP to the fake server.
            resolveTxt: createSystemTxtResolver([dns.address], { timeoutMs: 300, tries: 1 }),
            clock,
            logger,
            changes,
          }),
          config: loadConfig({}),
        },
        lookupsPerMinutePerIp === undefined ? {} : { lookupsPerMinutePerIp },
      ),
    );
    app.use('/pts-api', router);
    app.use(notFoundHandler);
    app.use(createErrorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    dns = await startFakeDnsServer();
    const app = await startApp();
    base = app.url;
    close = app.close;
    const brand = (address: string, domain: string, apiKey: string) => ({
      address,
      name: `Brand ${domain}`,
      website_domain: domain,
      verified_domains: '[]',
      security_key_hash: hashSecret(`${apiKey}-security`),
      security_key_encrypted: 'v1.test.test.test',
      api_key_hash: hashSecret(apiKey),
    });
    await database.db
      .insertInto('brands')
      .values([brand(BRAND, 'example.com', API_KEY), brand(OTHER_BRAND, 'other.test', OTHER_API_KEY)])
      .execute();
  });
  afterAll(async () => {
    close();
    await dns?.close();
    await database?.close();
  });
  beforeEach(async () => {
    dns.clear();
    announced.length = 0;
    await database.db.updateTable('brands').set({ verified_domains: '[]' }).execute();
  });

  async function verify(body: unknown, url = base) {
    const response = await fetch(`${url}/pts-api/verify-dns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>,
    };
  }

  async function verifiedDomains(address = BRAND) {
    const row = await database.db
      .selectFrom('brands')
      .select('verified_domains')
      .where('address', '=', address)
      .executeTakeFirstOrThrow();
    return row.verified_domains;
  }

  it('configures the brand website domain from a valid record and records it once', async () => {
    dns.set('_pts.example.com', { txt: [[`brand_id=${BRAND};api_key=${API_KEY}`]] });
    const first = await verify({ domain: 'Example.COM' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      domain: 'example.com',
      dnsConfigured: true,
      brandId: BRAND,
      reason: 'verified',
    });
    expect(dns.queries).toContainEqual({ name: '_pts.example.com', type: 'TXT' });
    const again = await verify({ domain: 'example.com' });
    expect(again.body.dnsConfigured).toBe(true);
    expect(await verifiedDomains()).toEqual(['example.com']);
    // Announced once, when the list changed, so caches of the brand (CORS, agent directory) show it at once.
    expect(announced).toEqual([{ kind: 'brand', brandId: BRAND }]);
  });

  it('records the domain once when verifications race', async () => {
    dns.set('_pts.example.com', { txt: [[`brand_id=${BRAND};api_key=${API_KEY}`]] });
    const results = await Promise.all(Array.from({ length: 6 }, () => verify({ domain: 'example.com' })));
    expect(results.every((result) => result.body.dnsConfigured === true)).toBe(true);
    expect(await verifiedDomains()).toEqual(['example.com']);
    expect(announced).toHaveLength(1);
  });

  it('accepts a subdomain, a record split into chunks, spaces, key case and a mixed-case brand id', async () => {
    const record = `  BRAND_ID = ${BRAND.toUpperCase().replace('0X', '0x')} ; Api_Key=${API_KEY} `;
    dns.set('_pts.shop.example.com', { txt: [[record.slice(0, 30), record.slice(30)]] });
    const { status, body } = await verify({ domain: 'shop.example.com' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ dnsConfigured: true, brandId: BRAND });
    expect(await verifiedDomains()).toEqual(['shop.example.com']);
  });

  it('finds the valid record among several TXT records', async () => {
    dns.set('_pts.example.com', {
      txt: [['v=spf1 -all'], [`brand_id=${OTHER_BRAND};api_key=${API_KEY}`], [`brand_id=${BRAND};api_key=${API_KEY}`]],
    });
    const { body } = await verify({ domain: 'example.com' });
    expect(body).toMatchObject({ dnsConfigured: true, brandId: BRAND, reason: 'verified' });
  });

  it("does not configure a domain outside the brand's website domain, even with the right key", async () => {
    // The API key sits in public DNS; anyone can copy it into their own zone.
    dns.set('_pts.attacker.test', { txt: [[`brand_id=${BRAND};api_key=${API_KEY}`]] });
    const { status, body } = await verify({ domain: 'attacker.test' });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      domain: 'attacker.test',
      dnsConfigured: false,
      brandId: BRAND,
      reason: 'domain_mismatch',
    });
    dns.set('_pts.notexample.com', { txt: [[`brand_id=${BRAND};api_key=${API_KEY}`]] });
    expect((await verify({ domain: 'notexample.com' })).body.reason).toBe('domain_mismatch');
    expect(await verifiedDomains()).toEqual([]);
  });

  it('rejects a record whose API key is not the brand key', async () => {
    dns.set('_pts.example.com', { txt: [[`brand_id=${BRAND};api_key=${OTHER_API_KEY}`]] });
    const { body } = await verify({ domain: 'example.com' });
    expect(body).toMatchObject({ dnsConfigured: false, brandId: BRAND, reason: 'api_key_mismatch' });
    expect(await verifiedDomains()).toEqual([]);
  });

  it('rejects a record naming an unknown brand', async () => {
    const unknown = '0x3333333333333333333333333333333333333333';
    dns.set('_pts.example.com', { txt: [[`brand_id=${unknown};api_key=${API_KEY}`]] });
    expect((await verify({ domain: 'example.com' })).body).toMatchObject({
      dnsConfigured: false,
      brandId: unknown,
      reason: 'unknown_brand',
    });
  });

  it.each([
    ['no such name (NXDOMAIN)', 'nxdomain', 'no_record'],
    ['a name without TXT records (NODATA)', 'nodata', 'no_record'],
    ['a TXT record of another kind', { txt: [['google-site-verification=abc']] }, 'malformed_record'],
    ['a record with a bad brand id', { txt: [[`brand_id=0x123;api_key=${API_KEY}`]] }, 'malformed_record'],
    ['a record without an api key', { txt: [[`brand_id=${BRAND}`]] }, 'malformed_record'],
  ] as const)('answers 200 not configured with brandId null for %s', async (_name, answer, reason) => {
    dns.set('_pts.example.com', answer);
    const { status, body } = await verify({ domain: 'example.com' });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      domain: 'example.com',
      dnsConfigured: false,
      brandId: null,
      reason,
    });
  });

  it.each([
    ['SERVFAIL', 'servfail', 'ESERVFAIL'],
    ['REFUSED', 'refused', 'EREFUSED'],
    ['no answer (timeout)', 'no-reply', 'ETIMEOUT'],
  ] as const)(
    'answers 503 SERVICE_UNAVAILABLE with Retry-After when the lookup fails: %s',
    async (_name, answer, code) => {
      dns.set('_pts.example.com', answer);
      const { status, body, headers } = await verify({ domain: 'example.com' });
      expect(status).toBe(503);
      expect(body).toMatchObject({
        success: false,
        code: 'SERVICE_UNAVAILABLE',
        details: { reason: 'dns_lookup_failed', host: '_pts.example.com', dnsError: code },
        retryAfter: 30,
      });
      expect(headers.get('retry-after')).toBe('30');
    },
  );

  it.each([
    [{}, 'domain'],
    [{ domain: 'not a domain' }, 'domain'],
    [{ domain: 'a'.repeat(254) }, 'domain'],
    [{ domain: 42 }, 'domain'],
  ])('answers 400 VALIDATION_ERROR for %j', async (body, field) => {
    const response = await verify(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', details: { field } });
    expect(dns.queries).toEqual([]);
  });

  it('limits lookups per client IP', async () => {
    const limited = await startApp(2);
    try {
      dns.set('_pts.example.com', 'nxdomain');
      expect((await verify({ domain: 'example.com' }, limited.url)).status).toBe(200);
      expect((await verify({ domain: 'example.com' }, limited.url)).status).toBe(200);
      const third = await verify({ domain: 'example.com' }, limited.url);
      expect(third.status).toBe(429);
      expect(third.body.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(dns.queries).toHaveLength(2);
    } finally {
      limited.close();
    }
  });
});
