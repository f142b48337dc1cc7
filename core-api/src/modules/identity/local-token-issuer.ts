import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, type Clock } from '@pts/shared';

/** The only signing algorithm issued and accepted: ECDSA P-256 with SHA-256 (RFC 7518 3.4). */
const ALG = 'ES256';
/** Clock skew tolerated on `exp`, `nbf` and `iat`; never more than this. */
const MAX_LEEWAY_SECONDS = 30;
/** File in the data dir holding the private signing key as a JWK (mode 0600). */
export const TOKEN_KEY_FILE = 'idp-signing-key.json';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Claims of a pts access token. */
export interface AccessTokenClaims {
  iss: string;
  aud: string | string[];
  /** User id (DID), e.g. `did:pts:local:42`. */
  sub: string;
  email: string;
  wallet_address: string;
  iat: number;
  nbf?: number;
  exp: number;
  jti?: string;
  [claim: string]: unknown;
}

export interface AccessTokenInput {
  /** User id / DID. */
  subject: string;
  email: string;
  walletAddress: string;
}

export interface IssuedAccessToken {
  token: string;
  expiresAt: Date;
  claims: AccessTokenClaims;
}

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: typeof ALG;
  use: 'sig';
}

export interface LocalTokenIssuer {
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  /** Signs an access token; the compact JWS. */
  issueAccessToken(input: AccessTokenInput): string;
  /** Same as issueAccessToken, with the expiry and claims alongside. */
  issue(input: AccessTokenInput): IssuedAccessToken;
  /** The JWKS document served at `/.well-known/jwks.json`: the public key only. */
  jwks(): { keys: PublicJwk[] };
  /** The token's claims; anything wrong with it is a 401 UNAUTHORIZED saying what. */
  verifyAccessToken(token: string): AccessTokenClaims;
  /** The private key as a JWK, to persist (see loadOrCreateTokenKey). */
  exportPrivateJwk(): JsonWebKey;
}

export interface LocalTokenIssuerOptions {
  /** P-256 private key; a fresh one is generated when absent. */
  privateJwk?: JsonWebKey;
  issuer: string;
  audience: string;
  clock: Clock;
  ttlSeconds?: number;
  /** Clock skew tolerated, in seconds (default and maximum 30). */
  leewaySeconds?: number;
}

/**
 * Local identity provider's token issuer: ES256 access tokens signed with one P-256 key, verified with
 * the algorithm pinned (no `none`, no HMAC with the public key, nothing else) and the key id matched.
 */
