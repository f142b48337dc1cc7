import { createPublicKey, type KeyObject } from 'node:crypto';
import { NotFoundError, type PrivyClient } from '@privy-io/node';
import type { User } from '@privy-io/node/resources';
import { AppError, type Clock } from '@pts/shared';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { clampLeeway, ES256, parseEs256Jws, unauthorized, verifyEs256Claims } from '../../security/es256-jwt.ts';
import {
  createPrivyApiClient,
  createPrivyWalletProvider,
  ethereumWalletsOf,
  PRIVY_DEFAULT_API_URL,
  type PrivyWalletProvider,
} from '../wallets/privy-wallet-provider.ts';
import type { AuthenticatedUser, IdentityProvider } from './identity-provider.ts';

/** Privy signs access tokens with ES256 only; nothing else is accepted (no `none`, no HMAC, no RSA). */
const ALG = ES256;
/** The `iss` of every Privy access token. */
export const PRIVY_ISSUER = 'privy.io';

export interface PrivyIdentityProviderOptions {
  /** The Privy app id: the tokens' audience. */
  appId: string;
  /** Reads users (their linked wallets) from the Privy API. */
  client: PrivyClient;
  clock: Clock;
  /** SPKI PEM verification key from the dashboard; when set the JWKS is never fetched. */
  verificationKey?: string | undefined;
  /** The app's JWKS; required when `verificationKey` is unset. */
  jwksUrl?: string | undefined;
  /** Fetch used for the JWKS (tests may inject one); default global fetch. */
  fetch?: typeof fetch;
  /** Tolerance for exp/nbf/iat, at most 30 s (the default). */
  leewaySeconds?: number;
  /** How long a user's wallet list is reused; default 30 s. */
  walletCacheSeconds?: number;
  /** How long a fetched JWKS is used before it is fetched again; default 10 minutes. */
  jwksCacheSeconds?: number;
  /** An unknown `kid` refetches the JWKS at most this often; default 30 s. */
  jwksRefetchCooldownSeconds?: number;
  jwksTimeoutMs?: number;
  logger?: Logger;
}

