import type { AddressInfo } from 'node:net';
import {
  createManualClock,
  debugInfoSchema,
  diagnosticSchema,
  type LedgerReconciliation,
  livenessSchema,
  type MintingState,
  readinessSchema,
  rootHealthSchema,
  serviceHealthSchema,
} from '@pts/shared';
import express from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChainInfo } from '../../chain/chain-info.ts';
import { loadConfig } from '../../config.ts';
import { createErrorHandler, notFoundHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { createLogger } from '../../observability/logger.ts';
import type { IdentityWalletProvider, WalletProvider } from '../wallets/wallet-provider.ts';
import { healthRoutes } from './health.routes.ts';

type Mode = 'ok' | 'fail' | 'hang';

const state = {
  database: 'ok' as Mode,
  chain: 'ok' as Mode,
  identity: 'ok' as Mode,
  databasePings: 0,
  received: 0,
};
/** Database pings wait on this; a test holds it shut to keep a ping in flight. */
let gate: Promise<void> = Promise.resolve();

function behave<T>(mode: Mode, value: T): Promise<T> {
  if (mode === 'fail') return Promise.reject(new Error('connection refused'));
  if (mode === 'hang') return new Promise(() => {});
  return Promise.resolve(value);
}

/** What the minter reports (chain/minter.ts mintingState); tests flip it to `wedged`. */
const mintingNow: MintingState = { status: 'ok', signer: true, waitingTransactions: 7, lastMinedAt: null };

const chain: ChainInfo = {
  minting: () => ({ ...mintingNow }),
  chainId: 1868,
  rpcUrl: 'http://user:rpc-secret@127.0.0.1:8545',
  contracts: { rewardToken: '0x00000000000000000000000000000000000000aa' },
  minterAddress: '0x00000000000000000000000000000000000000bb',
  explorerUrl: 'https://soneium.blockscout.com',
  ping: () => behave(state.chain, 1234n),
};

/** A wallet provider with the optional `ping` a remote identity provider adapter may offer. */
const wallets: WalletProvider & IdentityWalletProvider & { ping(): Promise<void> } = {
  kind: 'remote-test',
  walletForUser: async () => ({
    address: '0x00000000000000000000000000000000000000cc',
    idpUserId: 'did:test:1',
  }),
  walletForIdentity: async () => ({
    address: '0x00000000000000000000000000000000000000dd',
    idpUserId: 'did:test:identity:1',
  }),
  ping: () => behave(state.identity, undefined),
};

describe('health routes', () => {
  const clock = createManualClock('2026-03-01T12:00:00.000Z');
  let base = '';
  let close: () => void = () => {};

  beforeAll(async () => {
    const app = express();
    app.use((_req, _res, next) => {
      state.received += 1;
      next();
    });
    app.use(
      routerFrom(
        healthRoutes({
          pingDatabase: async () => {
            state.databasePings += 1;
            await gate;
            return behave(state.database, undefined);
          },
          chain,
          clock,
          config: loadConfig({ PTS_ROLES: 'event-handler,admin' }),
          wallets,
          dbKind: 'pglite',
          routes: () => ['/pts-api', '/admin'],
          serviceName: 'pts-core-api',
          version: '9.9.9',
          hostname: 'test-host',
          pingTimeoutMs: 150,
        }),
      ),
    );
    app.use(notFoundHandler);
    app.use(createErrorHandler(createLogger({ level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());
  beforeEach(() => {
    Object.assign(state, { database: 'ok', chain: 'ok', identity: 'ok', databasePings: 0, received: 0 });
    gate = Promise.resolve();
  });

  async function get(path: string) {
    const response = await fetch(`${base}${path}`);
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      headers: response.headers,
    };
  }

  it('GET /health answers the root health body with the mounted routes', async () => {
    const { status, body, headers } = await get('/health');
    expect(status).toBe(200);
    expect(rootHealthSchema.parse(body)).toEqual({
      status: 'healthy',
      service: 'pts-core-api',
      timestamp: '2026-03-01T12:00:00.000Z',
      hostname: 'test-host',
      version: '9.9.9',
      routes: ['/pts-api', '/admin'],
    });
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('GET /pts-api/health is 200 healthy when everything is connected', async () => {
    const { status, body } = await get('/pts-api/health');
    expect(status).toBe(200);
    expect(serviceHealthSchema.parse(body)).toEqual({
      status: 'healthy',
      timestamp: '2026-03-01T12:00:00.000Z',
      services: { database: 'connected', blockchain: 'connected', identity_provider: 'connected' },
    });
  });

  it.each([
    ['database', 'fail'],
    ['chain', 'fail'],
    ['identity', 'fail'],
    ['chain', 'hang'],
  ] as const)('GET /pts-api/health is 503 degraded when the %s ping does %s', async (dependency, mode) => {
    state[dependency] = mode;
    const started = Date.now();
    const { status, body } = await get('/pts-api/health');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(status).toBe(503);
    const parsed = serviceHealthSchema.parse(body);
    expect(parsed.status).toBe('degraded');
    const key = dependency === 'chain' ? 'blockchain' : dependency === 'identity' ? 'identity_provider' : 'database';
    expect(parsed.services[key]).toBe('disconnected');
    expect(Object.values(parsed.services).filter((s) => s === 'disconnected')).toHaveLength(1);
  });

  it('GET /pts-api/diagnostic: healthy 200, degraded 200 without the chain, down 503 without the database', async () => {
    const healthy = await get('/pts-api/diagnostic');
    expect(healthy.status).toBe(200);
    expect(diagnosticSchema.parse(healthy.body)).toEqual({
      status: 'healthy',
      database: 'connected',
      blockchain: 'connected',
      identity_provider: 'connected',
      timestamp: '2026-03-01T12:00:00.000Z',
      databaseKind: 'pglite',
      chainId: 1868,
      blockNumber: '1234',
      contracts: { rewardToken: '0x00000000000000000000000000000000000000aa' },
      minterAddress: '0x00000000000000000000000000000000000000bb',
      identityProviderKind: 'remote-test',
      roles: ['event-handler', 'admin'],
    });
    expect(JSON.stringify(healthy.body)).not.toContain('rpc-secret');

    state.chain = 'hang';
    const degraded = await get('/pts-api/diagnostic');
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({
      status: 'degraded',
      blockchain: 'disconnected',
      blockNumber: null,
    });

    state.database = 'fail';
    const down = await get('/pts-api/diagnostic');
    expect(down.status).toBe(503);
    expect(diagnosticSchema.parse(down.body)).toMatchObject({ status: 'down', database: 'disconnected' });
  });

  it('GET /pts-api/debug echoes method, path (without the query) and version', async () => {
    const { status, body } = await get('/pts-api/debug?secret=abc');
    expect(status).toBe(200);
    expect(debugInfoSchema.parse(body)).toEqual({
      debug: 'ok',
      hostname: 'test-host',
      path: '/pts-api/debug',
      method: 'GET',
      timestamp: '2026-03-01T12:00:00.000Z',
      worker_version: '9.9.9',
    });
  });

  it('GET /livez is 200 even when every dependency is down', async () => {
    Object.assign(state, { database: 'fail', chain: 'hang', identity: 'fail' });
    const { status, body } = await get('/livez');
    expect(status).toBe(200);
    expect(livenessSchema.parse(body).status).toBe('ok');
    expect(state.databasePings).toBe(0);
  });

  it('GET /readyz stays ready through a chain outage (events are queued); /readyz/minting says minting stopped', async () => {
    // Issue 26: a chain outage made every replica `not_ready`, so a load balancer dropped them all although
    // they kept accepting (and queueing) events. Readiness follows the database; minting is its own signal.
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(readinessSchema.parse(ready.body)).toMatchObject({ status: 'ready', minting: { status: 'ok' } });
    expect((await get('/readyz/minting')).status).toBe(200);
    state.identity = 'fail';
    expect((await get('/readyz')).status).toBe(200);
    state.chain = 'fail';
    const outage = await get('/readyz');
    expect(outage.status).toBe(200);
    expect(readinessSchema.parse(outage.body)).toMatchObject({
      status: 'ready',
      database: 'connected',
      blockchain: 'disconnected',
      minting: { status: 'queueing' },
    });
    const minting = await get('/readyz/minting');
    expect(minting.status).toBe(503);
    expect(minting.body).toMatchObject({ minting: { status: 'queueing' } });
    state.chain = 'ok';
    mintingNow.status = 'wedged';
    const wedged = await get('/readyz/minting');
    expect(wedged.status).toBe(503);
    expect(wedged.body).toMatchObject({ status: 'ready', minting: { status: 'wedged', waitingTransactions: 7 } });
    expect((await get('/readyz')).status).toBe(200);
    mintingNow.status = 'ok';
    state.database = 'fail';
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({ status: 'not_ready', database: 'disconnected' });
  });

  it('shares one in-flight ping between concurrent health requests', async () => {
    let open: () => void = () => {};
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const pending = Promise.all(Array.from({ length: 8 }, () => get('/pts-api/health')));
    await vi.waitFor(() => expect(state.received).toBe(8));
    open();
    const responses = await pending;
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(state.databasePings).toBe(1);
    await get('/pts-api/health');
    expect(state.databasePings).toBe(2);
  });
});

describe('health routes with the chain reconciler', () => {
  it('report the ledger drift beside the status in /health, /pts-api/health and /pts-api/diagnostic', async () => {
    const drift: LedgerReconciliation = {
      status: 'drift',
      checkedAt: '2026-03-01T12:00:00.000Z',
      blockNumber: '1234',
      missingOnChain: '300',
      unexpectedOnChain: '0',
      reopenedTransactions: 0,
      restoringRewards: 0,
    };
    const app = express();
    app.use(
      routerFrom(
        healthRoutes({
          pingDatabase: async () => {},
          chain: { ...chain, ping: async () => 1234n, ledger: () => drift },
          clock: createManualClock('2026-03-01T12:00:00.000Z'),
          config: loadConfig({}),
          wallets,
          dbKind: 'pglite',
          routes: () => ['/pts-api'],
          serviceName: 'pts-core-api',
          version: '9.9.9',
        }),
      ),
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const root = await fetch(`${base}/health`);
      expect(rootHealthSchema.parse(await root.json()).ledger).toEqual(drift);
      // A process restoring lost mints still takes events: drift does not make it unhealthy.
      const service = await fetch(`${base}/pts-api/health`);
      expect(service.status).toBe(200);
      expect(serviceHealthSchema.parse(await service.json())).toMatchObject({ status: 'healthy', ledger: drift });
      const diagnostic = await fetch(`${base}/pts-api/diagnostic`);
      expect(diagnosticSchema.parse(await diagnostic.json()).ledger).toEqual(drift);
    } finally {
      server.close();
    }
  });
});
