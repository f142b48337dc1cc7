import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '@pts/shared';
import { type Bot, GrammyError, webhookCallback } from 'grammy';
import type { Update } from 'grammy/types';
import pino, { type Logger } from 'pino';
import type { BotConfig } from '../config.ts';
import { createCoreClients } from '../core/core-clients.ts';
import type { BotDeps, GroupStore } from '../core/types.ts';
import { handleHealth, listenOrExplain } from '../health.ts';
import { createFileGroupStore } from '../store/group-store.ts';
import { createTelegramBot } from './bot.ts';

export interface RunningTelegramBot {
  /** The health (and, in webhook mode, webhook) server's URL. */
  url: string;
  stop(): Promise<void>;
}

/** What a test may replace. */
export interface TelegramOverrides {
  logger?: Logger;
  clock?: Clock;
  groups?: GroupStore;
  fetch?: typeof fetch;
  /** Aborts a start still waiting for the Bot API (tests). */
  signal?: AbortSignal;
  /** How long one getMe attempt may take before it is retried (ms). */
  connectAttemptMs?: number;
}

/**
 * Starts the Telegram bot as `npm run bot:telegram` does: long polling by default, or webhook mode (registers
 * the webhook with its secret token; the HTTP server refuses updates without the right
 * `X-Telegram-Bot-Api-Secret-Token` with 401). `/health` is served on HEALTH_PORT in both modes.
 */
