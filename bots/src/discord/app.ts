import { type Clock, systemClock } from '@pts/shared';
import type { Client } from 'discord.js';
import pino, { type Logger } from 'pino';
import { createCoreClients } from '../core/core-clients.ts';
import type { BotDeps, GroupStore } from '../core/types.ts';
import { createFileGroupStore } from '../store/group-store.ts';
import { attachDiscordBot } from './bot.ts';
import { createDiscordClient } from './client.ts';
import type { DiscordBotConfig } from './config.ts';
import { createDiscordCore } from './core-binding.ts';
import { type HealthServer, startHealthServer } from './health.ts';

export interface RunningDiscordBot {
  client: Client;
  /** `http://127.0.0.1:PORT`, serving `GET /health`. */
  healthUrl: string;
  /** Graceful shutdown: stops taking events, closes the gateway session, then the health server. */
  stop(): Promise<void>;
}

/** What a test may replace. */
export interface DiscordOverrides {
  logger?: Logger;
  clock?: Clock;
  groups?: GroupStore;
  coreClient?: BotDeps['coreClient'];
  fetch?: typeof fetch;
  deferAfterMs?: number;
}

/**
 * Starts the Discord bot as `npm run bot:discord` does: the health server first (503 until the gateway is
 * ready), then the gateway login; resolves once the bot is ready.
 */
export async function startDiscordBot(
  config: DiscordBotConfig,
  overrides: DiscordOverrides = {},
): Promise<RunningDiscordBot> {
  const logger =
    overrides.logger ??
    pino({ level: config.LOG_LEVEL, redact: ['securityKey', '*.securityKey', 'token', '*.token', 'args'] });
  const clock = overrides.clock ?? systemClock;
  const deps: BotDeps = {
    coreClient:
      overrides.coreClient ?? createCoreClients({ baseUrl: config.PTS_CORE_API_URL, clock, fetch: overrides.fetch }),
    groups: overrides.groups ?? createFileGroupStore({ dir: config.BOT_DATA_DIR, masterKey: config.masterKey }),
    logger,
    clock,
    serviceDomain: config.PTS_SERVICE_DOMAIN,
  };

  const client = createDiscordClient({ apiUrl: config.discord.DISCORD_API_URL });
  const detach = attachDiscordBot(client, createDiscordCore(deps), {
    logger,
    ...(overrides.deferAfterMs !== undefined ? { deferAfterMs: overrides.deferAfterMs } : {}),
  });
  client.on('error', (error) => logger.error({ err: error }, 'discord client error'));
  client.on('warn', (message) => logger.warn({ message }, 'discord client warning'));
  client.on('shardDisconnect', (event, shardId) => logger.warn({ code: event.code, shardId }, 'gateway disconnected'));
  client.on('shardReconnecting', (shardId) => logger.info({ shardId }, 'gateway reconnecting'));

  let health: HealthServer | undefined;
  try {
    health = await startHealthServer(client, config.HEALTH_PORT);
    const ready = new Promise<void>((resolve) => client.once('clientReady', () => resolve()));
    await client.login(config.discord.DISCORD_BOT_TOKEN);
    await ready;
    // Discord accepted the token: only now is a generated store key worth keeping.
    config.keepMasterKey();
  } catch (error) {
    detach();
    await client.destroy();
    await health?.close();
    throw error;
  }
  logger.info({ user: client.user?.tag, guilds: client.guilds.cache.size, health: health.port }, 'discord bot ready');

  let stopping: Promise<void> | undefined;
  const server = health;
  return {
    client,
    healthUrl: `http://127.0.0.1:${health.port}`,
    stop() {
      stopping ??= (async () => {
        detach();
        await client.destroy();
        await server.close();
        logger.info('discord bot stopped');
      })();
      return stopping;
    },
  };
}
