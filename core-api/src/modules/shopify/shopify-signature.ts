import { createHmac, timingSafeEqual } from 'node:crypto';

/** `X-Shopify-Hmac-Sha256` of a body: base64 of HMAC-SHA256 keyed with the webhook secret, over the raw bytes. */
export function shopifyHmac(secret: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Shopify's documented check (shopify.dev, "Verify webhook deliveries"): recompute the HMAC over the exact bytes
 * received and compare it with the header's decoded digest in constant time. A header that is not base64 of a
 * 32-byte digest never matches.
 */
export function verifyShopifyHmac(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header || !BASE64.test(header)) return false;
  const given = Buffer.from(header, 'base64');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