export async function startTelegramBot(
  config: BotConfig,
  overrides: TelegramOverrides = {},
): Promise<RunningTelegramBot> {
  if (!config.TELEGRAM_BOT_TOKEN)
    throw new Error('TELEGRAM_BOT_TOKEN is required: create a bot with @BotFather (docs/bots.md)');
  const logger =
    overrides.logger ?? pino({ level: config.LOG_LEVEL, redact: ['securityKey', '*.securityKey', 'token'] });
  const clock = overrides.clock ?? systemClock;
  const deps: BotDeps = {
    coreClient: createCoreClients({ baseUrl: config.PTS_CORE_API_URL, clock, fetch: overrides.fetch }),
    groups: overrides.groups ?? createFileGroupStore({ dir: config.BOT_DATA_DIR, masterKey: config.masterKey }),
    logger,
    clock,
    serviceDomain: config.PTS_SERVICE_DOMAIN,
  };
  const { bot } = createTelegramBot({
    token: config.TELEGRAM_BOT_TOKEN,
    deps,
    ...(config.TELEGRAM_API_ROOT ? { apiRoot: config.TELEGRAM_API_ROOT } : {}),
  });
  let ready = false;
  let waitingFor: string | undefined;
  const state = {
    platform: 'telegram',
    ready: () => ready,
    startedAt: new Date(),
    waitingFor: () => waitingFor,
  };
  const webhookPath = config.TELEGRAM_WEBHOOK_URL ? new URL(config.TELEGRAM_WEBHOOK_URL).pathname : '/telegram/webhook';
  // The body is read and parsed here (not by grammY's http adapter, which throws on malformed JSON), so a
  // bad body is a 400 and an oversized one a 413.
  const onWebhook =
    config.TELEGRAM_MODE === 'webhook'
      ? webhookCallback(
          bot,
          (update: unknown, secret: string | undefined, res: ServerResponse) => ({
            update: Promise.resolve(update as Update),
            header: secret,
            end: () => res.end(),
            respond: (json: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(json),
            unauthorized: () => res.writeHead(401, { 'content-type': 'text/plain' }).end('secret token is wrong'),
          }),
          { secretToken: config.TELEGRAM_WEBHOOK_SECRET, onTimeout: 'return' },
        )
      : undefined;
  const server: Server = createServer((req, res) => {
    if (handleHealth(state, req, res)) return;
    if (onWebhook && req.method === 'POST' && (req.url ?? '').split('?')[0] === webhookPath) {
      readJsonBody(req, WEBHOOK_BODY_LIMIT_BYTES)
        .then((update) => {
          if (update === undefined) return void res.writeHead(400, JSON_TYPE).end('{"error":"body is not JSON"}');
          if (update === TOO_LARGE) return void res.writeHead(413, JSON_TYPE).end('{"error":"body too large"}');
          if (!isUpdateShaped(update)) {
            return void res
              .writeHead(400, JSON_TYPE)
              .end('{"error":"body is not a Telegram update: an object with an integer update_id"}');
          }
          const secret = req.headers['x-telegram-bot-api-secret-token'];
          return onWebhook(update, typeof secret === 'string' ? secret : undefined, res);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'webhook update failed');
          if (!res.headersSent) res.writeHead(500).end();
        });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  await listenOrExplain(server, config.HEALTH_PORT, 'HEALTH_PORT');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // getMe first: while the Bot API cannot be reached the bot says so (log, /health) and keeps trying; a
  // token Telegram refuses stops the start with one sentence, before any key file is written.
  const apiRoot = config.TELEGRAM_API_ROOT ?? 'https://api.telegram.org';
  try {
    await connect(bot, {
      apiRoot,
      logger,
      attemptMs: overrides.connectAttemptMs ?? 15_000,
      signal: overrides.signal,
      waiting: (reason) => {
        waitingFor = reason;
      },
    });
  } catch (error) {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    throw error;
  }
  waitingFor = undefined;
  config.keepMasterKey();

  if (config.TELEGRAM_MODE === 'webhook') {
    await bot.api.setWebhook(config.TELEGRAM_WEBHOOK_URL as string, {
      secret_token: config.TELEGRAM_WEBHOOK_SECRET as string,
      allowed_updates: ['message', 'callback_query'],
    });
    ready = true;
    logger.info({ mode: 'webhook', bot: bot.botInfo.username, path: webhookPath }, 'telegram bot started');
  } else {
    void bot
      .start({
        allowed_updates: ['message', 'callback_query'],
        onStart: (me) => {
          ready = true;
          logger.info({ mode: 'polling', bot: me.username }, 'telegram bot started');
        },
      })
      .catch((error: unknown) => {
        ready = false;
        logger.fatal({ err: error }, 'telegram polling stopped');
      });
  }

  return {
    url,
    async stop() {
      ready = false;
      if (bot.isRunning()) await bot.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
const JSON_TYPE = { 'content-type': 'application/json' };
const TOO_LARGE = Symbol('too large');

/** The request's JSON body; undefined when it is not JSON, TOO_LARGE past the limit. */
function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.once('error', reject);
    req.once('end', () => {
      if (size > limit) return resolve(TOO_LARGE);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** Telegram posts objects with an integer `update_id`; anything else (null, a string id) is the sender's error. */
function isUpdateShaped(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    Number.isSafeInteger((body as { update_id?: unknown }).update_id)
  );
}

/**
 * `getMe` until it answers: each failure (unreachable, timed out, 5xx) is logged with what the bot waits for
 * and reported on /health; 401/404 (a token Telegram refuses) end the start with a sentence naming the fix.
 */
async function connect(
  bot: Bot,
  options: {
    apiRoot: string;
    logger: Logger;
    attemptMs: number;
    signal: AbortSignal | undefined;
    waiting(reason: string): void;
  },
): Promise<void> {
  const { logger } = options;
  const what = `the Telegram Bot API at ${options.apiRoot} (getMe)`;
  options.waiting(what);
  logger.info(`connecting to ${what}`);
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new Error(`gave up waiting for ${what}`);
    const signal = options.signal
      ? AbortSignal.any([options.signal, AbortSignal.timeout(options.attemptMs)])
      : AbortSignal.timeout(options.attemptMs);
    try {
      // grammY types its signal with the abort-controller polyfill; the platform AbortSignal is what it uses.
      await bot.init(signal as Parameters<Bot['init']>[0]);
      if (attempt > 1) logger.info(`${what} answered`);
      return;
    } catch (error) {
      if (error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)) {
        throw new Error(
          `Telegram refused TELEGRAM_BOT_TOKEN (${error.error_code} ${error.description}): copy the token again from @BotFather`,
        );
      }
      const reason = error instanceof Error ? error.message : String(error);
      const delayMs = Math.min(30_000, 1000 * 2 ** Math.min(attempt - 1, 5));
      options.waiting(`${what}: ${reason}`);
      logger.warn(
        { attempt, retryInSeconds: delayMs / 1000, reason },
        `waiting for ${what}: not reachable yet, retrying`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        options.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
