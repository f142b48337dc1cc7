import { hostname as osHostname } from 'node:os';
import type { Clock } from '@pts/shared';
import {
  type ConnectionState,
  type DebugInfo,
  type Diagnostic,
  debugInfoSchema,
  diagnosticSchema,
  type Liveness,
  livenessSchema,
  type MintingState,
  type Readiness,
  type RootHealth,
  readinessSchema,
  rootHealthSchema,
  type ServiceHealth,
  serviceHealthSchema,
} from '@pts/shared';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { ChainInfo } from '../../chain/chain-info.ts';
import type { Config } from '../../config.ts';
import type { DatabaseKind } from '../../db/database.ts';
import { defineRoute, type Route } from '../../http/route-table.ts';
import type { IdentityWalletProvider, WalletProvider } from '../../modules/wallets/wallet-provider.ts';

/** A ping slower than this counts as a failure, so a hung RPC or database never hangs the health checks. */
export const DEFAULT_PING_TIMEOUT_MS = 2_000;

export type HealthDeps = {
  pingDatabase: () => Promise<void>;
  chain: ChainInfo;
  clock: Clock;
  config: Config;
  wallets: WalletProvider & IdentityWalletProvider;
  dbKind: DatabaseKind;
} & {
  /** Route paths this process serves, listed by the root health body. */
  routes: () => string[];
  serviceName: string;
  version: string;
  logger?: Logger;
  pingTimeoutMs?: number;
  /** Defaults to the machine's hostname. */
  hostname?: string;
};

interface Probe<T> {
  state: ConnectionState;
  value?: T;
}

