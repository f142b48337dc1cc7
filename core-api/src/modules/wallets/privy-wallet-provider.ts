import { APIError, PrivyClient } from '@privy-io/node';
import type { LinkedAccountInput, User } from '@privy-io/node/resources';
import { type Address, getAddress, isAddress } from 'viem';
import type { IdentityWalletInput, IdentityWalletProvider, WalletProvider } from './wallet-provider.ts';

/** Default Privy REST API base URL (`PRIVY_API_URL` overrides it). */
export const PRIVY_DEFAULT_API_URL = 'https://api.privy.io';

export interface PrivyClientSettings {
  appId: string;
  appSecret: string;
  /** Base URL of the REST API; default https://api.privy.io. */
  apiUrl?: string | undefined;
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
}

/**
 * The official `@privy-io/node` client pointed at `apiUrl` (a local fake in tests). Reads are retried once on
 * 5xx/429; user creation is never retried by the SDK (a 409 "already exists" is an answer, not a lock timeout).
 */
export function createPrivyApiClient(settings: PrivyClientSettings): PrivyClient {
  return new PrivyClient({
    appId: settings.appId,
    appSecret: settings.appSecret,
    apiUrl: (settings.apiUrl ?? PRIVY_DEFAULT_API_URL).replace(/\/+$/, ''),
    timeout: settings.timeoutMs ?? 10_000,
    maxRetries: 1,
    // The SDK logs through console; our logger is the only log channel.
    logLevel: 'off',
  });
}

/** Every Ethereum wallet linked to a Privy user (embedded and external), checksummed, embedded first by index. */
export function ethereumWalletsOf(user: Pick<User, 'linked_accounts'>): Address[] {
  const wallets = user.linked_accounts
    .filter(
      (account): account is typeof account & { address: string; chain_type: string } =>
        account.type === 'wallet' &&
        'chain_type' in account &&
        account.chain_type === 'ethereum' &&
        typeof account.address === 'string' &&
        isAddress(account.address, { strict: false }),
    )
    .map((account) => ({
      address: getAddress(account.address),
      embedded: 'connector_type' in account && account.connector_type === 'embedded',
      index: 'wallet_index' in account && typeof account.wallet_index === 'number' ? account.wallet_index : 0,
    }))
    .sort((a, b) => Number(b.embedded) - Number(a.embedded) || a.index - b.index);
  return [...new Set(wallets.map((wallet) => wallet.address))];
}

/** The user's primary embedded (Privy-managed) Ethereum wallet: the lowest `wallet_index`. */
function embeddedWalletOf(user: User): Address | undefined {
  const embedded = user.linked_accounts
    .filter(
      (account) =>
        account.type === 'wallet' &&
        'chain_type' in account &&
        account.chain_type === 'ethereum' &&
        'connector_type' in account &&
        account.connector_type === 'embedded',
    )
    .map((account) => account as { address: string; wallet_index?: number })
    .sort((a, b) => (a.wallet_index ?? 0) - (b.wallet_index ?? 0));
  const first = embedded[0];
  return first && isAddress(first.address, { strict: false }) ? getAddress(first.address) : undefined;
}

/** Whether Privy answered "a user with this linked account already exists". */
export function isAlreadyExists(error: unknown): boolean {
  if (!(error instanceof APIError)) return false;
  if (error.status === 409) return true;
  return (error.status === 400 || error.status === 422) && /already exists/i.test(error.message);
}

/** How one identity is linked in Privy, and how an existing user with it is found again. */
interface IdentityLink {
  /** Cache/single-flight key. */
  key: string;
  account: LinkedAccountInput;
  /** Finds the user owning this account (undefined when Privy has no lookup for it). */
  find?: (client: PrivyClient) => Promise<User>;
  /** Whether a found user really owns this account (username lookups can match someone else). */
  owns: (user: User) => boolean;
}

const hasAccount = (user: User, type: string, field: string, value: string) =>
  user.linked_accounts.some(
    (account) => account.type === type && (account as unknown as Record<string, unknown>)[field] === value,
  );

/**
 * Spec 4.8 providers → Privy linked account types. Privy requires a username for several of them; when the
 * caller sent none, the subject stands in until the user's first real login, when Privy refreshes the
 * profile. Google needs the account's email, which pregeneration never has, so a Google identity is linked as
 * `custom_auth` `google:<sub>` (docs/identity.md says what that means for claiming).
 */
