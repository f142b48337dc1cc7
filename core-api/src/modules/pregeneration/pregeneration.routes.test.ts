import type { AddressInfo } from 'node:net';
import { OAUTH_PROVIDERS } from '@pts/shared';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import express from 'express';
import pino from 'pino';
import { bytesToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { createErrorHandler } from '../../http/errors.ts';
import { createRateLimit } from '../../http/rate-limit.ts';
import { routerFrom } from '../../http/route-table.ts';
import { createLocalWalletProvider } from '../wallets/wallet-provider.ts';
import { type PregenerationRouterDeps, pregenerationRoutes } from './pregeneration.routes.ts';
import { createPregenerationService, type IdentityVerifier } from './pregeneration.service.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const BRAND = '0x00000000000000000000000000000000000000b1';
const OTHER_BRAND = '0x00000000000000000000000000000000000000b2';
const UNKNOWN_BRAND = '0x00000000000000000000000000000000000000ff';

const wallets = createLocalWalletProvider(MNEMONIC);
const logger = pino({ level: 'silent' });
let database: TestDatabase;
const servers: { close(): void }[] = [];

/** Starts the router in a small app of its own; returns a poster for it. */
async function startApp({
  wallets: walletProvider = wallets,
  ...overrides
}: Partial<PregenerationRouterDeps> & { wallets?: typeof wallets } = {}) {
  const app = express();
  const pregeneration = createPregenerationService({ db: database.db, wallets: walletProvider });
  app.use('/pts-api', routerFrom(pregenerationRoutes({ pregeneration, logger, ...overrides })));
  app.use(createErrorHandler(logger));
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pts-api/pregenerate-user`;
  return async (body: unknown, raw?: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: raw ?? JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
}

let post: Awaited<ReturnType<typeof startApp>>;

async function insertBrand(address: string) {
  await database.db
    .insertInto('brands')
    .values({
      address,
      name: `Brand ${address.slice(-2)}`,
      website_domain: 'brand.example',
      security_key_hash: `sk-${address}`,
      security_key_encrypted: 'x',
      api_key_hash: `ak-${address}`,
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
}

beforeAll(async () => {
  database = await createTestDatabase();
  await insertBrand(BRAND);
  await insertBrand(OTHER_BRAND);
  post = await startApp();
});

afterAll(async () => {
  for (const server of servers) server.close();
  await database?.close();
});

const discordId = (n: number) => `1${String(n).padStart(17, '0')}`;

describe('POST /pts-api/pregenerate-user', () => {
  it('creates a wallet once per identity and returns it again (created_new)', async () => {
    const body = { brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: discordId(1), oauth_username: 'jane' };
    const first = await post(body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      oauth_provider: 'discord',
      oauth_user_id: discordId(1),
      created_new: true,
    });
    expect(first.body.wallet_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(first.body.idp_user_id).toMatch(/^did:pts:local:identity:\d+$/);
    expect(first.body.message).toContain('Only the user ID format was checked');
    expect(Array.isArray(first.body.next_steps)).toBe(true);
    expect(Object.keys(first.body).sort()).toEqual(
      [
        'success',
        'wallet_address',
        'idp_user_id',
        'oauth_provider',
        'oauth_user_id',
        'created_new',
        'message',
        'next_steps',
      ].sort(),
    );

    const again = await post({ ...body, brand_id: OTHER_BRAND.toUpperCase().replace('0X', '0x') });
    expect(again.status).toBe(200);
    expect(again.body.created_new).toBe(false);
    expect(again.body.wallet_address).toBe(first.body.wallet_address);
    expect(again.body.idp_user_id).toBe(first.body.idp_user_id);
    expect(again.body.message).toContain('Existing wallet');
  });

  it("derives identity wallets at m/44'/60'/1'/0/<id>, apart from email users", async () => {
    const res = await post({ brand_id: BRAND, oauth_provider: 'github', oauth_user_id: '583231' });
    const row = await database.db
      .selectFrom('oauth_identities')
      .selectAll()
      .where('provider', '=', 'github')
      .where('subject', '=', '583231')
      .executeTakeFirstOrThrow();
    const key = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(`m/44'/60'/1'/0/${row.id}`);
    const expected = privateKeyToAccount(bytesToHex(key.privateKey!)).address.toLowerCase();
    expect(res.body.wallet_address).toBe(expected);
    expect(row.wallet_address).toBe(expected);
    // The email branch with the same index is a different wallet, and email wallets are unchanged.
    const user = await wallets.walletForUser({ userId: row.id, email: '' });
    expect(user.address).not.toBe(expected);
    const userKey = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(`m/44'/60'/0'/0/${row.id}`);
    expect(user.address).toBe(privateKeyToAccount(bytesToHex(userKey.privateKey!)).address.toLowerCase());
  });

  it('gives different providers for the same id different wallets', async () => {
    const id = '123456789012345678';
    const seen = new Set<unknown>();
    for (const provider of ['discord', 'twitter', 'github', 'google', 'telegram', 'instagram']) {
      const userId = provider === 'google' ? `1${id}` : provider === 'telegram' ? id.slice(0, 12) : id;
      const res = await post({ brand_id: BRAND, oauth_provider: provider, oauth_user_id: userId });
      expect(res.status, `${provider}: ${JSON.stringify(res.body)}`).toBe(200);
      seen.add(res.body.wallet_address);
    }
    for (const provider of ['spotify', 'tiktok']) {
      const res = await post({ brand_id: BRAND, oauth_provider: provider, oauth_user_id: 'abc123XYZ' });
      expect(res.status).toBe(200);
      seen.add(res.body.wallet_address);
    }
    expect(seen.size).toBe(8);
  });

  it('accepts provider names in any case and trims ids', async () => {
    const res = await post({ brand_id: BRAND, oauth_provider: ' Discord ', oauth_user_id: ` ${discordId(1)} ` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ oauth_provider: 'discord', oauth_user_id: discordId(1), created_new: false });
  });

  it('400 missing fields: {error, required}', async () => {
    for (const body of [{}, { brand_id: BRAND }, { brand_id: BRAND, oauth_provider: 'discord' }, null, [], 'x']) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['error', 'required']);
      expect(res.body.required).toEqual(['brand_id', 'oauth_provider', 'oauth_user_id']);
    }
    const partial = await post({ brand_id: BRAND, oauth_user_id: discordId(2) });
    expect(partial.body.error).toContain('oauth_provider');
  });

  it('400 invalid provider: {error, valid_providers} with all eight in the spec order', async () => {
    const res = await post({ brand_id: BRAND, oauth_provider: 'myspace', oauth_user_id: '1' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'valid_providers']);
    expect(res.body.valid_providers).toEqual([
      'discord',
      'twitter',
      'github',
      'google',
      'telegram',
      'spotify',
      'instagram',
      'tiktok',
    ]);
    expect(res.body.valid_providers).toEqual([...OAUTH_PROVIDERS]);
  });

  it('400 invalid chat-platform id: {error, details, example}', async () => {
    for (const id of ['1234567890123456', '123456789012345678901', 'abcdefghijklmnopq', 123456789012345]) {
      const res = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: id });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['details', 'error', 'example']);
      expect(res.body.example).toMatch(/^\d{17,20}$/);
    }
    for (const id of ['12345678901234567', '12345678901234567890']) {
      const res = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: id });
      expect(res.status, id).toBe(200);
    }
  });

  it('400 invalid credentials for other providers: {error, hint, provider}', async () => {
    const cases: [string, string][] = [
      ['twitter', '@jack'],
      ['github', 'octocat'],
      ['google', '12345'],
      ['telegram', '-100123'],
      ['spotify', 'john.doe'],
      ['instagram', 'insta_user'],
      ['tiktok', 'a-b'],
    ];
    for (const [provider, id] of cases) {
      const res = await post({ brand_id: BRAND, oauth_provider: provider, oauth_user_id: id });
      expect(res.status, provider).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['error', 'hint', 'provider']);
      expect(res.body.provider).toBe(provider);
    }
  });

  it('400 invalid credentials when the verifier rejects the account (placeholder ids by default)', async () => {
    const res = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: '11111111111111111' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ provider: 'discord' });
    expect(Object.keys(res.body).sort()).toEqual(['error', 'hint', 'provider']);
    const rows = await database.db
      .selectFrom('oauth_identities')
      .select('id')
      .where('subject', '=', '11111111111111111')
      .execute();
    expect(rows).toHaveLength(0);
  });

  it('says so when a verifier confirmed the account', async () => {
    const verifier: IdentityVerifier = { kind: 'fake', verify: () => 'verified' };
    const verifiedPost = await startApp({ verifier });
    const res = await verifiedPost({ brand_id: BRAND, oauth_provider: 'twitter', oauth_user_id: '44196397' });
    expect(res.status).toBe(200);
    expect(res.body.message).toContain('verified with Twitter');
    expect(res.body.message).not.toContain('Only the user ID format');
  });

  it('400 invalid brand_id, 404 unknown brand: {error}', async () => {
    const bad = await post({ brand_id: 'brand-1', oauth_provider: 'discord', oauth_user_id: discordId(3) });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body).sort()).toEqual(['details', 'error', 'example']);
    const unknown = await post({ brand_id: UNKNOWN_BRAND, oauth_provider: 'discord', oauth_user_id: discordId(3) });
    expect(unknown.status).toBe(404);
    expect(Object.keys(unknown.body)).toEqual(['error']);
  });

  it('writes an audit row per answered request', async () => {
    const metadata = { source: 'discord_bot', guild: 'g1' };
    const res = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: discordId(4), metadata });
    const row = await database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'pregenerate_user')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    expect(row.actor).toBe('pregenerate');
    expect(row.subject).toBe(BRAND);
    expect(row.details).toMatchObject({
      provider: 'discord',
      oauth_user_id: discordId(4),
      wallet: res.body.wallet_address,
      created_new: true,
      metadata,
    });
  });

  it('accepts the {email, brand_id} form: the email wallet of the event path', async () => {
    const first = await post({ email: 'Bot.User@Example.com', brand_id: BRAND });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      oauth_provider: 'email',
      oauth_user_id: 'bot.user@example.com',
      email: 'bot.user@example.com',
      created_new: true,
    });
    const user = await database.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'bot.user@example.com')
      .executeTakeFirstOrThrow();
    const expected = await wallets.walletForUser({ userId: user.id, email: user.email });
    expect(user.wallet_address).toBe(expected.address);
    expect(first.body.wallet_address).toBe(expected.address);
    expect(first.body.idp_user_id).toBe(expected.idpUserId);

    const again = await post({ email: 'bot.user@example.com', brand_id: BRAND });
    expect(again.body).toMatchObject({ created_new: false, wallet_address: expected.address });

    const bad = await post({ email: 'not-an-email', brand_id: BRAND });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body).sort()).toEqual(['details', 'error', 'example']);
    const noBrand = await post({ email: 'x@example.com' });
    expect(noBrand.status).toBe(400);
    expect(noBrand.body.required).toEqual(['brand_id', 'oauth_provider', 'oauth_user_id']);
  });

  it('50 concurrent requests for one identity create exactly one wallet', async () => {
    const body = { brand_id: OTHER_BRAND, oauth_provider: 'telegram', oauth_user_id: '987654321' };
    const results = await Promise.all(Array.from({ length: 50 }, () => post(body)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.wallet_address)).size).toBe(1);
    expect(results.filter((r) => r.body.created_new === true)).toHaveLength(1);
    const rows = await database.db
      .selectFrom('oauth_identities')
      .select('id')
      .where('provider', '=', 'telegram')
      .where('subject', '=', '987654321')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('429 {error} past 100 per minute per brand, other brands unaffected', async () => {
    const limitedPost = await startApp();
    const body = { brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: discordId(5) };
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await limitedPost(body)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const over = await limitedPost(body);
    expect(over.status).toBe(429);
    expect(Object.keys(over.body)).toEqual(['error']);
    expect(over.body.error).toMatch(/rate limit/i);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await limitedPost({ ...body, brand_id: OTHER_BRAND })).status).toBe(200);
  });

  it('429 {error} past the daily limit (second limiter)', async () => {
    const limitedPost = await startApp({
      limits: {
        perMinute: createRateLimit({ name: 'test minute', points: 100, durationSeconds: 60 }),
        perDay: createRateLimit({ name: 'test day', points: 3, durationSeconds: 86_400 }),
      },
    });
    const body = { brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: discordId(6) };
    for (let i = 0; i < 3; i++) expect((await limitedPost(body)).status).toBe(200);
    const over = await limitedPost(body);
    expect(over.status).toBe(429);
    expect(Object.keys(over.body)).toEqual(['error']);
  });

  it('500 {error, details} when storage fails', async () => {
    const failing = { ...wallets, walletForIdentity: async () => Promise.reject(new Error('boom')) };
    const failingPost = await startApp({ wallets: failing });
    const res = await failingPost({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: discordId(7) });
    expect(res.status).toBe(500);
    expect(Object.keys(res.body).sort()).toEqual(['details', 'error']);
  });

  it('refuses bodies over 10 KB and invalid JSON', async () => {
    const big = await post({
      brand_id: BRAND,
      oauth_provider: 'discord',
      oauth_user_id: discordId(8),
      metadata: { pad: 'x'.repeat(11_000) },
    });
    expect(big.status).toBe(413);
    const broken = await post(undefined, '{"brand_id":');
    expect(broken.status).toBe(400);
  });
});
