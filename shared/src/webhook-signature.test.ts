import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeWebhookSignature, signWebhookPayload, verifyWebhookSignature } from './webhook-signature.ts';

const secret = 'whsec_test';
const body = '{"id":"evt_1","type":"webhook.test","created":1770000000,"data":{}}';
const t = 1_770_000_000;

describe('webhook signatures', () => {
  it('signs HMAC-SHA256(secret, t + "." + raw body) as t=…,v1=…', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(computeWebhookSignature(secret, t, body)).toBe(expected);
    expect(signWebhookPayload({ secret, body, timestamp: t })).toBe(`t=${t},v1=${expected}`);
    expect(computeWebhookSignature(secret, t, Buffer.from(body))).toBe(expected);
  });

  it('verifies within the tolerance window and says why it refuses otherwise', () => {
    const header = signWebhookPayload({ secret, body, timestamp: t });
    expect(verifyWebhookSignature({ secret, body, header, now: t + 299 })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhookSignature({ secret, body, header, now: t - 299 }).ok).toBe(true);
    const cases: [Parameters<typeof verifyWebhookSignature>[0], string][] = [
      [{ secret, body, header, now: t + 301 }, 'timestamp_out_of_tolerance'],
      [{ secret, body, header, now: t + 30, toleranceSeconds: 10 }, 'timestamp_out_of_tolerance'],
      [{ secret, body: `${body} `, header, now: t }, 'signature_mismatch'],
      [{ secret: 'whsec_other', body, header, now: t }, 'signature_mismatch'],
      [{ secret, body, header: header.replace(`t=${t}`, `t=${t + 1}`), now: t }, 'signature_mismatch'],
      [{ secret, body, header: undefined, now: t }, 'missing_header'],
      [{ secret, body, header: 'v1=abc', now: t }, 'malformed_header'],
      [{ secret, body, header: `t=${t}`, now: t }, 'malformed_header'],
    ];
    for (const [input, reason] of cases) expect(verifyWebhookSignature(input), reason).toEqual({ ok: false, reason });
  });

  it('accepts a header carrying several v1 signatures when one matches (secret rotation)', () => {
    const good = computeWebhookSignature(secret, t, body);
    const other = computeWebhookSignature('whsec_old', t, body);
    expect(verifyWebhookSignature({ secret, body, header: `t=${t},v1=${other},v1=${good}`, now: t }).ok).toBe(true);
  });
});
