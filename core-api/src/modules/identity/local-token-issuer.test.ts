import { createHmac, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, createManualClock } from '@pts/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalTokenIssuer, loadOrCreateTokenKey, TOKEN_KEY_FILE } from './local-token-issuer.ts';

const ISSUER = 'http://localhost:3000';
const AUDIENCE = 'pts-local';
const clock = createManualClock('2026-01-01T00:00:00Z');
const issuer = createLocalTokenIssuer({ issuer: ISSUER, audience: AUDIENCE, clock, ttlSeconds: 3600 });
const input = { subject: 'did:pts:local:7', email: 'ada@example.com', walletAddress: `0x${'ab'.repeat(20)}` };

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(clock.now().getTime() / 1000);
const claims = (overrides: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: input.subject,
  email: input.email,
  wallet_address: input.walletAddress,
  iat: now(),
  nbf: now(),
  exp: now() + 600,
  ...overrides,
});
const header = (overrides: Record<string, unknown> = {}) => ({
  alg: 'ES256',
  typ: 'JWT',
  kid: issuer.kid,
  ...overrides,
});

/** A token signed with `key` (ES256, raw r||s). */
function es256(h: unknown, p: unknown, key: KeyObject): string {
  const signingInput = `${b64(h)}.${b64(p)}`;
  return `${signingInput}.${sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The issuer's own private key, to craft otherwise-valid tokens with bad claims. */
const issuerKey = createPrivateKey({ key: issuer.exportPrivateJwk(), format: 'jwk' });
const ownKey = (): KeyObject => issuerKey;

function expectUnauthorized(token: string, message: RegExp) {
  let thrown: unknown;
  try {
    issuer.verifyAccessToken(token);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(AppError);
  expect((thrown as AppError).code).toBe('UNAUTHORIZED');
  expect((thrown as AppError).status).toBe(401);
  expect((thrown as AppError).message).toMatch(message);
}

describe('local token issuer', () => {
  it('issues an ES256 token that verifies, with the expected header and claims', () => {
    const issued = issuer.issue(input);
    const [h] = issued.token.split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({ alg: 'ES256', typ: 'JWT', kid: issuer.kid });
    const verified = issuer.verifyAccessToken(issued.token);
    expect(verified).toMatchObject({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: input.subject,
      email: input.email,
      wallet_address: input.walletAddress,
      iat: now(),
      exp: now() + 3600,
    });
    expect(issued.expiresAt.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(issuer.issueAccessToken(input).split('.')).toHaveLength(3);
  });

  it('accepts an audience array containing the audience and a token inside the leeway', () => {
    expect(issuer.verifyAccessToken(es256(header(), claims({ aud: ['other', AUDIENCE] }), ownKey())).sub).toBe(
      input.subject,
    );
    expect(
      issuer.verifyAccessToken(
        es256(header(), claims({ iat: now() - 600, nbf: now() - 600, exp: now() - 10 }), ownKey()),
      ).sub,
    ).toBe(input.subject);
  });

  it('serves only the public key in its JWKS', () => {
    const { keys } = issuer.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: issuer.kid, alg: 'ES256', use: 'sig' });
    expect(keys[0]).not.toHaveProperty('d');
  });

  it('verifies with the same key after export and import', () => {
    const again = createLocalTokenIssuer({
      privateJwk: issuer.exportPrivateJwk(),
      issuer: ISSUER,
      audience: AUDIENCE,
      clock,
    });
    expect(again.kid).toBe(issuer.kid);
    expect(again.verifyAccessToken(issuer.issueAccessToken(input)).sub).toBe(input.subject);
  });

  const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const valid = () => issuer.issueAccessToken(input);
  const cases: { name: string; token: () => string; message: RegExp }[] = [
    {
      name: 'forged signature (payload changed after signing)',
      token: () => {
        const [h, , s] = valid().split('.');
        return `${h}.${b64(claims({ sub: 'did:pts:local:1' }))}.${s}`;
      },
      message: /signature is invalid/,
    },
    {
      name: 'flipped signature bytes',
      token: () => {
        const [h, p, s] = valid().split('.');
        const sig = Buffer.from(s!, 'base64url');
        sig[10] = (sig[10] ?? 0) ^ 0xff;
        return `${h}.${p}.${sig.toString('base64url')}`;
      },
      message: /signature is invalid/,
    },
    {
      name: 'signed with another key',
      token: () => es256(header(), claims(), otherKey),
      message: /signature is invalid/,
    },
    {
      name: 'alg none',
      token: () => `${b64(header({ alg: 'none' }))}.${b64(claims())}.`,
      message: /algorithm "none" is not accepted/,
    },
    {
      name: 'HS256 with the public key as secret',
      token: () => {
        const signingInput = `${b64(header({ alg: 'HS256' }))}.${b64(claims())}`;
        const secret = JSON.stringify(issuer.jwks().keys[0]);
        return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
      },
      message: /algorithm "HS256" is not accepted; only ES256/,
    },
    {
      name: 'RS256 header',
      token: () => es256(header({ alg: 'RS256' }), claims(), ownKey()),
      message: /algorithm "RS256"/,
    },
    { name: 'no alg', token: () => es256(header({ alg: undefined }), claims(), ownKey()), message: /algorithm null/ },
    {
      name: 'wrong kid',
      token: () => es256(header({ kid: 'someone-else' }), claims(), ownKey()),
      message: /key id "someone-else"/,
    },
    { name: 'missing kid', token: () => es256(header({ kid: undefined }), claims(), ownKey()), message: /key id null/ },
    {
      name: 'wrong iss',
      token: () => es256(header(), claims({ iss: 'https://evil.example' }), ownKey()),
      message: /issuer "https:\/\/evil.example" is not/,
    },
    {
      name: 'wrong aud',
      token: () => es256(header(), claims({ aud: 'other-app' }), ownKey()),
      message: /audience "other-app" does not include "pts-local"/,
    },
    {
      name: 'aud array without us',
      token: () => es256(header(), claims({ aud: ['a', 'b'] }), ownKey()),
      message: /audience \["a","b"\]/,
    },
    { name: 'no exp', token: () => es256(header(), claims({ exp: undefined }), ownKey()), message: /no valid exp/ },
    {
      name: 'nbf in the future',
      token: () => es256(header(), claims({ nbf: now() + 120 }), ownKey()),
      message: /not valid before/,
    },
    {
      name: 'iat in the future',
      token: () => es256(header(), claims({ iat: now() + 120, nbf: undefined }), ownKey()),
      message: /issued in the future/,
    },
    { name: 'no sub', token: () => es256(header(), claims({ sub: '' }), ownKey()), message: /no subject/ },
    { name: 'malformed: two segments', token: () => 'abc.def', message: /malformed: expected three/ },
    { name: 'malformed: garbage', token: () => 'not a token', message: /malformed/ },
    {
      name: 'malformed: header not JSON',
      token: () => `${b64('hello')}.${b64(claims())}.AAAA`,
      message: /header is not base64url JSON/,
    },
    {
      name: 'malformed: payload an array',
      token: () => es256(header(), [1, 2], ownKey()),
      message: /payload is not a JSON object/,
    },
    { name: 'empty', token: () => '', message: /missing/ },
    {
      name: 'crit header',
      token: () => es256(header({ crit: ['exp'] }), claims(), ownKey()),
      message: /critical header/,
    },
  ];

  it.each(cases)('refuses $name with a 401 saying what is wrong', ({ token, message }) => {
    expectUnauthorized(token(), message);
  });

  it('refuses an expired token once the clock passes exp plus the leeway', () => {
    const token = issuer.issueAccessToken(input);
    clock.advance(3600 * 1000 + 20 * 1000);
    expect(issuer.verifyAccessToken(token).sub).toBe(input.subject); // within the 30 s leeway
    clock.advance(15 * 1000);
    expectUnauthorized(token, /expired at 2026-01-01T01:00:00.000Z/);
  });

  it('refuses options that would weaken it', () => {
    expect(() => createLocalTokenIssuer({ issuer: '', audience: AUDIENCE, clock })).toThrow(/issuer/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    expect(() => createLocalTokenIssuer({ privateJwk: rsa, issuer: ISSUER, audience: AUDIENCE, clock })).toThrow(
      /P-256/,
    );
  });
});

describe('loadOrCreateTokenKey', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pts-idp-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the key once (mode 0600) and returns the same key afterwards', () => {
    const first = loadOrCreateTokenKey(join(dir, 'data'));
    const path = join(dir, 'data', TOKEN_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(first);
    expect(first).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(loadOrCreateTokenKey(join(dir, 'data'))).toEqual(first);
    const a = createLocalTokenIssuer({ privateJwk: first, issuer: ISSUER, audience: AUDIENCE, clock });
    const b = createLocalTokenIssuer({
      privateJwk: loadOrCreateTokenKey(join(dir, 'data')),
      issuer: ISSUER,
      audience: AUDIENCE,
      clock,
    });
    expect(b.verifyAccessToken(a.issueAccessToken(input)).email).toBe(input.email);
  });
});
