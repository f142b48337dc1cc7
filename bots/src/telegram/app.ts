import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '@pts/shared';
import { webhookCallback } from 'grammy';
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
  const onWebhook =
    config.TELEGRAM_MODE === 'webhook'
      ? webhookCallback(bot, 'http', { secretToken: config.TELEGRAM_WEBHOOK_SECRET, onTimeout: 'return' })
      : undefined;
  const server: Server = createServer((req, res) => {
    if (handleHealth(state, req, res)) return;
    if (onWebhook && req.method === 'POST' && (req.url ?? '').split('?')[0] === webhookPath) {
      onWebhook(req, res).catch((error: unknown) => {
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
