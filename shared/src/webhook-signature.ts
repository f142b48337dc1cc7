import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature of an outbound webhook: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-pts-signature';
/** How far a signature's timestamp may be from the receiver's clock, by default (5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** Lowercase hex HMAC-SHA256 under the endpoint's secret of `timestamp + "." + raw body`. */
export function computeWebhookSignature(secret: string, timestamp: number, body: string | Uint8Array): string {
  const head = Buffer.from(`${timestamp}.`, 'utf8');
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  return createHmac('sha256', secret)
    .update(Buffer.concat([head, raw]))
    .digest('hex');
}

/** The `x-pts-signature` header value for a body sent at `timestamp` (Unix seconds). */
export function signWebhookPayload(input: { secret: string; body: string | Uint8Array; timestamp: number }): string {
  return `t=${input.timestamp},v1=${computeWebhookSignature(input.secret, input.timestamp, input.body)}`;
}

export interface VerifyWebhookInput {
  secret: string;
  /** The raw request body exactly as received (verify before parsing JSON). */
  body: string | Uint8Array;
  /** The `x-pts-signature` header. */
  header: string | undefined;
  /** Allowed distance between the signature's time and `now`; default 300 s. */
  toleranceSeconds?: number;
  /** The receiver's time in Unix seconds; the system clock when absent. */
  now?: number;
}

export type WebhookVerification =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'signature_mismatch' };

/**
 * Checks a webhook's `x-pts-signature` in constant time and that its timestamp is within the tolerance
 * window (which bounds replays). Several `v1=` entries are accepted (any one matching suffices).
 */
export function verifyWebhookSignature(input: VerifyWebhookInput): WebhookVerification {
  if (!input.header) return { ok: false, reason: 'missing_header' };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of input.header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed_header' };
  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  }
  const expected = Buffer.from(computeWebhookSignature(input.secret, timestamp, input.body), 'hex');
  const matches = signatures.some((signature) => timingSafeEqual(expected, Buffer.from(signature, 'hex')));
  return matches ? { ok: true, timestamp } : { ok: false, reason: 'signature_mismatch' };
}
