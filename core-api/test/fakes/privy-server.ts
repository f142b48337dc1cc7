import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/** A linked account as the fake stores and answers it (Privy's `linked_accounts[]` items). */
export type FakeLinkedAccount = Record<string, unknown> & { type: string };

/** A user as Privy's REST API answers it (`GET /v1/users/{id}`). */
export interface FakePrivyUser {
  id: string;
  created_at: number;
  has_accepted_terms: boolean;
  is_guest: boolean;
  linked_accounts: FakeLinkedAccount[];
  mfa_methods: unknown[];
  custom_metadata?: Record<string, unknown>;
}

export interface FakePrivyRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface MintTokenInput {
  userId: string;
  /** Seconds since the epoch the token is issued at; default: now. */
  issuedAt?: number;
  ttlSeconds?: number;
  /** Claims to add or replace (`undefined` removes one). */
  claims?: Record<string, unknown>;
  /** Header fields to add or replace (`undefined` removes one). */
  header?: Record<string, unknown>;
  /** Sign with this key instead of the app's current key (a forgery). */
  key?: KeyObject;
}

export interface FakePrivyServer {
  url: string;
  appId: string;
  appSecret: string;
  users: Map<string, FakePrivyUser>;
  requests: FakePrivyRequest[];
  /** How many times the JWKS was served. */
  jwksRequests: number;
  /** SPKI PEM of the current signing key (the dashboard's "verification key"). */
  verificationKeyPem(): string;
  /** `kid` of the current signing key. */
  readonly kid: string;
  /** A new signing key (the old one leaves the JWKS); returns its kid. */
  rotateKey(): string;
  /** An ES256 access token as Privy issues it: iss privy.io, aud app id, sub DID, sid, iat, exp. */
  mintAccessToken(input: MintTokenInput): string;
  /** A user created directly (as if through the dashboard or a login), bypassing the API. */
  addUser(linkedAccounts: FakeLinkedAccount[], options?: { wallet?: boolean }): FakePrivyUser;
  /** While true every API call answers 503 like a Privy outage. */
  failing: boolean;
  close(): Promise<void>;
}

/** The fields each importable linked account type requires (Privy's `LinkedAccount*Input`). */
const REQUIRED_FIELDS: Record<string, string[]> = {
  email: ['address'],
  discord_oauth: ['subject', 'username'],
  twitter_oauth: ['subject', 'username', 'name'],
  github_oauth: ['subject', 'username'],
  google_oauth: ['subject', 'email', 'name'],
  spotify_oauth: ['subject'],
  instagram_oauth: ['subject', 'username'],
  tiktok_oauth: ['subject', 'username'],
  telegram: ['telegram_user_id'],
  custom_auth: ['custom_user_id'],
};

/** The handle that makes a linked account unique across an app's users. */
function handleOf(account: FakeLinkedAccount): string {
  switch (account.type) {
    case 'email':
      return `email:${String(account.address).toLowerCase()}`;
    case 'telegram':
      return `telegram:${account.telegram_user_id}`;
    case 'custom_auth':
      return `custom_auth:${account.custom_user_id}`;
    case 'wallet':
      return `wallet:${String(account.address).toLowerCase()}`;
    default:
      return `${account.type}:${account.subject}`;
  }
}

