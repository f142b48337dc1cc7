import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '@pts/shared';
import { clampLeeway, ES256, parseEs256Jws, unauthorized, verifyEs256Claims } from '../../security/es256-jwt.ts';

const ALG = ES256;
/** File in the data dir holding the private signing key as a JWK (mode 0600). */
export const TOKEN_KEY_FILE = 'idp-signing-key.json';

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
  const leeway = clampLeeway(options.leewaySeconds);

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
    const jws = parseEs256Jws(token);
    if (jws.header.kid !== kid) {
      throw unauthorized(`Access token key id ${JSON.stringify(jws.header.kid ?? null)} is not this issuer's key`);
    }
    return verifyEs256Claims(jws, publicKey, { clock, leewaySeconds: leeway, issuer, audience }) as AccessTokenClaims;
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
