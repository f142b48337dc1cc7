import type { AddressInfo } from 'node:net';
import { createManualClock } from '@pts/shared';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { createErrorHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { ensureUsers } from '../users/users.repository.ts';
import { createLocalWalletProvider } from '../wallets/wallet-provider.ts';
import { identityAdminRoutes, jwksRoutes } from './identity.routes.ts';
import { createUserTokenService } from './identity.service.ts';
import { createLocalTokenIssuer } from './local-token-issuer.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const ADMIN_TOKEN = 'pts_admin_test_token';
const wallets = createLocalWalletProvider(MNEMONIC);
const clock = createManualClock('2026-01-01T00:00:00Z');
const issuer = createLocalTokenIssuer({ issuer: 'http://localhost:3000', audience: 'pts-local', clock });
const logger = pino({ level: 'silent' });

let database: TestDatabase;
let server: ReturnType<ReturnType<typeof express>['listen']>;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const app = express();
  app.use(routerFrom(jwksRoutes({ issuer })));
  app.use(
    '/admin',
    routerFrom(
      identityAdminRoutes({
        userTokens: createUserTokenService({ db: database.db, wallets, issuer }),
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  app.use(createErrorHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.close();
  await database?.close();
});

async function postToken(body: unknown, token: string | null = ADMIN_TOKEN) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${baseUrl}/admin/users/token`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('POST /admin/users/token', () => {
  it('issues a verifying token whose wallet is the one the event path gives the same users row', async () => {
    const res = await postToken({ email: '  Ada@Example.com ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, expiresAt: '2026-01-01T01:00:00.000Z' });
    const claims = issuer.verifyAccessToken(res.body.token as string);

    const row = await database.db
      .selectFrom('users')
      .select(['id', 'wallet_address', 'idp_user_id'])
      .where('email', '=', 'ada@example.com')
      .executeTakeFirstOrThrow();
    const expected = await wallets.walletForUser({ userId: row.id, email: 'ada@example.com' });
    expect(res.body.walletAddress).toBe(expected.address);
    expect(row.wallet_address).toBe(expected.address);
    expect(claims).toMatchObject({
      sub: expected.idpUserId,
      email: 'ada@example.com',
      wallet_address: expected.address,
    });

    // Asking again gives the same wallet and user.
    const again = await postToken({ email: 'ada@example.com' });
    expect(again.body.walletAddress).toBe(expected.address);
    expect(issuer.verifyAccessToken(again.body.token as string).sub).toBe(expected.idpUserId);
  });

  it('gives an existing user (created by the event path, no wallet yet) the wallet of its row', async () => {
    const user = (await ensureUsers(database.db, ['bob@example.com'])).get('bob@example.com')!;
    const res = await postToken({ email: 'bob@example.com' });
    expect(res.status).toBe(200);
    expect(res.body.walletAddress).toBe(
      (await wallets.walletForUser({ userId: user.id, email: 'bob@example.com' })).address,
    );
  });

  it('answers 401 without the admin token, and with a wrong one', async () => {
    const missing = await postToken({ email: 'eve@example.com' }, null);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
    const wrong = await postToken({ email: 'eve@example.com' }, 'nope');
    expect(wrong.status).toBe(401);
    const eve = await database.db.selectFrom('users').select('id').where('email', '=', 'eve@example.com').execute();
    expect(eve).toHaveLength(0);
  });

  it('answers 400 for an invalid email', async () => {
    const res = await postToken({ email: 'not-an-email' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(res.body.error).toMatch(/email/);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('serves the public key only', async () => {
    const res = await fetch(`${baseUrl}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: issuer.kid, alg: 'ES256', use: 'sig' });
    expect(body.keys[0]).not.toHaveProperty('d');
    expect(Object.keys(body.keys[0]!).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });
});
