import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers of a brand-signed request. */
export const SIGNATURE_HEADER = 'x-pts-signature';
export const TIMESTAMP_HEADER = 'x-pts-timestamp';
/**
 * Optional header of an agent-signed request: a fresh random value per request, signed with it, so clients
 * sharing one key may send identical requests in the same second (docs/agent-api.md, "Signing").
 */
export const NONCE_HEADER = 'x-pts-nonce';
/** A nonce: 8 to 64 letters, digits, `-` or `_` (never a `.`, so the signed string parses one way). */
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

export interface SignatureInput {
  securityKey: string;
  /** Unix seconds. */
  timestamp: number;
  method: string;
  /** Path with query string, exactly as sent: `/pts-api/manual-event?x=1`. */
  pathWithQuery: string;
  /** The raw body bytes (empty for GET). */
  body: string | Uint8Array;
  /** The request's nonce (X-PTS-Nonce), when it sends one. */
  nonce?: string | undefined;
}

/**
 * The string that is signed: `timestamp.METHOD.path-with-query.raw-body`, or with a nonce
 * `timestamp.nonce.METHOD.path-with-query.raw-body`.
 */
function signingPayload(input: SignatureInput): Buffer {
  const stamp = input.nonce === undefined ? `${input.timestamp}` : `${input.timestamp}.${input.nonce}`;
  const head = Buffer.from(`${stamp}.${input.method.toUpperCase()}.${input.pathWithQuery}.`, 'utf8');
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : Buffer.from(input.body);
  return Buffer.concat([head, body]);
}

/** Lowercase hex HMAC-SHA256 of the signing payload under the brand's security key. */
export function computeSignature(input: SignatureInput): string {
  return createHmac('sha256', input.securityKey).update(signingPayload(input)).digest('hex');
}

/** Headers to add to a brand-signed request. */
export function signRequest(input: Omit<SignatureInput, 'timestamp'> & { timestamp?: number }): Record<string, string> {
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: computeSignature({ ...input, timestamp }),
  };
}

/** Constant-time comparison of a presented signature with the expected one. */
export function signatureMatches(expected: string, presented: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(presented)) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(presented, 'hex'));
}

/** Header naming the agent key of an agent API request (docs/agent-api.md, "Signing"). */
export const AGENT_KEY_HEADER = 'x-pts-agent-key';

/**
 * Headers of a signed agent API request: the key id, the timestamp and the HMAC-SHA256 under the key's
 * secret of `timestamp.METHOD.path-with-query.raw-body` — the same payload as a brand signature, so the
 * MCP server, tests and clients sign alike. `pathWithQuery` is the full path (`/api/v1/network/info?x=1`). With
 * `nonce` the nonce is signed too and sent as X-PTS-Nonce.
 */
export function signAgentRequest(
  input: { keyId: string; secret: string } & Omit<SignatureInput, 'timestamp' | 'securityKey'> & {
      timestamp?: number;
    },
): Record<string, string> {
  const { keyId, secret, ...rest } = input;
  return {
    [AGENT_KEY_HEADER]: keyId,
    ...(rest.nonce === undefined ? {} : { [NONCE_HEADER]: rest.nonce }),
    ...signRequest({ ...rest, securityKey: secret }),
  };
}
