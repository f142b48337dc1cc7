import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeSignature, signatureMatches, signRequest } from './signing.ts';

describe('brand request signing', () => {
  const base = {
    securityKey: 'pts_sk_example',
    timestamp: 1_767_225_600,
    method: 'post',
    pathWithQuery: '/pts-api/manual-event?x=1',
    body: '{"a":1}',
  };

  it('signs timestamp.METHOD.path-with-query.raw-body with HMAC-SHA256 in lowercase hex', () => {
    const expected = createHmac('sha256', 'pts_sk_example')
      .update('1767225600.POST./pts-api/manual-event?x=1.{"a":1}')
      .digest('hex');
    expect(computeSignature(base)).toBe(expected);
    expect(computeSignature(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['key', { securityKey: 'pts_sk_other' }],
    ['timestamp', { timestamp: 1_767_225_601 }],
    ['method', { method: 'GET' }],
    ['path', { pathWithQuery: '/pts-api/manual-event' }],
    ['body', { body: '{"a":2}' }],
  ])('changes when the %s changes', (_name, change) => {
    expect(computeSignature({ ...base, ...change })).not.toBe(computeSignature(base));
  });

  it('signs bytes and the same text identically', () => {
    expect(computeSignature({ ...base, body: new TextEncoder().encode(base.body) })).toBe(computeSignature(base));
  });

  it('produces both headers', () => {
    const headers = signRequest(base);
    expect(headers).toEqual({ 'x-pts-timestamp': '1767225600', 'x-pts-signature': computeSignature(base) });
  });

  it('compares in constant time and rejects malformed signatures', () => {
    const good = computeSignature(base);
    expect(signatureMatches(good, good)).toBe(true);
    expect(signatureMatches(good, good.replace(/.$/, good.endsWith('0') ? '1' : '0'))).toBe(false);
    expect(signatureMatches(good, good.toUpperCase())).toBe(false);
    expect(signatureMatches(good, 'zz')).toBe(false);
  });
});