/** Default JWKS of a Privy app (what `@privy-io/node` fetches): `<api url>/v1/apps/<app id>/jwks.json`. */
export function defaultPrivyJwksUrl(apiUrl: string, appId: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/v1/apps/${encodeURIComponent(appId)}/jwks.json`;
}

/**
 * Verifies Privy access tokens (spec 5, relay) and answers the user's wallets from the Privy API.
 *
 * The token is checked here rather than with the SDK's `verifyAccessToken` so that the platform's injected
 * clock and a bounded leeway apply (the SDK uses the system clock and no leeway): ES256 only, issuer
 * `privy.io`, audience = the app id, `exp`/`nbf`/`iat` within ≤ 30 s, a `sid` and a `sub`. The key is the
 * configured PEM, or the app's JWKS (cached; refetched when a token names an unknown `kid`, at most once per
 * cooldown, so forged kids cannot make us hammer Privy). Every failure is an AppError UNAUTHORIZED (401)
 * saying what was wrong; Privy being unreachable is SERVICE_UNAVAILABLE (503), since the token may be fine.
 */
export function createPrivyIdentityProvider(options: PrivyIdentityProviderOptions): IdentityProvider {
  const { appId, client, clock, logger } = options;
  if (!appId) throw new Error('the Privy identity provider needs the app id');
  const leeway = clampLeeway(options.leewaySeconds);
  const walletCacheMs = (options.walletCacheSeconds ?? 30) * 1000;
  const jwksCacheMs = (options.jwksCacheSeconds ?? 600) * 1000;
  const cooldownMs = (options.jwksRefetchCooldownSeconds ?? 30) * 1000;
  const doFetch = options.fetch ?? fetch;
  const nowMs = () => clock.now().getTime();

  let staticKey: KeyObject | undefined;
  if (options.verificationKey) {
    try {
      staticKey = createPublicKey({ key: options.verificationKey.replace(/\\n/g, '\n'), format: 'pem' });
    } catch (error) {
      throw new Error(`PRIVY_VERIFICATION_KEY is not a PEM public key: ${(error as Error).message}`);
    }
    if (staticKey.asymmetricKeyType !== 'ec' || staticKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new Error('PRIVY_VERIFICATION_KEY must be an ES256 (P-256) public key');
    }
  } else if (!options.jwksUrl) {
    throw new Error('the Privy identity provider needs a verification key or a JWKS URL');
  }

  // JWKS state: keys by kid, when they were fetched, when an unknown kid last forced a fetch.
  let jwks: { keys: Map<string, KeyObject>; fetchedAt: number } | undefined;
  let lastForcedFetch = Number.NEGATIVE_INFINITY;
  let jwksInFlight: Promise<Map<string, KeyObject>> | undefined;

  const fetchJwks = (): Promise<Map<string, KeyObject>> => {
    jwksInFlight ??= (async () => {
      const response = await doFetch(options.jwksUrl!, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(options.jwksTimeoutMs ?? 5_000),
      });
      if (!response.ok) throw new Error(`the Privy JWKS answered HTTP ${response.status}`);
      const body = (await response.json()) as { keys?: unknown };
      if (!Array.isArray(body.keys)) throw new Error('the Privy JWKS has no keys array');
      const keys = new Map<string, KeyObject>();
      for (const jwk of body.keys as Record<string, unknown>[]) {
        if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.kid !== 'string') continue;
        if (jwk.alg !== undefined && jwk.alg !== ALG) continue;
        if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string') continue;
        keys.set(jwk.kid, createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, format: 'jwk' }));
      }
      jwks = { keys, fetchedAt: nowMs() };
      return keys;
    })().finally(() => {
      jwksInFlight = undefined;
    });
    return jwksInFlight;
  };

  const unavailable = (error: unknown) => {
    logger?.warn({ err: error }, 'Privy signing keys could not be fetched');
    return new AppError(
      'SERVICE_UNAVAILABLE',
      'The Privy signing keys could not be fetched to verify the access token; retry shortly',
    );
  };

  const keyFor = async (kid: unknown): Promise<KeyObject> => {
    if (staticKey) return staticKey;
    if (typeof kid !== 'string' || kid === '') {
      throw unauthorized(`Access token key id ${JSON.stringify(kid ?? null)} is missing; Privy tokens name their key`);
    }
    if (!jwks || nowMs() - jwks.fetchedAt >= jwksCacheMs) {
      try {
        await fetchJwks();
      } catch (error) {
        // A stale JWKS still verifies tokens of keys it has while Privy is away.
        if (!jwks) throw unavailable(error);
        logger?.warn({ err: error }, 'Privy JWKS refresh failed; using the cached keys');
      }
    }
    let key = jwks?.keys.get(kid);
    if (!key && nowMs() - lastForcedFetch >= cooldownMs) {
      lastForcedFetch = nowMs();
      try {
        key = (await fetchJwks()).get(kid);
      } catch (error) {
        throw unavailable(error);
      }
    }
    if (!key) throw unauthorized(`Access token key id ${JSON.stringify(kid)} is not one of the Privy app's keys`);
    return key;
  };

  const verifyToken = async (token: string): Promise<{ sub: string }> => {
    const jws = parseEs256Jws(token);
    const key = await keyFor(jws.header.kid);
    const claims = verifyEs256Claims(jws, key, {
      clock,
      leewaySeconds: leeway,
      issuer: PRIVY_ISSUER,
      audience: appId,
      signer: 'not signed by this Privy app',
    });
    if (typeof claims.sid !== 'string' || claims.sid.length === 0) {
      throw unauthorized('Access token has no session id (sid)');
    }
    return { sub: claims.sub };
  };

  // The user's wallets, reused for a short while so a burst of relays costs one Privy read.
  const users = new Map<string, { expiresAt: number; user: Promise<User> }>();
  const MAX_CACHED_USERS = 10_000;
  const userFor = (userId: string): Promise<User> => {
    const cached = users.get(userId);
    if (cached && cached.expiresAt > nowMs()) return cached.user;
    const user = client.users()._get(userId);
    users.delete(userId);
    users.set(userId, { expiresAt: nowMs() + walletCacheMs, user });
    if (users.size > MAX_CACHED_USERS) users.delete(users.keys().next().value!);
    user.catch(() => {
      if (users.get(userId)?.user === user) users.delete(userId);
    });
    return user;
  };

  return {
    kind: 'privy',
    async verifyAccessToken(token) {
      const { sub } = await verifyToken(token);
      let user: User;
      try {
        user = await userFor(sub);
      } catch (error) {
        if (error instanceof NotFoundError) {
          throw unauthorized(`The access token's user ${sub} does not exist in this Privy app`);
        }
        logger?.warn({ err: error, userId: sub }, 'Privy user lookup failed');
        throw new AppError('SERVICE_UNAVAILABLE', "The user's wallets could not be read from Privy; retry shortly");
      }
      const email = user.linked_accounts.find((account) => account.type === 'email');
      const authenticated: AuthenticatedUser = { userId: sub, walletAddresses: ethereumWalletsOf(user) };
      if (email && 'address' in email && typeof email.address === 'string') authenticated.email = email.address;
      return authenticated;
    },
    async ping() {
      try {
        await client.apps().getSettings();
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * The Privy adapters when `PTS_IDENTITY_PROVIDER=privy` (undefined for `local`): one SDK client for the
 * identity provider (token verification, user wallets) and the wallet provider (users with pregenerated
 * wallets). Throws a startup error naming what is missing.
 */
export function privyAdaptersFromConfig(
  config: Pick<
    Config,
    | 'PTS_IDENTITY_PROVIDER'
    | 'PRIVY_APP_ID'
    | 'PRIVY_APP_SECRET'
    | 'PRIVY_API_URL'
    | 'PRIVY_VERIFICATION_KEY'
    | 'PRIVY_JWKS_URL'
  >,
  deps: { clock: Clock; logger?: Logger },
): { identity: IdentityProvider; wallets: PrivyWalletProvider } | undefined {
  if (config.PTS_IDENTITY_PROVIDER !== 'privy') return undefined;
  const missing = (['PRIVY_APP_ID', 'PRIVY_APP_SECRET'] as const).filter((key) => !config[key]);
  if (missing.length > 0) {
    throw new Error(
      `PTS_IDENTITY_PROVIDER=privy needs ${missing.join(' and ')} (from the Privy dashboard, App settings → Basics)`,
    );
  }
  const appId = config.PRIVY_APP_ID!;
  const apiUrl = config.PRIVY_API_URL ?? PRIVY_DEFAULT_API_URL;
  const client = createPrivyApiClient({ appId, appSecret: config.PRIVY_APP_SECRET!, apiUrl });
  return {
    identity: createPrivyIdentityProvider({
      appId,
      client,
      clock: deps.clock,
      verificationKey: config.PRIVY_VERIFICATION_KEY,
      jwksUrl: config.PRIVY_JWKS_URL ?? defaultPrivyJwksUrl(apiUrl, appId),
      ...(deps.logger ? { logger: deps.logger } : {}),
    }),
    wallets: createPrivyWalletProvider({ client }),
  };
}