export function createLocalTokenIssuer(options: LocalTokenIssuerOptions): LocalTokenIssuer {
  const { issuer, audience, clock } = options;
  const ttlSeconds = options.ttlSeconds ?? 3600;
  if (!issuer) throw new Error('token issuer needs an issuer');
  if (!audience) throw new Error('token issuer needs an audience');
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new Error(`ttlSeconds ${ttlSeconds} must be > 0`);
  const leeway = Math.min(Math.max(options.leewaySeconds ?? MAX_LEEWAY_SECONDS, 0), MAX_LEEWAY_SECONDS);

  const privateKey = options.privateJwk ? importPrivateJwk(options.privateJwk) : generateTokenKey();
  const publicKey = createPublicKey(privateKey);
  const publicJwk = publicKey.export({ format: 'jwk' });
  const kid = jwkThumbprint(publicJwk);
  const publicKeyJwk: PublicJwk = {
    kty: publicJwk.kty,
    crv: publicJwk.crv,
    x: publicJwk.x,
    y: publicJwk.y,
    kid,
    alg: ALG,
    use: 'sig',
  };

  const issue = (input: AccessTokenInput): IssuedAccessToken => {
    if (!input.subject) throw new Error('access token needs a subject');
    const now = Math.floor(clock.now().getTime() / 1000);
    const claims: AccessTokenClaims = {
      iss: issuer,
      aud: audience,
      sub: input.subject,
      email: input.email,
      wallet_address: input.walletAddress,
      iat: now,
      nbf: now,
      exp: now + ttlSeconds,
      jti: randomBytes(16).toString('base64url'),
    };
    const header = { alg: ALG, typ: 'JWT', kid };
    const signingInput = `${encodeSegment(header)}.${encodeSegment(claims)}`;
    const signature = sign('sha256', Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return {
      token: `${signingInput}.${signature.toString('base64url')}`,
      expiresAt: new Date(claims.exp * 1000),
      claims,
    };
  };

  const verifyAccessToken = (token: string): AccessTokenClaims => {
    if (typeof token !== 'string' || token.length === 0) throw unauthorized('Access token is missing');
    const parts = token.split('.');
    if (parts.length !== 3 || !BASE64URL.test(parts[0] ?? '') || !BASE64URL.test(parts[1] ?? '')) {
      throw unauthorized('Access token is malformed: expected three base64url segments (header.payload.signature)');
    }
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    const header = decodeSegment(headerPart, 'header');
    if (header.alg !== ALG) {
      throw unauthorized(`Access token algorithm ${JSON.stringify(header.alg ?? null)} is not accepted; only ES256`);
    }
    if (header.typ !== undefined && header.typ !== 'JWT') {
      throw unauthorized(`Access token type ${JSON.stringify(header.typ)} is not accepted; expected JWT`);
    }
    if (header.crit !== undefined)
      throw unauthorized('Access token has critical header parameters; none are supported');
    if (header.kid !== kid) {
      throw unauthorized(`Access token key id ${JSON.stringify(header.kid ?? null)} is not this issuer's key`);
    }
    if (!BASE64URL.test(signaturePart)) throw unauthorized('Access token signature is missing or not base64url');
    const signature = Buffer.from(signaturePart, 'base64url');
    const signatureValid =
      signature.length === 64 &&
      verify(
        'sha256',
        Buffer.from(`${headerPart}.${payloadPart}`),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        signature,
      );
    if (!signatureValid) throw unauthorized('Access token signature is invalid');

    const claims = decodeSegment(payloadPart, 'payload');
    if (claims.iss !== issuer) {
      throw unauthorized(`Access token issuer ${JSON.stringify(claims.iss ?? null)} is not ${JSON.stringify(issuer)}`);
    }
    const audienceOk = Array.isArray(claims.aud) ? claims.aud.includes(audience) : claims.aud === audience;
    if (!audienceOk) {
      throw unauthorized(
        `Access token audience ${JSON.stringify(claims.aud ?? null)} does not include ${JSON.stringify(audience)}`,
      );
    }
    if (typeof claims.sub !== 'string' || claims.sub.length === 0) throw unauthorized('Access token has no subject');
    const now = clock.now().getTime() / 1000;
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
    return claims as AccessTokenClaims;
  };

  return {
    issuer,
    audience,
    kid,
    issue,
    issueAccessToken: (input) => issue(input).token,
    jwks: () => ({ keys: [{ ...publicKeyJwk }] }),
    verifyAccessToken,
    exportPrivateJwk: () => privateKey.export({ format: 'jwk' }),
  };
}

/**
 * The private signing key from `<dataDir>/idp-signing-key.json`, generated (mode 0600) on first use so
 * tokens stay valid across restarts.
 */
export function loadOrCreateTokenKey(dataDir: string): JsonWebKey {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, TOKEN_KEY_FILE);
  const read = (): JsonWebKey => {
    let jwk: JsonWebKey;
    try {
      jwk = JSON.parse(readFileSync(path, 'utf8')) as JsonWebKey;
    } catch (error) {
      throw new Error(`cannot read the token signing key ${path}: ${(error as Error).message}`, { cause: error });
    }
    importPrivateJwk(jwk, path);
    return jwk;
  };
  try {
    return read();
  } catch (error) {
    if ((error as { cause?: NodeJS.ErrnoException }).cause?.code !== 'ENOENT') throw error;
  }
  const jwk = generateTokenKey().export({ format: 'jwk' });
  try {
    writeFileSync(path, `${JSON.stringify(jwk)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return read();
    throw error;
  }
  return jwk;
}

function generateTokenKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

function importPrivateJwk(jwk: JsonWebKey, where = 'privateJwk'): KeyObject {
  if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') {
    throw new Error(`${where} is not a P-256 private key JWK (kty EC, crv P-256, with d)`);
  }
  const key = createPrivateKey({ key: jwk, format: 'jwk' });
  if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error(`${where} is not on the P-256 curve`);
  return key;
}

/** RFC 7638 JWK thumbprint (SHA-256) of an EC public key: the key id. */
function jwkThumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

function encodeSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
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

function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message);
}
