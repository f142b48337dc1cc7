import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { type FakeSocialApis, startFakeSocialApis } from '../../../test/fakes/social-apis-server.ts';
import { loadConfig } from '../../config.ts';
import { createErrorHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { createLocalWalletProvider } from '../wallets/wallet-provider.ts';
import { accountVerifierFromConfig, createAccountVerifier } from './account-verifiers.ts';
import { pregenerationRoutes } from './pregeneration.routes.ts';
import { createPregenerationService } from './pregeneration.service.ts';

const BRAND = '0x00000000000000000000000000000000000000c1';
const wallets = createLocalWalletProvider('test test test test test test test test test test test junk');

let social: FakeSocialApis;
let database: TestDatabase;
const logLines: string[] = [];
const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  }),
);
const servers: { close(): void }[] = [];

const settings = () => ({
  discord: { token: social.tokens.discord, apiUrl: social.url },
  telegram: { token: social.tokens.telegram, apiUrl: social.url },
  twitter: { token: social.tokens.x, apiUrl: social.url },
  github: { token: social.tokens.github, apiUrl: social.url },
  timeoutMs: 1_000,
  logger,
});

beforeAll(async () => {
  social = await startFakeSocialApis();
  social.discord.set('123456789012345678', { username: 'jane' });
  social.discord.set('223456789012345678', { username: 'helper-bot', bot: true });
  social.telegram.set('123456789', { type: 'private', first_name: 'Jane' });
  social.telegram.set('987654321', { type: 'channel' });
  social.x.set('44196397', { username: 'jack', name: 'jack' });
  social.x.set('55196397', { username: 'gone', name: 'gone', suspended: true });
  social.github.set('583231', { login: 'octocat', type: 'User' });
  social.github.set('9919', { login: 'github', type: 'Organization' });
  database = await createTestDatabase();
  await database.db
    .insertInto('brands')
    .values({
      address: BRAND,
      name: 'Verifier brand',
      website_domain: 'brand.example',
      security_key_hash: `sk-${BRAND}`,
      security_key_encrypted: 'x',
      api_key_hash: `ak-${BRAND}`,
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
});

afterAll(async () => {
  for (const server of servers) server.close();
  await social?.close();
  await database?.close();
});

describe('account verifiers (provider APIs)', () => {
  it('verifies existing accounts with each provider, sending its credentials the provider way', async () => {
    const verifier = createAccountVerifier(settings());
    expect(await verifier.verify('discord', '123456789012345678')).toEqual({ verification: 'verified' });
    expect(await verifier.verify('telegram', '123456789')).toEqual({ verification: 'verified' });
    expect(await verifier.verify('twitter', '44196397')).toEqual({ verification: 'verified' });
    expect(await verifier.verify('github', '583231')).toEqual({ verification: 'verified' });
    const byProvider = Object.fromEntries(social.requests.map((r) => [r.provider, r]));
    expect(byProvider.discord).toMatchObject({
      path: '/api/v10/users/123456789012345678',
      authorization: `Bot ${social.tokens.discord}`,
    });
    expect(byProvider.telegram).toMatchObject({ path: '/bot<token>/getChat' });
    expect(byProvider.x).toMatchObject({ path: '/2/users/44196397', authorization: `Bearer ${social.tokens.x}` });
    expect(byProvider.github).toMatchObject({ path: '/user/583231', authorization: `Bearer ${social.tokens.github}` });
  });

  it('rejects unknown accounts and accounts that are not a person, saying why', async () => {
    const verifier = createAccountVerifier(settings());
    const cases: [Parameters<typeof verifier.verify>[0], string, RegExp][] = [
      ['discord', '923456789012345678', /^Discord has no user with ID 923456789012345678$/],
      ['discord', '223456789012345678', /is a bot account/],
      ['telegram', '5550001', /^Telegram has no user with ID 5550001$/],
      ['telegram', '987654321', /is a channel chat, not a user/],
      ['twitter', '12345', /^X has no user with ID 12345$/],
      ['twitter', '55196397', /suspended/],
      ['github', '424242', /^GitHub has no user with ID 424242$/],
      ['github', '9919', /is an organization, not a user/],
    ];
    for (const [provider, id, reason] of cases) {
      const outcome = await verifier.verify(provider, id);
      expect(outcome, `${provider} ${id}`).toMatchObject({ verification: 'rejected' });
      expect((outcome as { reason: string }).reason, `${provider} ${id}`).toMatch(reason);
    }
  });

  it('checks only the format for providers without credentials, and never calls a provider for a bad id', async () => {
    const verifier = createAccountVerifier({ discord: settings().discord });
    const before = social.requests.length;
    expect(await verifier.verify('github', '583231')).toEqual({ verification: 'format_only' });
    expect(await verifier.verify('discord', '11111111111111111')).toEqual({ verification: 'rejected' });
    expect(social.requests.length).toBe(before);
    expect(accountVerifierFromConfig(loadConfig({}))).toBeUndefined();
  });

  it('falls back to format only, saying verification was unavailable, on outage, rate limit, bad token or timeout', async () => {
    const verifier = createAccountVerifier(settings());
    social.failing.add('discord');
    social.rateLimited.add('x');
    try {
      expect(await verifier.verify('discord', '123456789012345678')).toEqual({
        verification: 'format_only',
        reason: 'verification was unavailable (Discord answered HTTP 503)',
      });
      expect(await verifier.verify('twitter', '44196397')).toEqual({
        verification: 'format_only',
        reason: 'verification was unavailable (X rate-limited the check)',
      });
    } finally {
      social.failing.delete('discord');
      social.rateLimited.delete('x');
    }
    const wrongToken = createAccountVerifier({ ...settings(), telegram: { token: '1:wrong', apiUrl: social.url } });
    expect(await wrongToken.verify('telegram', '123456789')).toEqual({
      verification: 'format_only',
      reason: 'verification was unavailable (Telegram refused the configured credentials)',
    });
    const unreachable = createAccountVerifier({ ...settings(), github: { token: 'x', apiUrl: 'http://127.0.0.1:9' } });
    expect(await unreachable.verify('github', '583231')).toEqual({
      verification: 'format_only',
      reason: 'verification was unavailable (GitHub could not be reached)',
    });
    const hanging = createAccountVerifier({
      ...settings(),
      timeoutMs: 100,
      fetch: (_url, init) =>
        new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason))),
    });
    expect(await hanging.verify('discord', '123456789012345678')).toEqual({
      verification: 'format_only',
      reason: 'verification was unavailable (Discord did not answer within 100 ms)',
    });
  });

  it('is built from config and answers through POST /pregenerate-user: 400 with the reason, message says what was checked', async () => {
    const verifier = accountVerifierFromConfig(
      loadConfig({
        PTS_VERIFY_DISCORD_BOT_TOKEN: social.tokens.discord,
        PTS_VERIFY_DISCORD_API_URL: social.url,
        PTS_VERIFY_TELEGRAM_BOT_TOKEN: social.tokens.telegram,
        PTS_VERIFY_TELEGRAM_API_URL: social.url,
      }),
      { logger },
    );
    expect(verifier?.kind).toBe('providers:discord,telegram');
    const app = express();
    app.use(
      '/pts-api',
      routerFrom(
        pregenerationRoutes({
          pregeneration: createPregenerationService({ db: database.db, wallets }),
          logger,
          ...(verifier ? { verifier } : {}),
        }),
      ),
    );
    app.use(createErrorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const post = async (body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pts-api/pregenerate-user`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    const verified = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: '123456789012345678' });
    expect(verified.status).toBe(200);
    expect(verified.body.message).toContain('The account was verified with Discord.');

    const unknown = await post({ brand_id: BRAND, oauth_provider: 'discord', oauth_user_id: '923456789012345678' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      error: 'Invalid Discord credentials: Discord has no user with ID 923456789012345678',
      hint: expect.stringContaining('Send the id of a real Discord account'),
      provider: 'discord',
    });
    const rows = await database.db
      .selectFrom('oauth_identities')
      .select('id')
      .where('subject', '=', '923456789012345678')
      .execute();
    expect(rows).toHaveLength(0);

    const github = await post({ brand_id: BRAND, oauth_provider: 'github', oauth_user_id: '583231' });
    expect(github.status).toBe(200);
    expect(github.body.message).toContain(
      'Only the user ID format was checked; the account was not verified with GitHub.',
    );

    social.failing.add('telegram');
    try {
      const outage = await post({ brand_id: BRAND, oauth_provider: 'telegram', oauth_user_id: '123456789' });
      expect(outage.status).toBe(200);
      expect(outage.body.message).toContain(
        'Only the user ID format was checked; the account was not verified with Telegram: verification was unavailable (Telegram answered HTTP 503).',
      );
    } finally {
      social.failing.delete('telegram');
    }
  });

  it('never logs a provider token', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const logs = logLines.join('\n');
    for (const token of Object.values(social.tokens)) expect(logs).not.toContain(token);
    expect(logs).not.toContain(social.tokens.telegram.split(':')[1]);
  });
});
