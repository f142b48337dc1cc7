import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, createCoreClient, systemClock } from '@pts/shared';
import cron, { type ScheduledTask } from 'node-cron';
import pino, { type Logger } from 'pino';
import type { TwitterApiReadOnly } from 'twitter-api-v2';
import { listenOrExplain } from '../health.ts';
import { tierReadsEngagement, type XBotConfig } from './config.ts';
import { createPoller, type PollResult } from './poller.ts';
import { createStateFile, emptyState } from './state.ts';
import { createXClient } from './x-client.ts';

export const X_BOT_SERVICE = 'pts-x-bot';

export interface RunningXBot {
  url: string;
  /** Runs one poll now (or joins the one running). */
  trigger(): Promise<PollResult>;
  stop(): Promise<void>;
}

/** What a test may replace. */
export interface XBotOverrides {
  logger?: Logger;
  clock?: Clock;
  /** core-api's fetch (tests make it refuse for a poll). */
  fetch?: typeof fetch;
  x?: TwitterApiReadOnly;
  /** Core client retries (tests keep them short). */
  coreRetries?: number;
}

/**
 * Starts the X bot as `npm run bot:x` does: polls on X_POLL_CRON (never overlapping itself) and serves
 * `GET /`, `GET /health` (public) and `GET /config`, `POST /trigger`, `POST /reset` (admin token).
 */
