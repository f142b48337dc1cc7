import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '@pts/shared';
import { webhookCallback } from 'grammy';
import type { Update } from 'grammy/types';
import pino, { type Logger } from 'pino';
import type { BotConfig } from '../config.ts';
import { createCoreClients } from '../core/core-clients.ts';
import type { BotDeps, GroupStore } from '../core/types.ts';
import { handleHealth } from '../health.ts';
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
  await bot.init();
  let ready = false;
  const state = { platform: 'telegram', ready: () => ready, startedAt: new Date() };
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.HEALTH_PORT, resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

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
