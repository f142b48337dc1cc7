import { createHmac, generateKeyPairSync } from 'node:crypto';
import { AppError, createManualClock } from '@pts/shared';
import { getAddress } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakePrivyServer, type FakePrivyUser, startFakePrivyServer } from '../../../test/fakes/privy-server.ts';
import { createPrivyApiClient } from '../wallets/privy-wallet-provider.ts';
import { createPrivyIdentityProvider, defaultPrivyJwksUrl } from './privy-identity-provider.ts';

const clock = createManualClock('2026-03-01T12:00:00Z');
const now = () => Math.floor(clock.now().getTime() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

let privy: FakePrivyServer;
let user: FakePrivyUser;

function provider(overrides: Partial<Parameters<typeof createPrivyIdentityProvider>[0]> = {}) {
  return createPrivyIdentityProvider({
    appId: privy.appId,
    client: createPrivyApiClient({ appId: privy.appId, appSecret: privy.appSecret, apiUrl: privy.url }),
    clock,
    jwksUrl: defaultPrivyJwksUrl(privy.url, privy.appId),
    ...overrides,
  });
}

async function expectUnauthorized(promise: Promise<unknown>, message: RegExp) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('UNAUTHORIZED');
  expect((error as AppError).status).toBe(401);
  expect((error as AppError).message).toMatch(message);
}

beforeAll(async () => {
  privy = await startFakePrivyServer();
});

afterAll(async () => {
  await privy?.close();
});

beforeEach(() => {
  user = privy.addUser([{ type: 'email', address: `ada-${Math.random().toString(36).slice(2)}@example.com` }]);
});

const walletOf = (u: FakePrivyUser) => getAddress(String(u.linked_accounts.find((a) => a.type === 'wallet')!.address));
const token = (overrides: Partial<Parameters<FakePrivyServer['mintAccessToken']>[0]> = {}) =>
  privy.mintAccessToken({ userId: user.id, issuedAt: now(), ...overrides });