export async function startXBot(config: XBotConfig, overrides: XBotOverrides = {}): Promise<RunningXBot> {
  const logger = overrides.logger ?? pino({ level: config.LOG_LEVEL });
  const clock = overrides.clock ?? systemClock;
  const core = createCoreClient({
    baseUrl: config.PTS_CORE_API_URL,
    brandId: config.PTS_BRAND_ID,
    securityKey: config.PTS_BRAND_SECURITY_KEY,
    clock,
    retries: overrides.coreRetries ?? 2,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  });
  const x = overrides.x ?? createXClient({ bearerToken: config.X_BEARER_TOKEN, apiRoot: config.X_API_ROOT });
  const state = createStateFile(config.BOT_DATA_DIR, config.PTS_BRAND_ID);
  state.load(); // a corrupt state file stops the start, before anything is served
  const poller = createPoller({
    x,
    core,
    state,
    clock,
    logger,
    brandId: config.PTS_BRAND_ID,
    serviceDomain: config.PTS_SERVICE_DOMAIN,
    tier: config.X_API_TIER,
  });

  let running: Promise<PollResult> | undefined;
  let lastPoll: PollResult | undefined;
  let lastError: { at: string; message: string } | undefined;
  const poll = (): Promise<PollResult> => {
    running ??= poller
      .pollOnce()
      .catch((error: unknown): PollResult => {
        logger.error({ err: error }, 'X poll crashed');
        return {
          at: clock.now().toISOString(),
          status: 'failed',
          reason: error instanceof Error ? error.message : String(error),
          requestsUsed: 0,
          fetched: 0,
          rewarded: 0,
          duplicates: 0,
          refused: 0,
          retryLater: 0,
          postHandle: lastPoll?.postHandle ?? null,
        };
      })
      .then((result) => {
        lastPoll = result;
        if (result.status !== 'ok' && result.reason) lastError = { at: result.at, message: result.reason };
        if (result.status !== 'ok')
          logger.warn({ status: result.status, reason: result.reason }, 'X poll did not complete');
        return result;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const task: ScheduledTask = cron.schedule(config.X_POLL_CRON, () => poll().then(() => undefined), {
    name: `x-bot-${config.PTS_BRAND_ID}`,
    noOverlap: true,
    logger: {
      debug: (message) => logger.debug(message),
      info: (message) => logger.debug(message),
      warn: (message) => logger.warn(message),
      error: (message, err) => logger.error({ err }, String(message)),
    },
  });

  const startedAt = clock.now();
  const health = () => {
    const limitedUntil = state.load().rateLimitedUntil;
    const limited = limitedUntil !== null && Date.parse(limitedUntil) > clock.now().getTime();
    return {
      status: 'ok',
      service: X_BOT_SERVICE,
      brand_id: config.PTS_BRAND_ID,
      post_handle: lastPoll?.postHandle ?? null,
      timestamp: clock.now().toISOString(),
      started_at: startedAt.toISOString(),
      polling: running !== undefined,
      last_poll: lastPoll ?? null,
      next_poll: task.getNextRun()?.toISOString() ?? null,
      requests_used: lastPoll?.requestsUsed ?? 0,
      rate_limited_until: limited ? limitedUntil : null,
      ...(lastPoll?.status === 'skipped' ? { skipped_because: lastPoll.reason } : {}),
      last_error: lastError ?? null,
    };
  };

  const adminDigest = createHash('sha256').update(config.X_BOT_ADMIN_TOKEN).digest();
  const isAdmin = (req: IncomingMessage) => {
    const header = req.headers.authorization ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    return timingSafeEqual(createHash('sha256').update(presented).digest(), adminDigest);
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method} ${path}`;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (route === 'GET /') {
      return send(200, {
        service: X_BOT_SERVICE,
        brand_id: config.PTS_BRAND_ID,
        endpoints: {
          'GET /': 'this list',
          'GET /health': 'status, last and next poll, requests used, last error',
          'GET /config': 'configuration, secrets redacted (admin token)',
          'POST /trigger': 'run one poll now (admin token)',
          'POST /reset': 'clear the high-water marks: the next poll is a first run (admin token)',
        },
      });
    }
    if (route === 'GET /health' || route === 'HEAD /health') return send(200, health());
    const admin = ['GET /config', 'POST /trigger', 'POST /reset'];
    if (!admin.includes(route)) return send(404, { error: `no route ${route}; see GET /` });
    if (!isAdmin(req)) {
      res.setHeader('www-authenticate', 'Bearer');
      return send(401, { error: 'send Authorization: Bearer <X_BOT_ADMIN_TOKEN>' });
    }
    if (route === 'GET /config') {
      return send(200, {
        brand_id: config.PTS_BRAND_ID,
        core_api_url: config.PTS_CORE_API_URL,
        x_api_root: config.X_API_ROOT,
        x_api_tier: config.X_API_TIER,
        likes_and_reposts: tierReadsEngagement(config.X_API_TIER)
          ? 'readable at this tier'
          : `not read: X_API_TIER=${config.X_API_TIER} cannot read likes or reposts (pro or enterprise can)`,
        poll_cron: config.X_POLL_CRON,
        data_dir: config.BOT_DATA_DIR,
        state_file: state.path,
        service_domain: config.PTS_SERVICE_DOMAIN,
        port: config.PORT,
        brand_security_key: '[redacted]',
        x_bearer_token: '[redacted]',
        x_user_keys: config.X_API_KEY ? '[redacted]' : null,
        admin_token: '[redacted]',
      });
    }
    if (route === 'POST /trigger') {
      poll().then(
        (result) => send(200, { success: result.status === 'ok', poll: result }),
        (error: unknown) => send(500, { error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    // POST /reset: the next poll behaves as a first run; processed ids stay (nothing is paid twice).
    const current = state.load();
    const cleared = emptyState();
    state.save({
      ...cleared,
      processed: current.processed,
      brandConversations: current.brandConversations,
      brandUser: current.brandUser,
      rateLimitedUntil: current.rateLimitedUntil,
    });
    logger.info('high-water marks cleared');
    return send(200, { success: true, message: 'High-water marks cleared: the next poll is a first run' });
  });
  await listenOrExplain(server, config.PORT, 'PORT', '0.0.0.0');
  const { port } = server.address() as AddressInfo;
  logger.info({ port, brandId: config.PTS_BRAND_ID, cron: config.X_POLL_CRON }, 'X bot started');

  return {
    url: `http://127.0.0.1:${port}`,
    trigger: poll,
    async stop() {
      await task.destroy();
      await running;
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
