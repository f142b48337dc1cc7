import type { OAuthProvider } from '@pts/shared';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import {
  createFormatOnlyVerifier,
  type IdentityVerifier,
  toVerificationOutcome,
  type VerificationOutcome,
} from './pregeneration.service.ts';

/** Credentials and base URL of one provider's API. */
export interface ProviderApi {
  token: string;
  /** Base URL, e.g. https://discord.com; a local fake in tests. */
  apiUrl: string;
}

export interface AccountVerifierSettings {
  discord?: ProviderApi | undefined;
  telegram?: ProviderApi | undefined;
  twitter?: ProviderApi | undefined;
  github?: ProviderApi | undefined;
  /** Per-request deadline; default 5 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  logger?: Logger;
}

/** What one provider said about an id. */
type Lookup =
  | { found: true; refuse?: string }
  | { found: false }
  /** The provider could not answer (outage, rate limit, refused credentials): `why` is safe to show. */
  | { unavailable: string };

type Checker = (userId: string, call: ProviderCall) => Promise<Lookup>;

/** One GET to a provider: status and parsed JSON body (undefined when not JSON). */
type ProviderCall = (url: string, headers: Record<string, string>) => Promise<{ status: number; body: unknown }>;

const LABELS: Partial<Record<OAuthProvider, string>> = {
  discord: 'Discord',
  telegram: 'Telegram',
  twitter: 'X',
  github: 'GitHub',
};

const base = (url: string) => url.replace(/\/+$/, '');
const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Status codes meaning "cannot answer now": credentials refused, rate limited, or the provider is failing. */
function unavailableStatus(label: string, status: number): Lookup | undefined {
  if (status === 401 || status === 403) return { unavailable: `${label} refused the configured credentials` };
  if (status === 429) return { unavailable: `${label} rate-limited the check` };
  if (status >= 500) return { unavailable: `${label} answered HTTP ${status}` };
  return undefined;
}

/** Discord: `GET /api/v10/users/{id}` with the bot token; 404 Unknown User. Bot and system accounts are refused. */
const discordChecker =
  (api: ProviderApi): Checker =>
  async (userId, call) => {
    const { status, body } = await call(`${base(api.apiUrl)}/api/v10/users/${encodeURIComponent(userId)}`, {
      authorization: `Bot ${api.token}`,
    });
    const user = asRecord(body);
    if (status === 200 && user.id === userId) {
      if (user.bot === true) return { found: true, refuse: `Discord user ${userId} is a bot account` };
      if (user.system === true) return { found: true, refuse: `Discord user ${userId} is a system account` };
      return { found: true };
    }
    if (status === 404) return { found: false };
    return unavailableStatus('Discord', status) ?? { unavailable: `Discord answered HTTP ${status}` };
  };

/**
 * Telegram: Bot API `getChat?chat_id={id}`. A person's id resolves to a `private` chat only once they have
 * talked to the bot, so "chat not found" means: unknown to this bot (the hint says so). Groups and
 * channels are refused.
 */
const telegramChecker =
  (api: ProviderApi): Checker =>
  async (userId, call) => {
    const { status, body } = await call(
      `${base(api.apiUrl)}/bot${api.token}/getChat?chat_id=${encodeURIComponent(userId)}`,
      {},
    );
    const answer = asRecord(body);
    if (status === 200 && answer.ok === true) {
      const chat = asRecord(answer.result);
      if (chat.type !== 'private') {
        return { found: true, refuse: `Telegram ID ${userId} is a ${String(chat.type)} chat, not a user` };
      }
      return { found: true };
    }
    if (status === 400 && /chat not found/i.test(String(answer.description ?? ''))) return { found: false };
    return unavailableStatus('Telegram', status) ?? { unavailable: `Telegram answered HTTP ${status}` };
  };

/** X: `GET /2/users/{id}` with the app's bearer token. X answers an unknown or suspended id with 200 + `errors`. */
const xChecker =
  (api: ProviderApi): Checker =>
  async (userId, call) => {
    const { status, body } = await call(`${base(api.apiUrl)}/2/users/${encodeURIComponent(userId)}`, {
      authorization: `Bearer ${api.token}`,
    });
    const answer = asRecord(body);
    if (status === 200 && asRecord(answer.data).id === userId) return { found: true };
    const errors = Array.isArray(answer.errors) ? answer.errors.map(asRecord) : [];
    if ((status === 200 || status === 404) && errors.length > 0) {
      const suspended = errors.find((error) => /suspended/i.test(String(error.detail ?? '')));
      if (suspended) return { found: true, refuse: `X reports user ${userId} as suspended` };
      return { found: false };
    }
    if (status === 404) return { found: false };
    return unavailableStatus('X', status) ?? { unavailable: `X answered HTTP ${status}` };
  };

/** GitHub: `GET /user/{id}`; 404 Not Found. Organizations and bots are refused. */
const githubChecker =
  (api: ProviderApi): Checker =>
  async (userId, call) => {
    const { status, body } = await call(`${base(api.apiUrl)}/user/${encodeURIComponent(userId)}`, {
      authorization: `Bearer ${api.token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'pts-account-verifier',
    });
    const account = asRecord(body);
    if (status === 200 && String(account.id) === userId) {
      if (account.type !== 'User') {
        return { found: true, refuse: `GitHub ID ${userId} is an ${String(account.type).toLowerCase()}, not a user` };
      }
      return { found: true };
    }
    if (status === 404) return { found: false };
    return unavailableStatus('GitHub', status) ?? { unavailable: `GitHub answered HTTP ${status}` };
  };

/**
 * Spec 4.8 rule 1 with the providers' own APIs: for each provider with configured credentials (Discord,
 * Telegram, X, GitHub) the account is looked up; the others, and any id whose format is wrong or a
 * placeholder, go through the format-only check. Outcomes:
 * - found → `verified`; not found, or not a person's account (bot, organization, group, suspended) →
 *   `rejected` with the reason (the route answers 400 invalid credentials saying it);
 * - the provider cannot answer (timeout, 5xx, 429, refused credentials) → `format_only` with the reason, so
 *   the response `message` says verification was unavailable; pregeneration keeps working through an outage.
 * Tokens travel only in the request to the provider; logs carry provider, status and error code, never a
 * URL (Telegram's holds the token) or a header.
 */
export function createAccountVerifier(settings: AccountVerifierSettings): IdentityVerifier {
  const formatOnly = createFormatOnlyVerifier();
  const doFetch = settings.fetch ?? fetch;
  const timeoutMs = settings.timeoutMs ?? 5_000;
  const checkers: Partial<Record<OAuthProvider, Checker>> = {};
  if (settings.discord) checkers.discord = discordChecker(settings.discord);
  if (settings.telegram) checkers.telegram = telegramChecker(settings.telegram);
  if (settings.twitter) checkers.twitter = xChecker(settings.twitter);
  if (settings.github) checkers.github = githubChecker(settings.github);

  const call: ProviderCall = async (url, headers) => {
    const response = await doFetch(url, { headers, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  };

  return {
    kind: `providers:${Object.keys(checkers).join(',') || 'none'}`,
    async verify(provider, userId): Promise<VerificationOutcome> {
      const format = toVerificationOutcome(await formatOnly.verify(provider, userId));
      const checker = checkers[provider];
      if (format.verification === 'rejected' || !checker) return format;
      const label = LABELS[provider] ?? provider;
      let lookup: Lookup;
      try {
        lookup = await checker(userId, call);
      } catch (error) {
        const name = (error as Error)?.name;
        const code = (error as { cause?: { code?: unknown } })?.cause?.code;
        settings.logger?.warn(
          { provider, error: name, ...(typeof code === 'string' ? { code } : {}) },
          'account verification request failed',
        );
        lookup = {
          unavailable:
            name === 'TimeoutError'
              ? `${label} did not answer within ${timeoutMs} ms`
              : `${label} could not be reached`,
        };
      }
      if ('unavailable' in lookup) {
        settings.logger?.warn({ provider, reason: lookup.unavailable }, 'account verification unavailable');
        return { verification: 'format_only', reason: `verification was unavailable (${lookup.unavailable})` };
      }
      if (!lookup.found) return { verification: 'rejected', reason: `${label} has no user with ID ${userId}` };
      if (lookup.refuse) return { verification: 'rejected', reason: lookup.refuse };
      return { verification: 'verified' };
    },
  };
}

/** The verifier for the configured provider credentials; undefined when none is set (format only). */
export function accountVerifierFromConfig(
  config: Pick<
    Config,
    | 'PTS_VERIFY_DISCORD_BOT_TOKEN'
    | 'PTS_VERIFY_DISCORD_API_URL'
    | 'PTS_VERIFY_TELEGRAM_BOT_TOKEN'
    | 'PTS_VERIFY_TELEGRAM_API_URL'
    | 'PTS_VERIFY_X_BEARER_TOKEN'
    | 'PTS_VERIFY_X_API_URL'
    | 'PTS_VERIFY_GITHUB_TOKEN'
    | 'PTS_VERIFY_GITHUB_API_URL'
    | 'PTS_VERIFY_TIMEOUT_MS'
  >,
  deps: { logger?: Logger } = {},
): IdentityVerifier | undefined {
  const api = (token: string | undefined, apiUrl: string) => (token ? { token, apiUrl } : undefined);
  const settings: AccountVerifierSettings = {
    discord: api(config.PTS_VERIFY_DISCORD_BOT_TOKEN, config.PTS_VERIFY_DISCORD_API_URL),
    telegram: api(config.PTS_VERIFY_TELEGRAM_BOT_TOKEN, config.PTS_VERIFY_TELEGRAM_API_URL),
    twitter: api(config.PTS_VERIFY_X_BEARER_TOKEN, config.PTS_VERIFY_X_API_URL),
    github: api(config.PTS_VERIFY_GITHUB_TOKEN, config.PTS_VERIFY_GITHUB_API_URL),
    timeoutMs: config.PTS_VERIFY_TIMEOUT_MS,
    ...(deps.logger ? { logger: deps.logger } : {}),
  };
  if (!settings.discord && !settings.telegram && !settings.twitter && !settings.github) return undefined;
  return createAccountVerifier(settings);
}
