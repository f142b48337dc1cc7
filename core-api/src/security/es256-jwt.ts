import { type KeyObject, verify } from 'node:crypto';
import { AppError, type Clock } from '@pts/shared';

/**
 * ES256 access-token verification, shared by the local token issuer and the Privy identity provider: the
 * algorithm pinned (no `none`, no HMAC with a public key, no RSA), no critical headers, a 64-byte P-1363
 * signature, then issuer, audience, subject and `exp`/`nbf`/`iat` against the injected clock with a leeway
 * of at most 30 s. Every failure is a 401 UNAUTHORIZED whose message says what was wrong.
 */

/** The only algorithm issued and accepted: ECDSA P-256 with SHA-256 (RFC 7518 3.4). */
export const ES256 = 'ES256';
/** Clock skew tolerated on `exp`, `nbf` and `iat`; never more than this. */
export const MAX_LEEWAY_SECONDS = 30;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A leeway within [0, 30] s (30 when unset). */
export function clampLeeway(seconds: number | undefined): number {
  return Math.min(Math.max(seconds ?? MAX_LEEWAY_SECONDS, 0), MAX_LEEWAY_SECONDS);
}

export function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message);
}

/** A compact JWS split and its header checked; the key is chosen from `header.kid` before the signature. */
export interface ParsedJws {
  header: Record<string, unknown>;
  /** `header.payload`, the signed bytes. */
  signingInput: string;
  payloadPart: string;
  signaturePart: string;
}

/** Splits a compact ES256 JWS and checks its header (alg, typ, crit); no key is needed yet. */
export function parseEs256Jws(token: string): ParsedJws {
  if (typeof token !== 'string' || token.length === 0) throw unauthorized('Access token is missing');
  const parts = token.split('.');
  if (parts.length !== 3 || !BASE64URL.test(parts[0] ?? '') || !BASE64URL.test(parts[1] ?? '')) {
    throw unauthorized('Access token is malformed: expected three base64url segments (header.payload.signature)');
  }
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeSegment(headerPart, 'header');
  if (header.alg !== ES256) {
    throw unauthorized(`Access token algorithm ${JSON.stringify(header.alg ?? null)} is not accepted; only ES256`);
  }
  if (header.typ !== undefined && header.typ !== 'JWT') {
    throw unauthorized(`Access token type ${JSON.stringify(header.typ)} is not accepted; expected JWT`);
  }
  if (header.crit !== undefined) throw unauthorized('Access token has critical header parameters; none are supported');
  return { header, signingInput: `${headerPart}.${payloadPart}`, payloadPart, signaturePart };
}

export interface Es256ClaimRules {
  clock: Clock;
  /** From clampLeeway. */
  leewaySeconds: number;
  issuer: string;
  audience: string;
  /** Says whose key failed in the signature message, e.g. "not signed by this Privy app". */
  signer?: string;
}

/** Checks the signature with `key`, then the claims; the verified claims (with a non-empty `sub`). */
export function verifyEs256Claims(
  jws: ParsedJws,
  key: KeyObject,
  rules: Es256ClaimRules,
): Record<string, unknown> & { sub: string } {
  const signature = BASE64URL.test(jws.signaturePart) ? Buffer.from(jws.signaturePart, 'base64url') : Buffer.alloc(0);
  const signatureValid =
    signature.length === 64 &&
    verify('sha256', Buffer.from(jws.signingInput), { key, dsaEncoding: 'ieee-p1363' }, signature);
  if (!signatureValid) {
    throw unauthorized(`Access token signature is invalid${rules.signer ? ` (${rules.signer})` : ''}`);
  }

  const claims = decodeSegment(jws.payloadPart, 'payload');
  if (claims.iss !== rules.issuer) {
    throw unauthorized(
      `Access token issuer ${JSON.stringify(claims.iss ?? null)} is not ${JSON.stringify(rules.issuer)}`,
    );
  }
  const audienceOk = Array.isArray(claims.aud) ? claims.aud.includes(rules.audience) : claims.aud === rules.audience;
  if (!audienceOk) {
    throw unauthorized(
      `Access token audience ${JSON.stringify(claims.aud ?? null)} does not include ${JSON.stringify(rules.audience)}`,
    );
  }
  if (typeof claims.sub !== 'string' || claims.sub.length === 0) throw unauthorized('Access token has no subject');
  const leeway = rules.leewaySeconds;
  const now = rules.clock.now().getTime() / 1000;
  if (!isNumericDate(claims.exp)) throw unauthorized('Access token has no valid exp claim');
  if (now >= claims.exp + leeway) {
    throw unauthorized(`Access token expired at ${new Date(claims.exp * 1000).toISOString()}`);
  }
  if (claims.nbf !== undefined) {
    if (!isNumericDate(claims.nbf)) throw unauthorized('Access token nbf claim is not a number');
    if (now < claims.nbf - leeway) {
      throw unauthorized(`Access token is not valid before ${new Date(claims.nbf * 1000).toISOString()}`);
    }
  }
  if (!isNumericDate(claims.iat)) throw unauthorized('Access token has no valid iat claim');
  if (claims.iat > now + leeway) throw unauthorized('Access token was issued in the future (iat)');
  if (claims.iat > claims.exp) throw unauthorized('Access token iat is after its exp');
  return claims as Record<string, unknown> & { sub: string };
}

function decodeSegment(segment: string, what: 'header' | 'payload'): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw unauthorized(`Access token is malformed: its ${what} is not base64url JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unauthorized(`Access token is malformed: its ${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
