import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SocialProvider = 'discord' | 'telegram' | 'x' | 'github';

export interface FakeSocialRequest {
  provider: SocialProvider;
  method: string;
  /** Path with the Telegram bot token replaced by `<token>`. */
  path: string;
  authorization: string | undefined;
}

export interface FakeSocialApis {
  url: string;
  tokens: Record<SocialProvider, string>;
  /** Discord users by id (`GET /api/v10/users/{id}`). */
  discord: Map<string, { username: string; bot?: boolean }>;
  /** Telegram chats by id, as the bot sees them (`getChat`). */
  telegram: Map<
    string,
    { type: 'private' | 'group' | 'supergroup' | 'channel'; username?: string; first_name?: string }
  >;
  /** X users by id (`GET /2/users/{id}`); `suspended` answers X's suspended-user error. */
  x: Map<string, { username: string; name: string; suspended?: boolean }>;
  /** GitHub accounts by id (`GET /user/{id}`). */
  github: Map<string, { login: string; type: 'User' | 'Organization' | 'Bot' }>;
  /** Providers that answer 503 (an outage) while listed. */
  failing: Set<SocialProvider>;
  /** Providers that answer 429 (rate limited) while listed. */
  rateLimited: Set<SocialProvider>;
  requests: FakeSocialRequest[];
  close(): Promise<void>;
}

/**
 * Local fakes of the four provider APIs the account verifiers call, on one port, speaking each provider's
 * wire format: Discord's `GET /api/v10/users/{id}` (`Authorization: Bot …`, 404 `Unknown User` code 10013),
 * Telegram's Bot API `getChat` (token in the path, `{ok, result}` / `{ok:false, error_code, description}`),
 * X's `GET /2/users/{id}` (Bearer; an unknown id answers 200 with `errors[]`, as X does) and GitHub's
 * `GET /user/{id}` (404 `Not Found`).
 */
export async function startFakeSocialApis(): Promise<FakeSocialApis> {
  const tokens: Record<SocialProvider, string> = {
    discord: `MTE${randomBytes(24).toString('base64url')}`,
    telegram: `${100000 + Math.floor(Math.random() * 900000)}:AA${randomBytes(16).toString('base64url')}`,
    x: `AAAAAAAAAAAAAAAAAAAAA${randomBytes(24).toString('base64url')}`,
    github: `ghp_${randomBytes(18).toString('hex')}`,
  };
  const state: Omit<FakeSocialApis, 'url' | 'tokens' | 'close'> = {
    discord: new Map(),
    telegram: new Map(),
    x: new Map(),
    github: new Map(),
    failing: new Set(),
    rateLimited: new Set(),
    requests: [],
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  /** Outage and rate-limit switches; true when the request was answered. */
  const interrupted = (provider: SocialProvider, res: ServerResponse) => {
    if (state.failing.has(provider)) {
      send(res, 503, { message: 'Service Unavailable' });
      return true;
    }
    if (state.rateLimited.has(provider)) {
      send(res, 429, { message: 'You are being rate limited.', retry_after: 1.5 }, { 'retry-after': '2' });
      return true;
    }
    return false;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake.social');
    const method = req.method ?? 'GET';
    const authorization = req.headers.authorization;
    const record = (provider: SocialProvider, path = url.pathname) =>
      state.requests.push({ provider, method, path, authorization });

    const discord = /^\/api\/v10\/users\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && discord) {
      record('discord');
      if (interrupted('discord', res)) return;
      if (authorization !== `Bot ${tokens.discord}`) return send(res, 401, { message: '401: Unauthorized', code: 0 });
      const user = state.discord.get(discord[1]!);
      if (!user) return send(res, 404, { message: 'Unknown User', code: 10013 });
      return send(res, 200, {
        id: discord[1],
        username: user.username,
        discriminator: '0',
        global_name: user.username,
        avatar: null,
        ...(user.bot ? { bot: true } : {}),
      });
    }

    const telegram = /^\/bot([^/]+)\/getChat$/.exec(url.pathname);
    if (telegram) {
      record('telegram', url.pathname.replace(telegram[1]!, '<token>'));
      if (interrupted('telegram', res)) return;
      if (telegram[1] !== tokens.telegram) {
        return send(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      }
      const chatId = url.searchParams.get('chat_id') ?? '';
      const chat = state.telegram.get(chatId);
      if (!chat) return send(res, 400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
      return send(res, 200, { ok: true, result: { id: Number(chatId), ...chat } });
    }

    const x = /^\/2\/users\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && x) {
      record('x');
      if (interrupted('x', res)) return;
      if (authorization !== `Bearer ${tokens.x}`) {
        return send(res, 401, { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
      }
      const id = x[1]!;
      const user = state.x.get(id);
      if (!user) {
        return send(res, 200, {
          errors: [
            {
              value: id,
              detail: `Could not find user with id: [${id}].`,
              title: 'Not Found Error',
              resource_type: 'user',
              parameter: 'id',
              resource_id: id,
              type: 'https://api.twitter.com/2/problems/resource-not-found',
            },
          ],
        });
      }
      if (user.suspended) {
        return send(res, 200, {
          errors: [
            {
              value: id,
              detail: `User has been suspended: [${id}].`,
              title: 'Forbidden',
              resource_type: 'user',
              parameter: 'id',
              resource_id: id,
              type: 'https://api.twitter.com/2/problems/resource-not-found',
            },
          ],
        });
      }
      return send(res, 200, { data: { id, name: user.name, username: user.username } });
    }

    const github = /^\/user\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && github) {
      record('github');
      if (interrupted('github', res)) return;
      if (authorization !== `Bearer ${tokens.github}`) {
        return send(res, 401, {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        });
      }
      const account = state.github.get(github[1]!);
      if (!account) {
        return send(res, 404, {
          message: 'Not Found',
          documentation_url: 'https://docs.github.com/rest',
          status: '404',
        });
      }
      return send(res, 200, { login: account.login, id: Number(github[1]), type: account.type, site_admin: false });
    }

    send(res, 404, { message: `no fake route for ${method} ${url.pathname.replace(/\/bot[^/]+\//, '/bot<token>/')}` });
  };

  const server: Server = createServer(handle);
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    ...state,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
