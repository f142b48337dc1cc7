import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Clock, systemClock } from '@pts/shared';
import type { Logger } from 'pino';
import { type Account, privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../app.ts';
import type { AnvilInstance } from '../chain/anvil.ts';
import { ensureContracts } from '../chain/deploy.ts';
import { startLocalChain } from '../chain/local-chain.ts';
import {
  type AppServices,
  type ChainParts,
  type ChainSigners,
  composeChain,
  composeChainClients,
  composeChainSigners,
  composeChangeSharing,
  composeDeps,
  composeServices,
  deployerKeyOf,
} from '../compose.ts';
import { type Config, hasRole } from '../config.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../db/database.ts';
import type { AppDeps, TxtResolver } from '../deps.ts';
import { startRollupCompactionJob } from '../modules/analytics/rollup-compaction.job.ts';
import type { ChangeNotifier } from '../modules/brands/brand-changes.ts';
import { privyAdaptersFromConfig } from '../modules/identity/privy-identity-provider.ts';
import { startRewardProcessorJob } from '../modules/reward-processor/reward-processor.job.ts';
import { startTierTurnJob } from '../modules/tiers/tier-turn.job.ts';
import { startWebhookWorker } from '../modules/webhooks/webhooks.worker.ts';
import { createLogger } from '../observability/logger.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { loadLocalSecrets } from './data-dir.ts';
import { withStartupLock } from './startup-lock.ts';

// Opens, starts, listens and stops (issue 34 §3): every part it starts is built in compose.ts.

export interface StartPlatformOptions {
  /** Use this database instead of opening one from config (tests). */
  database?: DatabaseHandle;
  clock?: Clock;
  logger?: Logger;
  resolveTxt?: TxtResolver;
  /** Skip `listen` (tests that drive the app another way). */
  listen?: boolean;
}

export interface Platform {
  deps: AppDeps;
  app: ReturnType<typeof createApp>;
  server: Server | undefined;
  /** `http://host:port` the server listens on. */
  url: string;
  changes: ChangeNotifier;
  /** The process's shared services, each built once (compose.ts). */
  services: AppServices;
  anvil: AnvilInstance | undefined;
  /** Stops the server, jobs, minter, chain and database, in that order. */
  stop(): Promise<void>;
}

/** Stop functions, run newest first; one failing is logged and the rest still run. */
interface StopStack {
  push(stop: () => Promise<void>): void;
  stopAll(): Promise<void>;
}

function createStopStack(logger: Logger): StopStack {
  const stack: (() => Promise<void>)[] = [];
  return {
    push: (stop) => {
      stack.push(stop);
    },
    async stopAll() {
      for (const stop of stack.reverse()) {
        try {
          await stop();
        } catch (error) {
          logger.warn({ err: error }, 'error while stopping');
        }
      }
      stack.length = 0;
    },
  };
}

/** What every start step reads: the config, the process's clock and logger, and where to register a stop. */
interface StartContext {
  config: Config;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  stack: StopStack;
}

/**
 * Builds every dependency from config, composes the services (compose.ts), creates the app and starts
 * listening: `main.ts` and tests share it. Everything started is stopped again if a later step fails.
 */
export async function startPlatform(config: Config, options: StartPlatformOptions = {}): Promise<Platform> {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  const clock = options.clock ?? systemClock;
  // PTS_IDENTITY_PROVIDER=privy: Privy verifies tokens and holds the wallets (docs/identity.md); local otherwise.
  const identity = {
    privy: privyAdaptersFromConfig(config, { clock, logger }),
    secrets: loadLocalSecrets(config.PTS_DATA_DIR, {
      adminToken: config.PTS_ADMIN_TOKEN,
      masterKey: config.PTS_MASTER_KEY,
      walletMnemonic: config.PTS_WALLET_MNEMONIC,
    }),
  };
  const stack = createStopStack(logger);
  const start: StartContext = { config, clock, logger, metrics: createMetrics({ defaultMetrics: true }), stack };
  try {
    const database = await startDatabase(start, options.database);
    const chain = await startChain(start, database);
    const deps = composeDeps({
      ...start,
      database,
      chain: { ...chain, publicClient: chain.clients.publicClient },
      ...identity,
      resolveTxt: options.resolveTxt,
      onStop: (stop) => stack.push(stop),
    });
    const { changes, rateLimits, memberChanges } = composeChangeSharing(database, logger);
    await startChangeSharing(start, database, { changes, memberChanges });
    const services = composeServices(deps, changes, rateLimits, memberChanges);
    // Reset e-mails run after their answer: let the ones under way finish before the database closes.
    stack.push(() => services.portal.team.settle());
    const app = createApp(deps, services);
    if (hasRole(config, 'worker')) startJobs(start, deps, services);
    const { server, url } = options.listen === false ? { server: undefined, url: '' } : await listen(start, app);
    // Started: from now on a query waits PTS_DB_CONNECT_TIMEOUT_MS for a connection, not the start-up patience.
    database.endStartup?.();
    return { deps, app, server, url, changes, services, anvil: chain.anvil, stop: stack.stopAll };
  } catch (error) {
    await stack.stopAll();
    throw error;
  }
}

/** Start-up work waits this long for a database connection at least (then PTS_DB_CONNECT_TIMEOUT_MS). */
const STARTUP_CONNECT_TIMEOUT_MS = 30_000;

/** The given database (tests), or the configured one opened; migrated to the latest schema either way. */
async function startDatabase({ config, logger, stack }: StartContext, given?: DatabaseHandle): Promise<DatabaseHandle> {
  const database =
    given ??
    (await openDatabase({
      databaseUrl: config.DATABASE_URL,
      pgliteDir: join(config.PTS_DATA_DIR, 'pglite'),
      poolSize: config.PTS_DB_POOL_SIZE,
      processes: config.PTS_DB_PROCESSES,
      startupConnectTimeoutMs: STARTUP_CONNECT_TIMEOUT_MS,
      connectTimeoutMs: config.PTS_DB_CONNECT_TIMEOUT_MS,
      onConnectionError: (error) => logger.warn({ err: error }, 'database connection error'),
    }));
  if (!given) stack.push(() => database.close());
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  if (database.poolSize !== undefined) logger.info({ poolSize: database.poolSize }, 'database pool');
  return database;
}

/** The chain's parts this process started, and the local anvil when it runs one. */
interface StartedChain extends ChainParts {
  anvil: AnvilInstance | undefined;
  clients: ReturnType<typeof composeChainClients>;
}

/** Opens the RPC, deploys (or finds) the contracts, then starts the chain's parts compose.ts builds. */
async function startChain(start: StartContext, database: DatabaseHandle): Promise<StartedChain> {
  const { config, logger } = start;
  const { anvil, rpcUrl } = await startRpc(start);
  const clients = composeChainClients(config, rpcUrl);
  const signers = composeChainSigners(config, logger);
  const { tokenAddress, contractAddresses } = await deployedContracts(start, database, clients, signers);
  const parts = composeChain({ ...start, database, rpcUrl, clients, signers, tokenAddress, contractAddresses });
  await startChainParts(start, parts);
  return { anvil, clients, ...parts };
}

/** PTS_CHAIN=local: the local anvil (started, or adopted from a previous run); rpc: the configured URL. */
async function startRpc({ config, logger, stack }: StartContext) {
  if (config.PTS_CHAIN !== 'local') {
    if (!config.PTS_RPC_URL) throw new Error('PTS_RPC_URL is required when PTS_CHAIN=rpc');
    return { anvil: undefined, rpcUrl: config.PTS_RPC_URL };
  }
  // Its own session: a kill of this process group leaves the chain running, and the next start adopts it.
  const anvil = await startLocalChain({
    dataDir: config.PTS_DATA_DIR,
    port: config.PTS_ANVIL_PORT,
    chainId: config.PTS_CHAIN_ID,
    stateIntervalSeconds: config.PTS_ANVIL_STATE_INTERVAL,
    ...(config.PTS_ANVIL_BLOCK_TIME !== undefined ? { blockTime: config.PTS_ANVIL_BLOCK_TIME } : {}),
    logger,
  });
  stack.push(() => anvil.stop());
  return { anvil, rpcUrl: anvil.rpcUrl };
}

/**
 * Addresses of the contracts this process knows: all of them when it deploys, the token alone when the
 * token address is configured (the perk contracts' addresses come with the relayer's config).
 */
async function deployedContracts(
  { config, clock, logger }: StartContext,
  database: DatabaseHandle,
  clients: ReturnType<typeof composeChainClients>,
  signers: ChainSigners,
): Promise<{ tokenAddress: `0x${string}`; contractAddresses: Record<string, `0x${string}`> }> {
  const configured = config.PTS_REWARD_TOKEN_ADDRESS as `0x${string}` | undefined;
  if (configured) return { tokenAddress: configured, contractAddresses: {} };
  const deployerKey = deployerKeyOf(config);
  if (!deployerKey) {
    throw new Error('Set PTS_REWARD_TOKEN_ADDRESS, or PTS_DEPLOYER_PRIVATE_KEY so the contracts can be deployed');
  }
  const deployer: Account = privateKeyToAccount(deployerKey as `0x${string}`);
  // Replicas starting together deploy once: the others wait, then find the recorded addresses.
  const contracts = await withStartupLock(database, `pts-deploy:${config.PTS_CHAIN_ID}`, () =>
    ensureContracts({
      db: database.db,
      publicClient: clients.publicClient,
      walletClient: clients.walletClientFor(deployer),
      chainId: config.PTS_CHAIN_ID,
      minterAddress: signers.minter.address,
      ...(signers.relayer ? { relayerAddress: signers.relayer.address } : {}),
      logger,
      clock,
    }),
  );
  return { tokenAddress: contracts.rewardToken, contractAddresses: { ...contracts } };
}

/**
 * Starts what this process's roles run: the minter stands for election and the reconciler runs where rewards
 * are signed (worker, event handler), the relayer on the relayer role. Every part is stopped with the process.
 */
async function startChainParts({ config, stack }: StartContext, parts: ChainParts): Promise<void> {
  const { minter, reconciler, relayer, chainReads } = parts;
  // Registered before anything starts (the chain reads follow blocks from their building): a failed election
  // still stops them. Stopped newest first: the reads, the relayer, the reconciler, then the minter.
  stack.push(() => minter.stop());
  stack.push(() => reconciler.stop());
  stack.push(() => relayer.stop());
  stack.push(() => chainReads.stop());
  if (hasRole(config, 'worker') || hasRole(config, 'event-handler')) {
    await minter.elect();
    minter.start();
    reconciler.start();
  }
  if (hasRole(config, 'relayer')) relayer.start();
}

/**
 * Starts the brand change notifier (compose.ts builds it, over PostgreSQL's notices when several processes
 * share the database) and, on PGlite, listens for the member notices of the embedded instance itself.
 */
async function startChangeSharing(
  { stack }: StartContext,
  database: DatabaseHandle,
  { changes, memberChanges }: Pick<ReturnType<typeof composeChangeSharing>, 'changes' | 'memberChanges'>,
): Promise<void> {
  await changes.start();
  stack.push(() => changes.stop());
  if (database.pglite) {
    const unlisten = await database.pglite.listen(memberChanges.channel, (payload) => memberChanges.notice(payload));
    memberChanges.setListening(true);
    stack.push(async () => {
      memberChanges.setListening(false);
      await unlisten();
    });
  }
}

/** The worker role's jobs: the reward processor's schedule, the webhook deliveries, the rollups' compaction. */
function startJobs({ config, logger, stack }: StartContext, deps: AppDeps, services: AppServices): void {
  const job = startRewardProcessorJob({
    minter: deps.minter,
    cronExpression: config.PTS_REWARD_PROCESSOR_CRON,
    logger,
  });
  stack.push(async () => job.stop());
  const webhookWorker = startWebhookWorker({
    webhooks: services.webhooks,
    clock: deps.clock,
    logger,
    secrets: deps.secrets,
    config,
  });
  stack.push(() => webhookWorker.stop());
  const compaction = startRollupCompactionJob({
    compact: services.compactRollups,
    intervalSeconds: config.PTS_ROLLUP_COMPACT_SECONDS,
    logger,
  });
  stack.push(() => compaction.stop());
  const tierTurn = startTierTurnJob({ tiers: services.tiers, cronExpression: config.PTS_TIER_TURN_CRON, logger });
  stack.push(() => tierTurn.stop());
}

/** Listens on PORT/HOST; the stop closes the server and its open connections. */
async function listen({ config, stack }: StartContext, app: ReturnType<typeof createApp>) {
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(config.PORT, config.HOST, () => resolve(listening));
    listening.once('error', reject);
  });
  stack.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  return { server, url: `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}` };
}