export function identityLink(input: {
  provider: string;
  subject: string;
  username?: string | undefined;
}): IdentityLink {
  const { provider, subject } = input;
  const username = input.username ?? subject;
  const oauth = (type: string, extra: Record<string, unknown>): Pick<IdentityLink, 'account' | 'owns'> => ({
    account: { type, subject, ...extra } as LinkedAccountInput,
    owns: (user) => hasAccount(user, type, 'subject', subject),
  });
  switch (provider) {
    case 'discord':
      return {
        key: `discord_oauth:${subject}`,
        ...oauth('discord_oauth', { username }),
        ...(input.username !== undefined
          ? { find: (client) => client.users().getByDiscordUsername({ username: input.username! }) }
          : {}),
      };
    case 'twitter':
      return {
        key: `twitter_oauth:${subject}`,
        ...oauth('twitter_oauth', { username, name: username }),
        find: (client) => client.users().getByTwitterSubject({ subject }),
      };
    case 'github':
      return {
        key: `github_oauth:${subject}`,
        ...oauth('github_oauth', { username }),
        ...(input.username !== undefined
          ? { find: (client) => client.users().getByGitHubUsername({ username: input.username! }) }
          : {}),
      };
    case 'spotify':
      return { key: `spotify_oauth:${subject}`, ...oauth('spotify_oauth', {}) };
    case 'instagram':
      return { key: `instagram_oauth:${subject}`, ...oauth('instagram_oauth', { username }) };
    case 'tiktok':
      return { key: `tiktok_oauth:${subject}`, ...oauth('tiktok_oauth', { username, name: null }) };
    case 'telegram':
      return {
        key: `telegram:${subject}`,
        account: {
          type: 'telegram',
          telegram_user_id: subject,
          ...(input.username !== undefined ? { username: input.username } : {}),
        },
        find: (client) => client.users().getByTelegramUserID({ telegram_user_id: subject }),
        owns: (user) => hasAccount(user, 'telegram', 'telegram_user_id', subject),
      };
    case 'google': {
      const customUserId = `google:${subject}`;
      return {
        key: `custom_auth:${customUserId}`,
        account: { type: 'custom_auth', custom_user_id: customUserId },
        find: (client) => client.users().getByCustomAuthID({ custom_user_id: customUserId }),
        owns: (user) => hasAccount(user, 'custom_auth', 'custom_user_id', customUserId),
      };
    }
    default:
      throw new Error(`Privy wallets: unsupported identity provider ${JSON.stringify(provider)}`);
  }
}

export type PrivyWalletProvider = WalletProvider &
  IdentityWalletProvider & {
    readonly kind: 'privy';
    /** Whether the Privy API answers with these credentials (diagnostic `identity_provider`). */
    ping(): Promise<void>;
  };

/**
 * Privy adapter of the wallet ports: each email user and each social identity is a Privy user with that
 * linked account and a pregenerated (embedded) Ethereum wallet, which the person claims by logging in with
 * Privy. Find-or-create: create first (the usual case: pregeneration only asks for identities it has no
 * wallet for); when Privy answers that the linked account already exists, find that user and use (or add)
 * its embedded wallet. Concurrent calls for one identity in this process share one request.
 */
export function createPrivyWalletProvider(deps: { client: PrivyClient }): PrivyWalletProvider {
  const { client } = deps;
  const inFlight = new Map<string, Promise<{ address: Address; idpUserId: string }>>();

  const once = (key: string, work: () => Promise<{ address: Address; idpUserId: string }>) => {
    let pending = inFlight.get(key);
    if (!pending) {
      pending = work().finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };

  /** The user's embedded wallet, pregenerating one when the user has none (a user made elsewhere). */
  const walletOf = async (user: User): Promise<{ address: Address; idpUserId: string }> => {
    const existing = embeddedWalletOf(user);
    if (existing) return { address: existing, idpUserId: user.id };
    const updated = await client.users().pregenerateWallets(user.id, { wallets: [{ chain_type: 'ethereum' }] });
    const created = embeddedWalletOf(updated);
    if (!created) throw new Error(`Privy pregenerated no Ethereum wallet for user ${user.id}`);
    return { address: created, idpUserId: user.id };
  };

  const findOrCreate = async (link: {
    account: LinkedAccountInput;
    describe: string;
    find?: (() => Promise<User>) | undefined;
    owns: (user: User) => boolean;
  }) => {
    try {
      const user = await client
        .users()
        .create({ linked_accounts: [link.account], wallets: [{ chain_type: 'ethereum' }] }, { maxRetries: 0 });
      return walletOf(user);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    if (!link.find) {
      throw new Error(
        `Privy already has a user with ${link.describe}, and Privy cannot look it up by that account; link it to a user by hand or send oauth_username`,
      );
    }
    const user = await link.find();
    if (!link.owns(user)) {
      throw new Error(`Privy's lookup for ${link.describe} returned user ${user.id}, which does not have that account`);
    }
    return walletOf(user);
  };

  return {
    kind: 'privy',
    walletForUser({ email }) {
      const address = email.trim().toLowerCase();
      return once(`email:${address}`, () =>
        findOrCreate({
          account: { type: 'email', address },
          describe: 'this email',
          find: () => client.users().getByEmailAddress({ address }),
          owns: (user) =>
            user.linked_accounts.some(
              (account) => account.type === 'email' && account.address.toLowerCase() === address,
            ),
        }),
      );
    },
    async walletForIdentity(input: IdentityWalletInput) {
      if (!input.provider || !input.subject) {
        throw new Error('Privy wallets for a social identity need its provider and subject (the OAuth user id)');
      }
      const link = identityLink({ provider: input.provider, subject: input.subject, username: input.username });
      const find = link.find;
      return once(link.key, () =>
        findOrCreate({
          account: link.account,
          describe: `${link.account.type} account ${input.subject}`,
          find: find ? () => find(client) : undefined,
          owns: link.owns,
        }),
      );
    },
    async ping() {
      await client.apps().getSettings();
    },
  };
}
