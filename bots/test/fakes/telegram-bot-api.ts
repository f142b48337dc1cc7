import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Bot API call the fake received. */
export interface BotApiCall {
  method: string;
  params: Record<string, unknown>;
}

export type MemberStatus = 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';

interface PendingPoll {
  offset: number;
  res: ServerResponse;
  timer: NodeJS.Timeout;
}

/**
 * A local fake of the Telegram Bot API over HTTP (`POST /bot<token>/<method>`, JSON or form bodies): getMe,
 * getUpdates long polling fed by `pushUpdate`, sendMessage, answerCallbackQuery, editMessageText,
 * deleteMessage, getChatMember (statuses set by the test), setWebhook/deleteWebhook; `failNext` answers 429
 * with `retry_after` like Telegram's flood control.
 */
export interface FakeBotApi {
  /** The API root for `new Bot(token, { client: { apiRoot } })`. */
  apiRoot: string;
  token: string;
  botUser: { id: number; is_bot: true; first_name: string; username: string };
  calls: BotApiCall[];
  pushUpdate(update: Record<string, unknown>): number;
  setMember(chatId: number, userId: number, status: MemberStatus): void;
  /** Private messages to this user answer 403, as for a user who never started the bot. */
  blockPrivate(userId: number): void;
  /** The next `count` calls of `method` answer 429 with `retry_after`. */
  failNext(method: string, retryAfter: number, count?: number): void;
  /** Resolves with the first call of `method` (from `since`) matching `predicate`. */
  waitForCall(
    method: string,
    predicate?: (params: Record<string, unknown>) => boolean,
    since?: number,
    timeoutMs?: number,
  ): Promise<BotApiCall>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) return {};
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  if (type.includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw)) as Record<string, unknown>;
  }
  if (type.includes('multipart/form-data')) {
    const boundary = /boundary=(.+)$/.exec(type)?.[1];
    const params: Record<string, unknown> = {};
    for (const part of raw.split(`--${boundary}`)) {
      const match = /name="([^"]+)"\r\n\r\n([\s\S]*)\r\n$/.exec(part);
      if (match) {
        const value = match[2] as string;
        try {
          params[match[1] as string] = JSON.parse(value);
        } catch {
          params[match[1] as string] = value;
        }
      }
    }
    return params;
  }
  throw new Error(`unsupported content-type ${type}`);
}

/** Starts the fake on a free local port. */
export async function startFakeBotApi(token = '123456:TEST-token-abcdefghijklmnop'): Promise<FakeBotApi> {
  const botUser = { id: 123456, is_bot: true as const, first_name: 'pts', username: 'pts_test_bot' };
  const updates: { update_id: number; [key: string]: unknown }[] = [];
  const polls = new Set<PendingPoll>();
  const members = new Map<string, MemberStatus>();
  const blockedPrivate = new Set<number>();
  const failures = new Map<string, { retryAfter: number; count: number }>();
  const calls: BotApiCall[] = [];
  const waiters = new Set<() => void>();
  let nextUpdateId = 1;
  let nextMessageId = 1000;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const ok = (res: ServerResponse, result: unknown) => json(res, 200, { ok: true, result });

  const pending = (offset: number) => updates.filter((u) => u.update_id >= offset);
  const flushPolls = () => {
    for (const poll of polls) {
      const ready = pending(poll.offset);
      if (ready.length === 0) continue;
      clearTimeout(poll.timer);
      polls.delete(poll);
      ok(poll.res, ready);
    }
  };

  const message = (params: Record<string, unknown>) => ({
    message_id: ++nextMessageId,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(params.chat_id), type: Number(params.chat_id) < 0 ? 'supergroup' : 'private', title: 'Fans' },
    from: botUser,
    text: params.text,
    ...(params.reply_markup ? { reply_markup: params.reply_markup } : {}),
  });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
      if (!match || match[1] !== token) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      const method = match[2] as string;
      const params = await readBody(req);
      calls.push({ method, params });
      for (const wake of waiters) wake();
      const failure = failures.get(method);
      if (failure && failure.count > 0) {
        failure.count--;
        return json(res, 429, {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${failure.retryAfter}`,
          parameters: { retry_after: failure.retryAfter },
        });
      }
      switch (method) {
        case 'getMe':
          return ok(res, {
            ...botUser,
            can_join_groups: true,
            can_read_all_group_messages: true,
            supports_inline_queries: false,
          });
        case 'getUpdates': {
          const offset = Number(params.offset ?? 0);
          // Confirming an offset drops the updates before it, as Telegram does.
          for (let i = updates.length - 1; i >= 0; i--)
            if ((updates[i] as { update_id: number }).update_id < offset) updates.splice(i, 1);
          const ready = pending(offset);
          const timeout = Math.min(Number(params.timeout ?? 0), 2);
          if (ready.length > 0 || timeout === 0) return ok(res, ready);
          const poll: PendingPoll = {
            offset,
            res,
            timer: setTimeout(() => {
              polls.delete(poll);
              ok(res, []);
            }, timeout * 1000),
          };
          polls.add(poll);
          req.once('close', () => {
            clearTimeout(poll.timer);
            polls.delete(poll);
          });
          return;
        }
        case 'sendMessage':
          if (blockedPrivate.has(Number(params.chat_id))) {
            return json(res, 403, {
              ok: false,
              error_code: 403,
              description: "Forbidden: bot can't initiate conversation with a user",
            });
          }
          return ok(res, message(params));
        case 'editMessageText':
          return ok(res, { ...message(params), message_id: Number(params.message_id) });
        case 'answerCallbackQuery':
        case 'deleteMessage':
        case 'setWebhook':
        case 'deleteWebhook':
          return ok(res, true);
        case 'getChatMember': {
          const status = members.get(`${params.chat_id}:${params.user_id}`) ?? 'member';
          return ok(res, { status, user: { id: Number(params.user_id), is_bot: false, first_name: 'User' } });
        }
        default:
          return json(res, 404, {
            ok: false,
            error_code: 404,
            description: `Not Found: method ${method} is not faked`,
          });
      }
    })().catch((error: unknown) => json(res, 500, { ok: false, error_code: 500, description: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiRoot,
    token,
    botUser,
    calls,
    pushUpdate(update) {
      const update_id = nextUpdateId++;
      updates.push({ update_id, ...update });
      flushPolls();
      return update_id;
    },
    setMember(chatId, userId, status) {
      members.set(`${chatId}:${userId}`, status);
    },
    blockPrivate(userId) {
      blockedPrivate.add(userId);
    },
    failNext(method, retryAfter, count = 1) {
      failures.set(method, { retryAfter, count });
    },
    waitForCall(method, predicate = () => true, since = 0, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = calls.slice(since).find((c) => c.method === method && predicate(c.params));
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no ${method} call within ${timeoutMs} ms; calls: ${calls
                .slice(since)
                .map((c) => c.method)
                .join(', ')}`,
            ),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async close() {
      for (const poll of polls) {
        clearTimeout(poll.timer);
        if (!poll.res.headersSent) ok(poll.res, []);
      }
      polls.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