describe('Privy identity provider', () => {
  it('verifies a Privy access token (JWKS) and answers the user with its Privy wallets and email', async () => {
    const identity = provider();
    const verified = await identity.verifyAccessToken(token());
    expect(verified).toEqual({
      userId: user.id,
      email: user.linked_accounts[0]!.address,
      walletAddresses: [walletOf(user)],
    });
    expect(identity.kind).toBe('privy');
    expect(await identity.ping()).toBe(true);
  });

  it('verifies with the PEM verification key without fetching the JWKS', async () => {
    const before = privy.jwksRequests;
    const identity = provider({ verificationKey: privy.verificationKeyPem(), jwksUrl: undefined });
    expect((await identity.verifyAccessToken(token())).userId).toBe(user.id);
    // A key pasted into an env file with literal "\n" works too.
    const escaped = provider({ verificationKey: privy.verificationKeyPem().replace(/\n/g, '\\n'), jwksUrl: undefined });
    expect((await escaped.verifyAccessToken(token())).userId).toBe(user.id);
    expect(privy.jwksRequests).toBe(before);
  });

  it('accepts a token expired less than the 30 s leeway ago, refuses one expired longer ago', async () => {
    const identity = provider();
    const issuedAt = now() - 3600 - 20;
    expect((await identity.verifyAccessToken(token({ issuedAt }))).userId).toBe(user.id);
    await expectUnauthorized(identity.verifyAccessToken(token({ issuedAt: now() - 3600 - 31 })), /expired at/);
  });

  const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const cases: { name: string; make: () => string; message: RegExp }[] = [
    { name: 'forged (signed with another key)', make: () => token({ key: otherKey }), message: /signature is invalid/ },
    {
      name: 'payload changed after signing',
      make: () => {
        const [h, , s] = token().split('.');
        return `${h}.${b64({ iss: 'privy.io', aud: privy.appId, sub: 'did:privy:someoneelse', sid: 's', iat: now(), exp: now() + 60 })}.${s}`;
      },
      message: /signature is invalid/,
    },
    { name: 'expired', make: () => token({ issuedAt: now() - 7200 }), message: /expired at/ },
    {
      name: 'wrong audience',
      make: () => token({ claims: { aud: 'another-app' } }),
      message: /audience "another-app"/,
    },
    { name: 'wrong issuer', make: () => token({ claims: { iss: 'evil.example' } }), message: /issuer "evil.example"/ },
    {
      name: 'not yet valid (nbf)',
      make: () => token({ claims: { nbf: now() + 120 } }),
      message: /not valid before/,
    },
    { name: 'issued in the future', make: () => token({ issuedAt: now() + 120 }), message: /issued in the future/ },
    { name: 'no sid', make: () => token({ claims: { sid: undefined } }), message: /session id/ },
    { name: 'no exp', make: () => token({ claims: { exp: undefined } }), message: /no valid exp/ },
    {
      name: 'alg none',
      make: () =>
        `${b64({ alg: 'none', typ: 'JWT', kid: privy.kid })}.${b64({ iss: 'privy.io', aud: privy.appId, sub: user.id, sid: 's', iat: now(), exp: now() + 60 })}.`,
      message: /algorithm "none" is not accepted; only ES256/,
    },
    {
      name: 'HS256 signed with the public key as secret',
      make: () => {
        const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: privy.kid })}.${b64({ iss: 'privy.io', aud: privy.appId, sub: user.id, sid: 's', iat: now(), exp: now() + 60 })}`;
        return `${input}.${createHmac('sha256', privy.verificationKeyPem()).update(input).digest('base64url')}`;
      },
      message: /algorithm "HS256" is not accepted/,
    },
    { name: 'RS256 header', make: () => token({ header: { alg: 'RS256' } }), message: /algorithm "RS256"/ },
    {
      name: 'unknown kid',
      make: () => token({ header: { kid: 'not-a-privy-key' } }),
      message: /key id "not-a-privy-key"/,
    },
    { name: 'no kid', make: () => token({ header: { kid: undefined } }), message: /key id null is missing/ },
    { name: 'garbage', make: () => 'not-a-jwt', message: /malformed/ },
    { name: 'empty', make: () => '', message: /missing/ },
  ];
  for (const { name, make, message } of cases) {
    it(`refuses a token: ${name}`, async () => {
      await expectUnauthorized(provider().verifyAccessToken(make()), message);
    });
  }

  it('refetches the JWKS for an unknown kid (key rotation), at most once per cooldown', async () => {
    const identity = provider();
    await identity.verifyAccessToken(token());
    const fetched = privy.jwksRequests;
    const oldKid = privy.kid;
    privy.rotateKey();
    try {
      expect((await identity.verifyAccessToken(token())).userId).toBe(user.id);
      expect(privy.jwksRequests).toBe(fetched + 1);
      // Forged kids inside the cooldown cost no further fetches.
      for (let i = 0; i < 5; i += 1) {
        await expectUnauthorized(identity.verifyAccessToken(token({ header: { kid: `forged-${i}` } })), /key id/);
      }
      expect(privy.jwksRequests).toBe(fetched + 1);
      await expectUnauthorized(identity.verifyAccessToken(token({ header: { kid: oldKid } })), /key id/);
    } finally {
      clock.advance(31_000);
    }
  });

  it('reads the user from Privy once per cache period, and refuses tokens of users Privy does not know', async () => {
    const identity = provider();
    const reads = () => privy.requests.filter((r) => r.method === 'GET' && r.path === `/v1/users/${user.id}`).length;
    await identity.verifyAccessToken(token());
    await identity.verifyAccessToken(token());
    expect(reads()).toBe(1);
    clock.advance(31_000);
    await identity.verifyAccessToken(token());
    expect(reads()).toBe(2);

    await expectUnauthorized(
      identity.verifyAccessToken(token({ userId: 'did:privy:cdoesnotexist0000000000000' })),
      /does not exist in this Privy app/,
    );
  });

  it('answers 503 (not 401) when Privy cannot be reached for the keys or the user', async () => {
    const down = provider({ jwksUrl: 'http://127.0.0.1:9/jwks.json', jwksTimeoutMs: 500 });
    const error = await down.verifyAccessToken(token()).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });

    const identity = provider();
    privy.failing = true;
    try {
      const failed = await identity.verifyAccessToken(token()).catch((thrown: unknown) => thrown);
      expect(failed).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(await identity.ping()).toBe(false);
    } finally {
      privy.failing = false;
    }
    // The failure is not cached.
    expect((await identity.verifyAccessToken(token())).userId).toBe(user.id);
  });

  it('refuses a configuration without a key source, and a non-P-256 PEM', () => {
    expect(() => provider({ jwksUrl: undefined })).toThrow(/verification key or a JWKS URL/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' });
    expect(() => provider({ verificationKey: rsa.toString() })).toThrow(/ES256/);
  });
});
