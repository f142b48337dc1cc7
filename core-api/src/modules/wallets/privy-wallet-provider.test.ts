import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakePrivyServer, type FakePrivyUser, startFakePrivyServer } from '../../../test/fakes/privy-server.ts';
import { createPrivyApiClient, createPrivyWalletProvider, ethereumWalletsOf } from './privy-wallet-provider.ts';

let privy: FakePrivyServer;
let wallets: ReturnType<typeof createPrivyWalletProvider>;
const newProvider = () =>
  createPrivyWalletProvider({
    client: createPrivyApiClient({ appId: privy.appId, appSecret: privy.appSecret, apiUrl: privy.url }),
  });

beforeAll(async () => {
  privy = await startFakePrivyServer();
  wallets = newProvider();
});

afterAll(async () => {
  await privy?.close();
});

const usersWith = (type: string, field: string, value: string) =>
  [...privy.users.values()].filter((user) => user.linked_accounts.some((a) => a.type === type && a[field] === value));
const embedded = (user: FakePrivyUser) =>
  user.linked_accounts.filter((a) => a.type === 'wallet' && a.connector_type === 'embedded');

describe('Privy wallet provider', () => {
  it('creates a Privy user with the email and a pregenerated Ethereum wallet, once', async () => {
    const first = await wallets.walletForUser({ userId: 1n, email: 'Ada@Example.com' });
    const [user, ...others] = usersWith('email', 'address', 'ada@example.com');
    expect(others).toHaveLength(0);
    expect(first).toEqual({ address: getAddress(String(embedded(user!)[0]!.address)), idpUserId: user!.id });
    expect(first.idpUserId).toMatch(/^did:privy:/);

    const again = await newProvider().walletForUser({ userId: 1n, email: 'ada@example.com' });
    expect(again).toEqual(first);
    expect(usersWith('email', 'address', 'ada@example.com')).toHaveLength(1);
  });

  it('uses an existing Privy user (made elsewhere) and pregenerates its wallet when it has none', async () => {
    const existing = privy.addUser([{ type: 'email', address: 'bob@example.com' }], { wallet: false });
    const wallet = await wallets.walletForUser({ userId: 2n, email: 'bob@example.com' });
    expect(wallet.idpUserId).toBe(existing.id);
    expect(embedded(existing)).toHaveLength(1);
    expect(wallet.address).toBe(getAddress(String(embedded(existing)[0]!.address)));
    expect(await wallets.walletForUser({ userId: 2n, email: 'bob@example.com' })).toEqual(wallet);
    expect(embedded(existing)).toHaveLength(1);
  });

  it('links social identities as their Privy account types; same identity → same wallet, providers differ', async () => {
    const discord = await wallets.walletForIdentity({
      identityId: 10n,
      provider: 'discord',
      subject: '123456789012345678',
      username: 'jane',
    });
    const [user] = usersWith('discord_oauth', 'subject', '123456789012345678');
    expect(user!.linked_accounts[0]).toMatchObject({
      type: 'discord_oauth',
      subject: '123456789012345678',
      username: 'jane',
    });
    expect(discord.idpUserId).toBe(user!.id);

    const twitter = await wallets.walletForIdentity({
      identityId: 11n,
      provider: 'twitter',
      subject: '123456789012345678',
    });
    expect(twitter.address).not.toBe(discord.address);
    expect(usersWith('twitter_oauth', 'subject', '123456789012345678')[0]!.linked_accounts[0]).toMatchObject({
      type: 'twitter_oauth',
      username: '123456789012345678',
    });

    const telegram = await wallets.walletForIdentity({ identityId: 12n, provider: 'telegram', subject: '777000' });
    expect(usersWith('telegram', 'telegram_user_id', '777000')).toHaveLength(1);
    const google = await wallets.walletForIdentity({
      identityId: 13n,
      provider: 'google',
      subject: '110169484474386276334',
    });
    expect(usersWith('custom_auth', 'custom_user_id', 'google:110169484474386276334')).toHaveLength(1);
    for (const provider of ['github', 'spotify', 'instagram', 'tiktok']) {
      await wallets.walletForIdentity({ identityId: 14n, provider, subject: '583231' });
      expect(usersWith(`${provider}_oauth`, 'subject', '583231'), provider).toHaveLength(1);
    }

    // Asking again (another process: no shared memory) finds the same users through Privy's lookups.
    const other = newProvider();
    expect(
      await other.walletForIdentity({ identityId: 20n, provider: 'twitter', subject: '123456789012345678' }),
    ).toEqual(twitter);
    expect(await other.walletForIdentity({ identityId: 21n, provider: 'telegram', subject: '777000' })).toEqual(
      telegram,
    );
    expect(
      await other.walletForIdentity({ identityId: 22n, provider: 'google', subject: '110169484474386276334' }),
    ).toEqual(google);
    expect(
      await other.walletForIdentity({
        identityId: 23n,
        provider: 'discord',
        subject: '123456789012345678',
        username: 'jane',
      }),
    ).toEqual(discord);
  });

  it('says plainly when Privy has the account but cannot look it up (discord without username)', async () => {
    privy.addUser([{ type: 'discord_oauth', subject: '223456789012345678', username: 'someone' }]);
    await expect(
      wallets.walletForIdentity({ identityId: 30n, provider: 'discord', subject: '223456789012345678' }),
    ).rejects.toThrow(/cannot look it up.*send oauth_username/);
    // A username lookup that finds someone else's account is refused, not trusted.
    await expect(
      wallets.walletForIdentity({
        identityId: 31n,
        provider: 'discord',
        subject: '223456789012345678',
        username: 'jane',
      }),
    ).rejects.toThrow(/does not have that account/);
  });

  it('gives 20 concurrent requests for one identity one Privy user (in one process and across two)', async () => {
    const input = { identityId: 40n, provider: 'discord', subject: '323456789012345678', username: 'concurrent' };
    const results = await Promise.all(Array.from({ length: 20 }, () => wallets.walletForIdentity(input)));
    expect(new Set(results.map((r) => r.address)).size).toBe(1);
    expect(usersWith('discord_oauth', 'subject', '323456789012345678')).toHaveLength(1);

    const a = newProvider();
    const b = newProvider();
    const twitterInput = { identityId: 41n, provider: 'twitter', subject: '44196397' };
    const both = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).walletForIdentity(twitterInput)),
    );
    expect(new Set(both.map((r) => r.address)).size).toBe(1);
    expect(usersWith('twitter_oauth', 'subject', '44196397')).toHaveLength(1);
  });

  it('fails clearly with wrong credentials, without provider/subject, and for an unknown provider', async () => {
    const wrong = createPrivyWalletProvider({
      client: createPrivyApiClient({ appId: privy.appId, appSecret: 'wrong-secret', apiUrl: privy.url }),
    });
    await expect(wrong.walletForUser({ userId: 3n, email: 'eve@example.com' })).rejects.toThrow(/401/);
    await expect(wrong.ping()).rejects.toThrow(/401/);
    await expect(wallets.ping()).resolves.toBeUndefined();
    await expect(wallets.walletForIdentity({ identityId: 50n })).rejects.toThrow(/provider and subject/);
    await expect(wallets.walletForIdentity({ identityId: 51n, provider: 'myspace', subject: '1' })).rejects.toThrow(
      /unsupported identity provider "myspace"/,
    );
  });

  it('lists embedded wallets first, then external ones, checksummed and without duplicates', () => {
    const lower = `0x${'ab'.repeat(20)}`;
    const user = {
      linked_accounts: [
        { type: 'wallet', address: lower, chain_type: 'ethereum', connector_type: 'injected' },
        {
          type: 'wallet',
          address: `0x${'cd'.repeat(20)}`,
          chain_type: 'ethereum',
          connector_type: 'embedded',
          wallet_index: 1,
        },
        {
          type: 'wallet',
          address: `0x${'ef'.repeat(20)}`,
          chain_type: 'ethereum',
          connector_type: 'embedded',
          wallet_index: 0,
        },
        { type: 'wallet', address: 'So1anaAddre55', chain_type: 'solana', connector_type: 'embedded' },
        { type: 'wallet', address: lower.toUpperCase().replace('0X', '0x'), chain_type: 'ethereum' },
        { type: 'email', address: 'x@example.com' },
      ],
    } as unknown as Parameters<typeof ethereumWalletsOf>[0];
    expect(ethereumWalletsOf(user)).toEqual([
      getAddress(`0x${'ef'.repeat(20)}`),
      getAddress(`0x${'cd'.repeat(20)}`),
      getAddress(lower),
    ]);
  });
});
