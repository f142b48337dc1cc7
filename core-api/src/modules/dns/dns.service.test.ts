import { createManualClock } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../../../test/fakes/dns-server.ts';
import type { Database } from '../../db/database.ts';
import { createSystemTxtResolver, parsePtsTxtRecord, txtHostFor, verifyDns } from './dns.service.ts';

const ID = '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd';

describe('parsePtsTxtRecord', () => {
  it.each([
    [`brand_id=${ID};api_key=k1`, { brandId: ID, apiKey: 'k1' }],
    [`brand_id=${ID.toUpperCase().replace('0X', '0x')};api_key=k1`, { brandId: ID, apiKey: 'k1' }],
    [` Brand_ID = ${ID} ;  API_KEY = k1 ; `, { brandId: ID, apiKey: 'k1' }],
    [`api_key=k1;brand_id=${ID}`, { brandId: ID, apiKey: 'k1' }],
    [`"brand_id=${ID};api_key=k1"`, { brandId: ID, apiKey: 'k1' }],
    [`brand-id=${ID}; api-key="k1"; note=hello`, { brandId: ID, apiKey: 'k1' }],
    [`brand_id=${ID} api_key=k1`, { brandId: ID, apiKey: 'k1' }],
    [`brand_id=${ID};api_key=k1;brand_id=0x0000000000000000000000000000000000000000`, { brandId: ID, apiKey: 'k1' }],
  ])('reads %j', (text, expected) => {
    expect(parsePtsTxtRecord(text)).toEqual(expected);
  });

  it.each([
    [''],
    ['v=spf1 include:_spf.example.com -all'],
    [`brand_id=${ID}`],
    ['api_key=k1'],
    ['brand_id=0x1234;api_key=k1'],
    [`brand_id=${ID};api_key=`],
    [`brand_id${ID};api_key=k1`],
  ])('rejects %j', (text) => {
    expect(parsePtsTxtRecord(text)).toBeUndefined();
  });

  it('builds the record host', () => {
    expect(txtHostFor('shop.example.com')).toBe('_pts.shop.example.com');
  });
});

describe('verifyDns lookups', () => {
  const clock = createManualClock();
  const noDatabase = undefined as unknown as Database;

  it('bounds a resolver that never answers with its own deadline', async () => {
    const started = Date.now();
    await expect(
      verifyDns(
        { db: noDatabase, clock, resolveTxt: () => new Promise(() => {}), lookupTimeoutMs: 50 },
        { domain: 'example.com' },
      ),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dnsError: 'ETIMEOUT' } });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it.each([['ENOTFOUND'], ['ENODATA']])('treats %s as no record', async (code) => {
    const result = await verifyDns(
      {
        db: noDatabase,
        clock,
        resolveTxt: async () => Promise.reject(Object.assign(new Error(code), { code })),
      },
      { domain: 'example.com' },
    );
    expect(result).toMatchObject({ dnsConfigured: false, brandId: null, reason: 'no_record' });
  });

  it('treats any other resolver failure as a failed lookup', async () => {
    await expect(
      verifyDns(
        { db: noDatabase, clock, resolveTxt: async () => Promise.reject(new Error('socket closed')) },
        { domain: 'example.com' },
      ),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dnsError: 'unknown' } });
  });
});

describe('createSystemTxtResolver against a local DNS server', () => {
  let dns: FakeDnsServer;
  beforeAll(async () => {
    dns = await startFakeDnsServer({
      '_pts.example.com': { txt: [['part one ', 'part two'], ['second']] },
    });
  });
  afterAll(async () => {
    await dns?.close();
  });

  it('returns every record with its character-strings, from the configured server', async () => {
    const resolve = createSystemTxtResolver([dns.address], { timeoutMs: 300, tries: 1 });
    const records = await resolve('_pts.example.com');
    expect(records.map((chunks) => chunks.join(''))).toEqual(['part one part two', 'second']);
    expect(dns.queries.at(-1)).toEqual({ name: '_pts.example.com', type: 'TXT' });
  });

  it('reports NXDOMAIN as ENOTFOUND', async () => {
    const resolve = createSystemTxtResolver([dns.address], { timeoutMs: 300, tries: 1 });
    await expect(resolve('_pts.missing.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
