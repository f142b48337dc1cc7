import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Clock, systemClock } from '@pts/shared';
import type { Logger } from 'pino';
import { type Account, privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../app.ts';
import {
  ANVIL_DEPLOYER_PRIVATE_KEY,
  ANVIL_MINTER_PRIVATE_KEY,
  ANVIL_RELAYER_PRIVATE_KEY,
  type AnvilInstance,
} from '../chain/anvil.ts';
import { createChainReads, followReceipts } from '../chain/chain-reads.ts';
import { createChainClients, ensureContracts } from '../chain/deploy.ts';
import { startLocalChain } from '../chain/local-chain.ts';
import { acquireSignerLock, createMinter } from '../chain/minter.ts';
import { createElectedMinter } from '../chain/minter-election.ts';
import { createChainReconciler } from '../chain/reconciler.ts';
import { createRelayerSender, createUnavailableRelayer } from '../chain/relayer-sender.ts';
import { type AppServices, composeServices } from '../compose.ts';
import { type Config, hasRole, mintFinality } from '../config.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../db/database.ts';
import type { AppDeps, ChainInfo, TxtResolver } from '../deps.ts';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '../http/rate-limit.ts';
import { createPostgresChangeTransport } from '../modules/brands/brand-changes.postgres.ts';
import { createChangeNotifier } from '../modules/brands/brand-changes.ts';
import { createSystemTxtResolver } from '../modules/dns/dns.service.ts';
import { createLocalIdentityProvider } from '../modules/identity/identity-provider.ts';
import { createLocalTokenIssuer, loadOrCreateTokenKey } from '../modules/identity/local-token-issuer.ts';
import { privyAdaptersFromConfig } from '../modules/identity/privy-identity-provider.ts';
import { recordRewardActivity } from '../modules/leaderboards/reward-activity.ts';
import { createPaymentProvider } from '../modules/payments/payment-provider.factory.ts';
import { constraintSettingsFrom, createConstraintChecker } from '../modules/perks/constraints/constraint-checker.ts';
import { createPerkChain } from '../modules/perks/perk-chain.ts';
import { startRewardProcessorJob } from '../modules/reward-processor/reward-processor.job.ts';
import { createLocalWalletProvider } from '../modules/wallets/wallet-provider.ts';
import { notifyRewardsDistributed } from '../modules/webhooks/reward-distributed.ts';
import { startWebhookWorker } from '../modules/webhooks/webhooks.worker.ts';
import { createLogger } from '../observability/logger.ts';
import { createMetrics } from '../observability/metrics.ts';
import { createSecretBox } from '../security/secret-box.ts';
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

/** Start-up work waits this long for a database connection at least (then PTS_DB_CONNECT_TIMEOUT_MS). */
const STARTUP_CONNECT_TIMEOUT_MS = 30_000;

/** Builds every dependency from config, creates the app and starts listening: `main.ts` and tests share it. */
export async function startPlatform(config: Config, options: StartPlatformOptions = {}): Promise<Platform> {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  const clock = options.clock ?? systemClock;
  // PTS_IDENTITY_PROVIDER=privy: Privy verifies tokens and holds the wallets (docs/identity.md); local otherwise.
  const privy = privyAdaptersFromConfig(config, { clock, logger });
  const secrets = loadLocalSecrets(config.PTS_DATA_DIR, {
    adminToken: config.PTS_ADMIN_TOKEN,
    masterKey: config.PTS_MASTER_KEY,
    walletMnemonic: config.PTS_WALLET_MNEMONIC,
  });
  const stack: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stack.reverse()) {
      try {
        await stop();
      } catch (error) {
        logger.warn({ err: error }, 'error while stopping');
      }
    }
    stack.length = 0;
  };

  try {
    const database =
      options.database ??
      (await openDatabase({
        databaseUrl: config.DATABASE_URL,
        pgliteDir: join(config.PTS_DATA_DIR, 'pglite'),
        poolSize: config.PTS_DB_POOL_SIZE,
        processes: config.PTS_DB_PROCESSES,
        startupConnectTimeoutMs: STARTUP_CONNECT_TIMEOUT_MS,
        connectTimeoutMs: config.PTS_DB_CONNECT_TIMEOUT_MS,
        onConnectionError: (error) => logger.warn({ err: error }, 'database connection error'),
      }));
    if (!options.database) stack.push(() => database.close());
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    if (database.poolSize !== undefined) logger.info({ poolSize: database.poolSize }, 'database pool');

    let anvil: AnvilInstance | undefined;
    let rpcUrl = config.PTS_RPC_URL;
    if (config.PTS_CHAIN === 'local') {
      // Its own session: a kill of this process group leaves the chain running, and the next start adopts it.
      anvil = await startLocalChain({
        dataDir: config.PTS_DATA_DIR,
        port: config.PTS_ANVIL_PORT,
        chainId: config.PTS_CHAIN_ID,
        stateIntervalSeconds: config.PTS_ANVIL_STATE_INTERVAL,
        ...(config.PTS_ANVIL_BLOCK_TIME !== undefined ? { blockTime: config.PTS_ANVIL_BLOCK_TIME } : {}),
        logger,
      });
      stack.push(() => anvil!.stop());
      rpcUrl = anvil.rpcUrl;
    }
    if (!rpcUrl) throw new Error('PTS_RPC_URL is required when PTS_CHAIN=rpc');
    const clients = createChainClients(rpcUrl, config.PTS_CHAIN_ID);
    const minterKey =
      config.PTS_MINTER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_MINTER_PRIVATE_KEY : undefined);
    if (!minterKey) throw new Error('PTS_MINTER_PRIVATE_KEY is required when PTS_CHAIN=rpc');
    const minterAccount = privateKeyToAccount(minterKey as `0x${string}`);
    const relayerKey =
      config.PTS_RELAYER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_RELAYER_PRIVATE_KEY : undefined);
    const relayerAccount = relayerKey ? privateKeyToAccount(relayerKey as `0x${string}`) : undefined;
    // Asking for the relayer role by name without its key is a mistake worth stopping for; the default `all`
    // runs without a relayer (its endpoints answer 503 saying why) so a minting-only deployment still starts.
    if (!relayerAccount && config.PTS_ROLES.includes('relayer')) {
      throw new Error('PTS_RELAYER_PRIVATE_KEY is required for the relayer role when PTS_CHAIN=rpc');
    }
    if (!relayerAccount && hasRole(config, 'relayer')) {
      logger.warn('PTS_RELAYER_PRIVATE_KEY is not set: the relayer endpoints answer 503 until it is');
    }

    let tokenAddress = config.PTS_REWARD_TOKEN_ADDRESS as `0x${string}` | undefined;
    // Addresses of the contracts this process knows: all of them when it deploys, the token alone when
    // the token address is configured (the perk contracts' addresses come with the relayer's config).
    let contractAddresses: Record<string, `0x${string}`> = {};
    if (!tokenAddress) {
      const deployerKey =
        config.PTS_DEPLOYER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_DEPLOYER_PRIVATE_KEY : undefined);
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
          minterAddress: minterAccount.address,
          ...(relayerAccount ? { relayerAddress: relayerAccount.address } : {}),
          logger,
          clock,
        }),
      );
      tokenAddress = contracts.rewardToken;
      contractAddresses = { ...contracts };
    }

    const metrics = createMetrics({ defaultMetrics: true });
    const localMinter = createMinter({
      db: database.db,
      chainId: config.PTS_CHAIN_ID,
      publicClient: clients.publicClient,
      account: minterAccount,
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
      signer: minterAccount.address,
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
          signer: minterAccount.address,
        }),
      logger,
      retryMs: config.PTS_MINTER_ELECTION_SECONDS * 1000,
    });
    const runsWorker = hasRole(config, 'worker');
    // Whoever may sign (the worker role, or an event handler minting its own requests' rewards) stands for
    // election; the winner signs, the others hand their committed reward rows over.
    if (runsWorker || hasRole(config, 'event-handler')) {
      await minter.elect();
      minter.start();
      reconciler.start();
    }
    stack.push(() => minter.stop());
    stack.push(() => reconciler.stop());

    // The relayer signs with its own key (never the minter's: creation refuses that) and owns its nonces.
    const relayer = relayerAccount
      ? createRelayerSender({
          db: database.db,
          chainId: config.PTS_CHAIN_ID,
          publicClient: clients.publicClient,
          account: relayerAccount,
          config,
          clock,
          logger,
          metrics,
          minterAddress: minterAccount.address,
          acquireLock: () =>
            acquireSignerLock({
              db: database.db,
              kind: database.kind,
              chainId: config.PTS_CHAIN_ID,
              signer: relayerAccount.address,
            }),
        })
      : createUnavailableRelayer('PTS_RELAYER_PRIVATE_KEY is not set on this instance');
    if (hasRole(config, 'relayer')) relayer.start();
    stack.push(() => relayer.stop());

    const chain: ChainInfo = {
      chainId: config.PTS_CHAIN_ID,
      rpcUrl: config.PTS_CHAIN === 'local' ? rpcUrl : new URL(rpcUrl).origin,
      contracts: { ...contractAddresses, rewardToken: tokenAddress },
      minterAddress: minterAccount.address,
      explorerUrl: config.PTS_EXPLORER_URL,
      ping: () => clients.publicClient.getBlockNumber({ cacheTime: 0 }),
      ledger: () => reconciler.report(),
      minting: () => minter.mintingState(),
    };
    // Perk collections are created by the collection admin (COLLECTION_ADMIN_ROLE): the deployer key.
    const collectionAdminKey =
      config.PTS_DEPLOYER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_DEPLOYER_PRIVATE_KEY : undefined);
    const perkNftAddress = contractAddresses.perkNft ?? (config.PTS_PERK_NFT_ADDRESS as `0x${string}` | undefined);
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
    const perkChain = createPerkChain({
      publicClient: clients.publicClient,
      tokenAddress,
      perkNftAddress,
      reads: chainReads,
      adminWallet: collectionAdminKey
        ? clients.walletClientFor(privateKeyToAccount(collectionAdminKey as `0x${string}`))
        : undefined,
    });

    const localWallets = () => {
      const wallets = createLocalWalletProvider(secrets.walletMnemonic, {
        addressThreads: config.PTS_WALLET_ADDRESS_THREADS,
        onWorkerError: (error) => logger.warn({ err: error }, 'wallet address worker failed; deriving inline'),
      });
      stack.push(() => wallets.close());
      return wallets;
    };
    const tokenIssuer = createLocalTokenIssuer({
      privateJwk: loadOrCreateTokenKey(config.PTS_DATA_DIR),
      issuer: (config.PTS_PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, ''),
      audience: 'pts-local',
      clock,
    });
    const deps: AppDeps = {
      config,
      db: database.db,
      dbKind: database.kind,
      pingDatabase: database.ping,
      clock,
      logger,
      metrics,
      secrets: createSecretBox(secrets.masterKey),
      wallets: privy?.wallets ?? localWallets(),
      minter,
      relayer,
      publicClient: clients.publicClient,
      chain,
      resolveTxt: options.resolveTxt ?? createSystemTxtResolver(config.PTS_DNS_SERVERS),
      adminToken: secrets.adminToken,
      tokenIssuer,
      identity: privy?.identity ?? createLocalIdentityProvider(tokenIssuer),
      // payments wiring
      payments: createPaymentProvider(config, { db: database.db, clock }),
      perkChain,
      chainReads,
      constraints: createConstraintChecker({
        db: database.db,
        clock,
        logger,
        balanceOf: perkChain.balanceOf,
        settings: constraintSettingsFrom(config),
      }),
    };
    // Several processes on one PostgreSQL database share their rate-limit counters and hear each other's
    // brand changes (docs/operations.md, "Several processes"); PGlite is one process, so memory suffices.
    const { pool, connectionString } = database;
    const changes = createChangeNotifier({
      onListenerError: (error) => logger.error({ err: error }, 'brand change listener failed'),
      ...(pool && connectionString
        ? { transport: createPostgresChangeTransport({ connectionString, pool, logger }) }
        : {}),
    });
    await changes.start();
    stack.push(() => changes.stop());
    const rateLimits = pool
      ? createPostgresRateLimitStore(pool, {
          onStoreError: (error) =>
            logger.warn({ err: error }, 'rate-limit store failed: limits count in this process until it answers'),
        })
      : createMemoryRateLimitStore();
    const services = composeServices(deps, changes, rateLimits);
    const app = createApp(deps, services);

    if (runsWorker) {
      const job = startRewardProcessorJob({ minter, cronExpression: config.PTS_REWARD_PROCESSOR_CRON, logger });
      stack.push(async () => job.stop());
      const webhookWorker = startWebhookWorker(deps);
      stack.push(() => webhookWorker.stop());
    }

    let server: Server | undefined;
    let url = '';
    if (options.listen !== false) {
      server = await new Promise<Server>((resolve, reject) => {
        const listening = app.listen(config.PORT, config.HOST, () => resolve(listening));
        listening.once('error', reject);
      });
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : config.PORT;
      url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
      const listening = server;
      stack.push(
        () =>
          new Promise<void>((resolve) => {
            listening.close(() => resolve());
            listening.closeAllConnections();
          }),
      );
    }

    // Started: from now on a query waits PTS_DB_CONNECT_TIMEOUT_MS for a connection, not the start-up patience.
    database.endStartup?.();
    return { deps, app, server, url, changes, services, anvil, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