/** Runs `check` with a deadline. Concurrent callers share one in-flight check, so a burst of probes costs one ping. */
function createProbe<T>(name: string, check: () => Promise<T>, timeoutMs: number, logger?: Logger) {
  let inFlight: Promise<Probe<T>> | undefined;
  const run = async (): Promise<Probe<T>> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const value = await Promise.race([
        check(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${name} did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { state: 'connected', value };
    } catch (error) {
      logger?.warn({ err: error, dependency: name }, 'health check failed');
      return { state: 'disconnected' };
    } finally {
      clearTimeout(timer);
    }
  };
  return (): Promise<Probe<T>> => {
    inFlight ??= run().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

/** Health, diagnostics, liveness and readiness (spec 2.9, 4.4, 4.12). Public: no credentials, no secrets. */
export function healthRoutes(deps: HealthDeps): Route[] {
  const timeoutMs = deps.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
  const hostname = deps.hostname ?? osHostname();
  const probeDatabase = createProbe('database', () => deps.pingDatabase(), timeoutMs, deps.logger);
  const probeChain = createProbe('blockchain', () => deps.chain.ping(), timeoutMs, deps.logger);
  // The WalletProvider port has no ping; an adapter that talks to a remote provider may add one.
  const wallets = deps.wallets as typeof deps.wallets & { ping?: () => Promise<unknown> };
  const probeIdentity = createProbe(
    'identity_provider',
    async () => {
      if (typeof wallets.ping === 'function') await wallets.ping();
    },
    timeoutMs,
    deps.logger,
  );
  const now = () => deps.clock.now().toISOString();
  // Drift is reported beside the status, not folded into it: a load balancer must keep sending events to a
  // process that is restoring lost mints, since it accepts and queues them as usual.
  const ledger = () => (deps.chain.ledger ? { ledger: deps.chain.ledger() } : {});
  const send = <T>(res: Response, status: number, body: T) => {
    res.status(status).setHeader('Cache-Control', 'no-store').json(body);
  };

  const tags = ['health'];
  /**
   * Accepting events needs the database only: with the chain away they are accepted and their rewards queued,
   * so a load balancer must keep sending them (issue 26). Minting now is reported beside, in `minting`.
   */
  const readiness = async (): Promise<Readiness> => {
    const [database, blockchain] = await Promise.all([probeDatabase(), probeChain()]);
    const own = deps.chain.minting?.();
    const minting: MintingState = {
      status: blockchain.state !== 'connected' ? 'queueing' : (own?.status ?? 'ok'),
      signer: own?.signer ?? false,
      waitingTransactions: own?.waitingTransactions ?? 0,
      lastMinedAt: own?.lastMinedAt ?? null,
    };
    return {
      status: database.state === 'connected' ? 'ready' : 'not_ready',
      timestamp: now(),
      database: database.state,
      blockchain: blockchain.state,
      minting,
    };
  };
  const probeAll = () => Promise.all([probeDatabase(), probeChain(), probeIdentity()]);

  return [
    defineRoute({
      method: 'get',
      path: '/health',
      summary: 'Root health: the process is serving, with its route list',
      tags,
      responses: { 200: { description: 'Always healthy while the process answers', schema: rootHealthSchema } },
      handle: ({ res }) => {
        const body: RootHealth = {
          status: 'healthy',
          service: deps.serviceName,
          timestamp: now(),
          hostname,
          version: deps.version,
          routes: deps.routes(),
          ...ledger(),
        };
        send(res, 200, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/pts-api/health',
      summary: 'Health of the database, chain and identity provider',
      tags,
      responses: {
        200: { description: 'Every dependency is connected', schema: serviceHealthSchema },
        503: {
          description: 'At least one dependency is disconnected (status `degraded`)',
          schema: serviceHealthSchema,
        },
      },
      handle: async ({ res }) => {
        const [database, blockchain, identity] = await probeAll();
        const services = {
          database: database.state,
          blockchain: blockchain.state,
          identity_provider: identity.state,
        };
        const healthy = Object.values(services).every((state) => state === 'connected');
        const body: ServiceHealth = {
          status: healthy ? 'healthy' : 'degraded',
          timestamp: now(),
          services,
          ...ledger(),
        };
        send(res, healthy ? 200 : 503, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/pts-api/diagnostic',
      summary: 'Diagnostic body: dependency states, chain id, contracts, minter',
      tags,
      responses: {
        200: {
          description: '`healthy`, or `degraded` when only the chain or identity provider is away',
          schema: diagnosticSchema,
        },
        503: { description: '`down`: the database is unreachable', schema: diagnosticSchema },
      },
      handle: async ({ res }) => {
        const [database, blockchain, identity] = await probeAll();
        const status: Diagnostic['status'] =
          database.state === 'disconnected'
            ? 'down'
            : blockchain.state === 'disconnected' || identity.state === 'disconnected'
              ? 'degraded'
              : 'healthy';
        const body: Diagnostic = {
          status,
          database: database.state,
          blockchain: blockchain.state,
          identity_provider: identity.state,
          timestamp: now(),
          databaseKind: deps.dbKind,
          chainId: deps.chain.chainId,
          blockNumber: blockchain.value === undefined ? null : blockchain.value.toString(),
          contracts: deps.chain.contracts,
          minterAddress: deps.chain.minterAddress,
          identityProviderKind: deps.wallets.kind,
          roles: [...deps.config.PTS_ROLES],
          ...ledger(),
        };
        // Degraded still answers 200: events are accepted and queued for minting while the chain is away.
        send(res, status === 'down' ? 503 : 200, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/pts-api/debug',
      summary: 'Echo of the request as this worker saw it',
      tags,
      responses: { 200: { description: 'Debug body', schema: debugInfoSchema } },
      handle: ({ req, res }) => {
        const body: DebugInfo = {
          debug: 'ok',
          hostname,
          path: req.originalUrl.split('?')[0] ?? req.path,
          method: req.method,
          timestamp: now(),
          worker_version: deps.version,
        };
        send(res, 200, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/livez',
      summary: 'Liveness: the process is up',
      tags,
      responses: { 200: { description: 'The process answers', schema: livenessSchema } },
      handle: ({ res }) => {
        const body: Liveness = { status: 'ok', timestamp: now() };
        send(res, 200, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      summary: 'Readiness for a load balancer: the database answers, so events are accepted (and queued)',
      tags,
      responses: {
        200: { description: 'Ready for traffic (minting may be queueing: see `minting`)', schema: readinessSchema },
        503: { description: 'Database unreachable', schema: readinessSchema },
      },
      handle: async ({ res }) => {
        const body = await readiness();
        send(res, body.status === 'ready' ? 200 : 503, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz/minting',
      summary: 'Whether rewards are minted now: the database and chain answer and the minter is not wedged',
      tags,
      responses: {
        200: { description: 'Minting works now', schema: readinessSchema },
        503: {
          description: 'Events are accepted but rewards wait (`minting.status`), or not ready',
          schema: readinessSchema,
        },
      },
      handle: async ({ res }) => {
        const body = await readiness();
        const minting = body.status === 'ready' && body.minting?.status === 'ok';
        send(res, minting ? 200 : 503, body);
      },
    }),
  ];
}
