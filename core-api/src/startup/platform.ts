import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Clock, systemClock } from '@pts/shared';
import type { Logger } from 'pino';
import { type Account, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../app.ts';
import {
  ANVIL_DEPLOYER_PRIVATE_KEY,
  ANVIL_MINTER_PRIVATE_KEY,
  ANVIL_RELAYER_PRIVATE_KEY,
  type AnvilInstance,
} from '../chain/anvil.ts';
import { type ChainReads, createChainReads, followReceipts } from '../chain/chain-reads.ts';
import { createChainClients, ensureContracts } from '../chain/deploy.ts';
import { startLocalChain } from '../chain/local-chain.ts';
import { acquireSignerLock, createMinter } from '../chain/minter.ts';
import { createElectedMinter } from '../chain/minter-election.ts';
import { createChainReconciler } from '../chain/reconciler.ts';
import type { RelayerSender } from '../chain/relayer.types.ts';
import { createRelayerSender, createUnavailableRelayer } from '../chain/relayer-sender.ts';
import { type AppServices, composeDeps, composeServices } from '../compose.ts';
import { type Config, hasRole, mintFinality } from '../config.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../db/database.ts';
import type { AppDeps, ChainInfo, TxtResolver } from '../deps.ts';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '../http/rate-limit.ts';
import { startRollupCompactionJob } from '../modules/analytics/rollup-compaction.job.ts';
import { createPostgresChangeTransport } from '../modules/brands/brand-changes.postgres.ts';
import { createChangeNotifier } from '../modules/brands/brand-changes.ts';
import { privyAdaptersFromConfig } from '../modules/identity/privy-identity-provider.ts';
import { recordRewardActivity } from '../modules/leaderboards/reward-activity.ts';
import { createMemberChangeFeed } from '../modules/ledger/member-answers.ts';
import { createPerkChain, type PerkChain } from '../modules/perks/perk-chain.ts';
import { startRewardProcessorJob } from '../modules/reward-processor/reward-processor.job.ts';
import { notifyRewardsDistributed } from '../modules/webhooks/reward-distributed.ts';
import { startWebhookWorker } from '../modules/webhooks/webhooks.worker.ts';
import { createLogger } from '../observability/logger.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { loadLocalSecrets } from './data-dir.ts';
import { withStartupLock } from './startup-lock.ts';

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
  changes: ReturnType<typeof createChangeNotifier>;
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
    const { changes, rateLimits, memberChanges } = await startChangeSharing(start, database);
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

/** Everything of the chain a process holds: its clients, signers, minter, relayer and block-following reads. */
interface StartedChain {
  anvil: AnvilInstance | undefined;
  clients: ReturnType<typeof createChainClients>;
  info: ChainInfo;
  minter: ReturnType<typeof createElectedMinter>;
  relayer: RelayerSender;
  chainReads: ChainReads;
  perkChain: PerkChain;
}

async function startChain(start: StartContext, database: DatabaseHandle): Promise<StartedChain> {
  const { config } = start;
  const { anvil, rpcUrl } = await startRpc(start);
  const clients = createChainClients(rpcUrl, config.PTS_CHAIN_ID);
  const signers = signerAccounts(start);
  const { tokenAddress, contractAddresses } = await deployedContracts(start, database, clients, signers);
  const { minter, reconciler } = await startMinting(start, database, clients, signers.minter, tokenAddress);
  const relayer = startRelayer(start, database, clients, signers);
  const info: ChainInfo = {
    chainId: config.PTS_CHAIN_ID,
    rpcUrl: config.PTS_CHAIN === 'local' ? rpcUrl : new URL(rpcUrl).origin,
    contracts: { ...contractAddresses, rewardToken: tokenAddress },
    minterAddress: signers.minter.address,
    explorerUrl: config.PTS_EXPLORER_URL,
    ping: () => clients.publicClient.getBlockNumber({ cacheTime: 0 }),
    ledger: () => reconciler.report(),
    minting: () => minter.mintingState(),
  };
  const perkNftAddress = contractAddresses.perkNft ?? (config.PTS_PERK_NFT_ADDRESS as `0x${string}` | undefined);
  const { chainReads, perkChain } = startChainReads(start, clients, rpcUrl, tokenAddress, perkNftAddress);
  return { anvil, clients, info, minter, relayer, chainReads, perkChain };
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

interface Signers {
  minter: PrivateKeyAccount;
  relayer: PrivateKeyAccount | undefined;
}

/** The minter's and the relayer's keys: configured, or anvil's well-known ones on a local chain. */
function signerAccounts({ config, logger }: StartContext): Signers {
  const local = config.PTS_CHAIN === 'local';
  const minterKey = config.PTS_MINTER_PRIVATE_KEY ?? (local ? ANVIL_MINTER_PRIVATE_KEY : undefined);
  if (!minterKey) throw new Error('PTS_MINTER_PRIVATE_KEY is required when PTS_CHAIN=rpc');
  const relayerKey = config.PTS_RELAYER_PRIVATE_KEY ?? (local ? ANVIL_RELAYER_PRIVATE_KEY : undefined);
  const relayer = relayerKey ? privateKeyToAccount(relayerKey as `0x${string}`) : undefined;
  // Asking for the relayer role by name without its key is a mistake worth stopping for; the default `all`
  // runs without a relayer (its endpoints answer 503 saying why) so a minting-only deployment still starts.
  if (!relayer && config.PTS_ROLES.includes('relayer')) {
    throw new Error('PTS_RELAYER_PRIVATE_KEY is required for the relayer role when PTS_CHAIN=rpc');
  }
  if (!relayer && hasRole(config, 'relayer')) {
    logger.warn('PTS_RELAYER_PRIVATE_KEY is not set: the relayer endpoints answer 503 until it is');
  }
  return { minter: privateKeyToAccount(minterKey as `0x${string}`), relayer };
}

/** The deployer key (also the perk collection admin): configured, or anvil's on a local chain. */
function deployerKeyOf(config: Config): string | undefined {
  return config.PTS_DEPLOYER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_DEPLOYER_PRIVATE_KEY : undefined);
}

/**
 * Addresses of the contracts this process knows: all of them when it deploys, the token alone when the
 * token address is configured (the perk contracts' addresses come with the relayer's config).
 */
async function deployedContracts(
  { config, clock, logger }: StartContext,
  database: DatabaseHandle,
  clients: ReturnType<typeof createChainClients>,
  signers: Signers,
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
 * The elected minter and the chain reconciler. Whoever may sign (the worker role, or an event handler minting
 * its own requests' rewards) stands for election; the winner signs, the others hand their committed reward
 * rows over.
 */
async function startMinting(
  { config, clock, logger, metrics, stack }: StartContext,
  database: DatabaseHandle,
  clients: ReturnType<typeof createChainClients>,
  account: PrivateKeyAccount,
  tokenAddress: `0x${string}`,
) {
  const localMinter = createMinter({
    db: database.db,
    chainId: config.PTS_CHAIN_ID,
    publicClient: clients.publicClient,
    account,
    tokenAddress,
    config,
    clock,
    logger,
    metrics,
    // Both run in the transaction that marks the rewards confirmed: the brand's notice and the boards.
    onMintsConfirmed: async (trx, mints, confirmation) => {
      await notifyRewardsDistributed(trx, mints, confirmation);
      await recordRewardActivity(trx, mints, confirmation);
    },
    finality: mintFinality(config),
    wedgedAfterSeconds: config.PTS_CHAIN_WEDGED_SECONDS,
    // The chain went back: the ledger report stops saying `ok` and the reconciler checks everything at once.
    onRollback: (reason) => reconciler.rollbackSeen(reason),
  });
  // Confirmed mints the chain lost go back to the outbox: at election (before the tracker runs) and periodically.
  const reconciler = createChainReconciler({
    db: database.db,
    chainId: config.PTS_CHAIN_ID,
    publicClient: clients.publicClient,
    signer: account.address,
    tokenAddress,
    clock,
    logger,
    metrics,
    mayRepair: () => minter.isLeader(),
    intervalSeconds: config.PTS_RECONCILE_INTERVAL_SECONDS,
  });
  const minter = createElectedMinter({
    minter: localMinter,
    beforeSigning: async () => {
      await reconciler.reconcile();
    },
    acquireLock: () =>
      acquireSignerLock({
        db: database.db,
        kind: database.kind,
        chainId: config.PTS_CHAIN_ID,
        signer: account.address,
      }),
    logger,
    retryMs: config.PTS_MINTER_ELECTION_SECONDS * 1000,
  });
  if (hasRole(config, 'worker') || hasRole(config, 'event-handler')) {
    await minter.elect();
    minter.start();
    reconciler.start();
  }
  stack.push(() => minter.stop());
  stack.push(() => reconciler.stop());
  return { minter, reconciler };
}

/** The relayer signs with its own key (never the minter's: creation refuses that) and owns its nonces. */
function startRelayer(
  { config, clock, logger, metrics, stack }: StartContext,
  database: DatabaseHandle,
  clients: ReturnType<typeof createChainClients>,
  signers: Signers,
): RelayerSender {
  const account = signers.relayer;
  const relayer = account
    ? createRelayerSender({
        db: database.db,
        chainId: config.PTS_CHAIN_ID,
        publicClient: clients.publicClient,
        account,
        config,
        clock,
        logger,
        metrics,
        minterAddress: signers.minter.address,
        acquireLock: () =>
          acquireSignerLock({
            db: database.db,
            kind: database.kind,
            chainId: config.PTS_CHAIN_ID,
            signer: account.address,
          }),
      })
    : createUnavailableRelayer('PTS_RELAYER_PRIVATE_KEY is not set on this instance');
  if (hasRole(config, 'relayer')) relayer.start();
  stack.push(() => relayer.stop());
  return relayer;
}

/** Balances and perks as of the newest block this process follows, and the perk collections' admin. */
function startChainReads(
  { config, logger, stack }: StartContext,
  clients: ReturnType<typeof createChainClients>,
  rpcUrl: string,
  tokenAddress: `0x${string}`,
  perkNftAddress: `0x${string}` | undefined,
) {
  const chainReads = createChainReads({
    publicClient: clients.publicClient,
    chain: clients.chain,
    webSocketUrl: config.PTS_CHAIN === 'local' ? rpcUrl.replace(/^http/, 'ws') : config.PTS_RPC_WS_URL,
    tokenAddress,
    perkNftAddress,
    logger,
  });
  // Receipts this process receives (its mints, relays, collections) move the reads past their block at once.
  followReceipts(clients.publicClient, chainReads);
  stack.push(() => chainReads.stop());
  // Perk collections are created by the collection admin (COLLECTION_ADMIN_ROLE): the deployer key.
  const collectionAdminKey = deployerKeyOf(config);
  const perkChain = createPerkChain({
    publicClient: clients.publicClient,
    tokenAddress,
    perkNftAddress,
    reads: chainReads,
    adminWallet: collectionAdminKey
      ? clients.walletClientFor(privateKeyToAccount(collectionAdminKey as `0x${string}`))
      : undefined,
  });
  return { chainReads, perkChain };
}

/**
 * Several processes on one PostgreSQL database share their rate-limit counters and hear each other's brand
 * changes (docs/operations.md, "Several processes"); PGlite is one process, so memory suffices.
 */
async function startChangeSharing({ logger, stack }: StartContext, database: DatabaseHandle) {
  const { pool, connectionString } = database;
  // Member answers are dropped by the database's own notices (modules/ledger/member-answers.ts), heard on the
  // brand changes' connection (PostgreSQL) or by the embedded instance itself (PGlite).
  const memberChanges = createMemberChangeFeed();
  const changes = createChangeNotifier({
    onListenerError: (error) => logger.error({ err: error }, 'brand change listener failed'),
    ...(pool && connectionString
      ? { transport: createPostgresChangeTransport({ connectionString, pool, logger, channels: [memberChanges] }) }
      : {}),
  });
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
  const rateLimits = pool
    ? createPostgresRateLimitStore(pool, {
        onStoreError: (error) =>
          logger.warn({ err: error }, 'rate-limit store failed: limits count in this process until it answers'),
      })
    : createMemoryRateLimitStore();
  return { changes, rateLimits, memberChanges };
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
