import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakePrivyServer, startFakePrivyServer } from '../../../test/fakes/privy-server.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { loadConfig } from '../../config.ts';
import { startPlatform } from '../../startup/platform.ts';

let privy: FakePrivyServer;
let platform: TestPlatform;
let brandId: string;

beforeAll(async () => {
  privy = await startFakePrivyServer();
  platform = await startTestPlatform({
    PTS_IDENTITY_PROVIDER: 'privy',
    PRIVY_APP_ID: privy.appId,
    PRIVY_APP_SECRET: privy.appSecret,
    PRIVY_API_URL: privy.url,
  });
  brandId = (await platform.createBrand()).brandId;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await privy?.close();
});

const usersWith = (type: string, field: string, value: string) =>
  [...privy.users.values()].filter((user) => user.linked_accounts.some((a) => a.type === type && a[field] === value));
const walletOf = (user: { linked_accounts: Record<string, unknown>[] }) =>
  getAddress(String(user.linked_accounts.find((a) => a.type === 'wallet')!.address));

describe('PTS_IDENTITY_PROVIDER=privy', () => {
  it('uses the Privy adapters', async () => {
    expect(platform.deps.identity.kind).toBe('privy');
    expect(platform.deps.wallets.kind).toBe('privy');
    const diagnostic = await platform.get('/pts-api/diagnostic');
    expect(diagnostic.body).toMatchObject({ identity_provider: 'connected', identityProviderKind: 'privy' });
  });

  it('pregenerate-user creates a Privy user with a wallet; repeating returns the same wallet (created_new false)', async () => {
    const body = {
      brand_id: brandId,
      oauth_provider: 'discord',
      oauth_user_id: '423456789012345678',
      oauth_username: 'jane',
    };
    const first = await platform.post('/pts-api/pregenerate-user', body);
    expect(first.status).toBe(200);
    const [user, ...others] = usersWith('discord_oauth', 'subject', '423456789012345678');
    expect(others).toHaveLength(0);
    expect(first.body).toMatchObject({ created_new: true, idp_user_id: user!.id });
    expect(getAddress(first.body.wallet_address)).toBe(walletOf(user!));

    const again = await platform.post('/pts-api/pregenerate-user', body);
    expect(again.body).toMatchObject({
      created_new: false,
      idp_user_id: user!.id,
      wallet_address: first.body.wallet_address,
    });
    expect(usersWith('discord_oauth', 'subject', '423456789012345678')).toHaveLength(1);

    const email = await platform.post('/pts-api/pregenerate-user', { brand_id: brandId, email: 'grace@example.com' });
    expect(email.status).toBe(200);
    const [emailUser] = usersWith('email', 'address', 'grace@example.com');
    expect(email.body).toMatchObject({ created_new: true, idp_user_id: emailUser!.id });
    expect(getAddress(email.body.wallet_address)).toBe(walletOf(emailUser!));
    const emailAgain = await platform.post('/pts-api/pregenerate-user', {
      brand_id: brandId,
      email: 'grace@example.com',
    });
    expect(emailAgain.body).toMatchObject({ created_new: false, wallet_address: email.body.wallet_address });
  });

  it('20 concurrent pregenerations of one identity make one Privy user and one wallet', async () => {
    const body = { brand_id: brandId, oauth_provider: 'twitter', oauth_user_id: '783214', oauth_username: 'x' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => platform.post('/pts-api/pregenerate-user', body)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.wallet_address)).size).toBe(1);
    expect(answers.filter((a) => a.body.created_new)).toHaveLength(1);
    expect(usersWith('twitter_oauth', 'subject', '783214')).toHaveLength(1);
  });

  it('verifies a Privy-minted access token through deps.identity, with the pregenerated wallet', async () => {
    const pregenerated = await platform.post('/pts-api/pregenerate-user', {
      brand_id: brandId,
      oauth_provider: 'telegram',
      oauth_user_id: '31337',
    });
    const token = privy.mintAccessToken({
      userId: pregenerated.body.idp_user_id,
      issuedAt: Math.floor(platform.clock.now().getTime() / 1000),
    });
    const user = await platform.deps.identity.verifyAccessToken(token);
    expect(user).toEqual({
      userId: pregenerated.body.idp_user_id,
      walletAddresses: [getAddress(pregenerated.body.wallet_address)],
    });
    platform.clock.advance(2 * 3600 * 1000);
    await expect(platform.deps.identity.verifyAccessToken(token)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringMatching(/expired/),
    });
  });

  it('refuses to start without the Privy app id or secret, saying which', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pts-privy-config-'));
    try {
      await expect(
        startPlatform(loadConfig({ PTS_DATA_DIR: dataDir, PTS_IDENTITY_PROVIDER: 'privy', PRIVY_APP_ID: 'app' }), {
          database: platform.database,
          listen: false,
        }),
      ).rejects.toThrow('PTS_IDENTITY_PROVIDER=privy needs PRIVY_APP_SECRET');
      await expect(
        startPlatform(loadConfig({ PTS_DATA_DIR: dataDir, PTS_IDENTITY_PROVIDER: 'privy' }), {
          database: platform.database,
          listen: false,
        }),
      ).rejects.toThrow('needs PRIVY_APP_ID and PRIVY_APP_SECRET');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