const DID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
function newDid(): string {
  const bytes = randomBytes(25);
  return `did:privy:c${Array.from(bytes, (byte) => DID_ALPHABET[byte % DID_ALPHABET.length]).join('')}`;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A local Privy REST API over HTTP: the routes `@privy-io/node` calls for users, wallets and the app, with
 * Privy's authentication (Basic `app_id:app_secret` plus the `privy-app-id` header), plus the app's JWKS and
 * a signer for access tokens shaped like Privy's. Creating a user whose linked account already belongs to a
 * user answers 409, as Privy refuses duplicate linked accounts.
 */
export async function startFakePrivyServer(
  options: { appId?: string; appSecret?: string } = {},
): Promise<FakePrivyServer> {
  const appId = options.appId ?? `cm${randomBytes(11).toString('hex')}`;
  const appSecret = options.appSecret ?? randomBytes(32).toString('base64url');
  const users = new Map<string, FakePrivyUser>();
  const owners = new Map<string, string>();
  const requests: FakePrivyRequest[] = [];
  const state = { jwksRequests: 0, failing: false };
  let signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  let kid = randomBytes(8).toString('hex');
  const expectedAuth = `Basic ${Buffer.from(`${appId}:${appSecret}`).toString('base64')}`;
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  const newWallet = (index: number): FakeLinkedAccount => {
    const now = nowSeconds();
    return {
      id: createHash('sha256').update(randomBytes(16)).digest('hex').slice(0, 24),
      type: 'wallet',
      address: privateKeyToAccount(generatePrivateKey()).address,
      chain_id: 'eip155:1',
      chain_type: 'ethereum',
      wallet_client: 'privy',
      wallet_client_type: 'privy',
      connector_type: 'embedded',
      recovery_method: 'privy',
      imported: false,
      delegated: false,
      wallet_index: index,
      verified_at: now,
      first_verified_at: now,
      latest_verified_at: now,
    };
  };

  const storeUser = (accounts: FakeLinkedAccount[], walletCount: number): FakePrivyUser => {
    const now = nowSeconds();
    const linked: FakeLinkedAccount[] = accounts.map((account) => ({
      ...(account.type === 'discord_oauth' || account.type === 'github_oauth' ? { email: null } : {}),
      ...account,
      ...(account.type === 'email' ? { address: String(account.address).toLowerCase() } : {}),
      verified_at: now,
      first_verified_at: now,
      latest_verified_at: now,
    }));
    for (let index = 0; index < walletCount; index += 1) linked.push(newWallet(index));
    const user: FakePrivyUser = {
      id: newDid(),
      created_at: now,
      has_accepted_terms: false,
      is_guest: false,
      linked_accounts: linked,
      mfa_methods: [],
    };
    users.set(user.id, user);
    for (const account of linked) owners.set(handleOf(account), user.id);
    return user;
  };

  const findBy = (handle: string): FakePrivyUser | undefined => {
    const id = owners.get(handle);
    return id === undefined ? undefined : users.get(id);
  };
  const findByAccount = (predicate: (account: FakeLinkedAccount) => boolean) =>
    [...users.values()].find((user) => user.linked_accounts.some(predicate));

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse) => send(res, 404, { error: 'User not found' });

  /** The lookup routes (`POST /v1/users/<kind>/<field>`), keyed by path, as the SDK calls them. */
  const lookups: Record<string, (body: Record<string, unknown>) => FakePrivyUser | undefined> = {
    '/v1/users/email/address': (body) => findBy(`email:${String(body.address ?? '').toLowerCase()}`),
    '/v1/users/wallet/address': (body) => findBy(`wallet:${String(body.address ?? '').toLowerCase()}`),
    '/v1/users/custom_auth/id': (body) => findBy(`custom_auth:${body.custom_user_id}`),
    '/v1/users/twitter/subject': (body) => findBy(`twitter_oauth:${body.subject}`),
    '/v1/users/telegram/telegram_user_id': (body) => findBy(`telegram:${body.telegram_user_id}`),
    '/v1/users/discord/username': (body) =>
      findByAccount((account) => account.type === 'discord_oauth' && account.username === body.username),
    '/v1/users/github/username': (body) =>
      findByAccount((account) => account.type === 'github_oauth' && account.username === body.username),
    '/v1/users/twitter/username': (body) =>
      findByAccount((account) => account.type === 'twitter_oauth' && account.username === body.username),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake.privy');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    if (raw) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        send(res, 400, { error: 'Invalid JSON body' });
        return;
      }
    }
    const path = url.pathname;
    const method = req.method ?? 'GET';

    // The app's JWKS is public, as Privy's is.
    if (method === 'GET' && path === `/v1/apps/${appId}/jwks.json`) {
      state.jwksRequests += 1;
      const jwk = signingKey.export({ format: 'jwk' });
      send(res, 200, { keys: [{ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' }] });
      return;
    }
    requests.push({ method, path, body });
    if (state.failing) {
      send(res, 503, { error: 'Service temporarily unavailable' });
      return;
    }
    if (req.headers['privy-app-id'] !== appId) {
      send(res, 401, { error: 'Missing or invalid privy-app-id header' });
      return;
    }
    if (req.headers.authorization !== expectedAuth) {
      send(res, 401, { error: 'Invalid app ID or app secret' });
      return;
    }

    if (method === 'GET' && path === `/v1/apps/${appId}`) {
      send(res, 200, { id: appId, name: 'Fake Privy app', logo_url: null, embedded_wallet_config: {} });
      return;
    }
    if (method === 'POST' && path === '/v1/users') {
      const accounts = body.linked_accounts;
      if (!Array.isArray(accounts) || accounts.length === 0) {
        send(res, 400, { error: 'linked_accounts must be a non-empty array' });
        return;
      }
      for (const account of accounts as FakeLinkedAccount[]) {
        const required = REQUIRED_FIELDS[account?.type];
        if (!required) {
          send(res, 400, { error: `Unsupported linked account type: ${String(account?.type)}` });
          return;
        }
        const missing = required.filter((field) => typeof account[field] !== 'string' || account[field] === '');
        if (missing.length > 0) {
          send(res, 400, { error: `Invalid ${account.type} linked account: missing ${missing.join(', ')}` });
          return;
        }
        if (owners.has(handleOf(account))) {
          send(res, 409, { error: `User with linked account ${account.type} already exists` });
          return;
        }
      }
      const wallets = Array.isArray(body.wallets) ? (body.wallets as { chain_type?: unknown }[]) : [];
      if (wallets.some((wallet) => wallet?.chain_type !== 'ethereum')) {
        send(res, 400, { error: 'The fake supports only chain_type "ethereum" wallets' });
        return;
      }
      const user = storeUser(accounts as FakeLinkedAccount[], wallets.length);
      if (body.custom_metadata && typeof body.custom_metadata === 'object') {
        user.custom_metadata = body.custom_metadata as Record<string, unknown>;
      }
      send(res, 200, user);
      return;
    }
    const walletsMatch = /^\/v1\/users\/(did:privy:[a-z0-9]+)\/wallets$/.exec(path);
    if (method === 'POST' && walletsMatch) {
      const user = users.get(walletsMatch[1]!);
      if (!user) return notFound(res);
      const wanted = Array.isArray(body.wallets) ? (body.wallets as { chain_type?: unknown }[]) : [];
      if (wanted.length === 0 || wanted.some((wallet) => wallet?.chain_type !== 'ethereum')) {
        send(res, 400, { error: 'wallets must list chain_type "ethereum" wallets' });
        return;
      }
      for (const _ of wanted) {
        const index = user.linked_accounts.filter((account) => account.type === 'wallet').length;
        const wallet = newWallet(index);
        user.linked_accounts.push(wallet);
        owners.set(handleOf(wallet), user.id);
      }
      send(res, 200, user);
      return;
    }
    const userMatch = /^\/v1\/users\/(did:privy:[a-z0-9]+)$/.exec(path);
    if (method === 'GET' && userMatch) {
      const user = users.get(userMatch[1]!);
      if (!user) return notFound(res);
      send(res, 200, user);
      return;
    }
    const lookup = method === 'POST' ? lookups[path] : undefined;
    if (lookup) {
      const user = lookup(body);
      if (!user) return notFound(res);
      send(res, 200, user);
      return;
    }
    send(res, 404, { error: `No route ${method} ${path}` });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: String(error) }));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    appId,
    appSecret,
    users,
    requests,
    get jwksRequests() {
      return state.jwksRequests;
    },
    set jwksRequests(value: number) {
      state.jwksRequests = value;
    },
    get failing() {
      return state.failing;
    },
    set failing(value: boolean) {
      state.failing = value;
    },
    get kid() {
      return kid;
    },
    verificationKeyPem: () => createPublicKey(signingKey).export({ format: 'pem', type: 'spki' }).toString(),
    rotateKey() {
      signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      kid = randomBytes(8).toString('hex');
      return kid;
    },
    mintAccessToken(input) {
      const iat = input.issuedAt ?? nowSeconds();
      const header: Record<string, unknown> = { alg: 'ES256', typ: 'JWT', kid, ...input.header };
      const claims: Record<string, unknown> = {
        sid: `sess_${randomBytes(8).toString('hex')}`,
        iss: 'privy.io',
        iat,
        aud: appId,
        sub: input.userId,
        exp: iat + (input.ttlSeconds ?? 3600),
        ...input.claims,
      };
      const signingInput = `${b64(header)}.${b64(claims)}`;
      const signature = sign('sha256', Buffer.from(signingInput), {
        key: input.key ?? signingKey,
        dsaEncoding: 'ieee-p1363',
      });
      return `${signingInput}.${signature.toString('base64url')}`;
    },
    addUser(linkedAccounts, addOptions = {}) {
      return storeUser(linkedAccounts, addOptions.wallet === false ? 0 : 1);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
