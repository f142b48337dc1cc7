import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '@pts/shared';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import type { Minter, ProcessPendingResult, QueueStatus } from '../../chain/minter.types.ts';
import {
  createTestMinter,
  insertPendingRewards,
  isTxHash,
  randomWallets,
  silentLogger,
  startTestChain,
  type TestChain,
} from '../../chain/test-chain.ts';
import { createErrorHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { startRewardProcessorJob } from './reward-processor.job.ts';
import { rewardProcessorRoutes } from './reward-processor.routes.ts';

const ADMIN_TOKEN = 'pts_admin_test_token_0123456789';

let database: TestDatabase;
let chain: TestChain;
let minter: Minter;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
  minter = createTestMinter(database.db, chain).minter;
  const app = express();
  app.use(express.json());
  app.use(
    '/reward-processor',
    routerFrom(rewardProcessorRoutes({ minter, logger: silentLogger, clock: systemClock, adminToken: ADMIN_TOKEN })),
  );
  app.use(createErrorHandler(silentLogger));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/reward-processor`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await minter?.stop();
  await chain?.stop();
  await database?.close();
});

describe('reward-processor routes', () => {
  it('GET /health answers healthy with the worker name', async () => {
    const response = await fetch(`${baseUrl}/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; timestamp: string };
    expect(body).toMatchObject({ status: 'healthy', worker: 'reward-processor' });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });

  it('POST /process-pending mints pending rewards and GET /queue shows them confirmed on the next pass', async () => {
    const [wallet] = randomWallets(1);
    await insertPendingRewards(database.db, [
      { wallet: wallet!, amount: 5n },
      { wallet: wallet!, amount: 7n },
    ]);
    const before = await (await fetch(`${baseUrl}/queue`)).json();
    expect(before).toMatchObject({ success: true, pending: 2, submitted: 0, openTransactions: 0 });

    const processed = await fetch(`${baseUrl}/process-pending`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(processed.status).toBe(200);
    const body = (await processed.json()) as ProcessPendingResult & { success: boolean };
    expect(body).toMatchObject({ success: true, claimed: 2, batches: 1, requeued: 0, replaced: 0 });
    expect(body.transactionHashes).toHaveLength(1);
    expect(isTxHash(body.transactionHashes[0])).toBe(true);

    const second = await (
      await fetch(`${baseUrl}/process-pending`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json();
    expect(second).toMatchObject({ success: true, claimed: 0, confirmedTransactions: 1 });
    const after = (await (await fetch(`${baseUrl}/queue`)).json()) as QueueStatus & { success: boolean };
    expect(after).toMatchObject({
      success: true,
      pending: 0,
      submitted: 0,
      confirmed: 2,
      openTransactions: 0,
      oldestPendingAt: null,
    });
    expect(after.signer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(after.nextNonce).toBe(after.confirmedNonce);
    expect(await chain.balanceOf(wallet!)).toBe(12n);
  });
});

describe('reward-processor job', () => {
  it('refuses POST /process-pending without the admin token', async () => {
    const res = await fetch(`${baseUrl}/process-pending`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('UNAUTHORIZED');
  });

  it('runs processPending on its schedule and stops', async () => {
    let runs = 0;
    const empty: ProcessPendingResult = {
      claimed: 0,
      batches: 0,
      transactionHashes: [],
      confirmedTransactions: 0,
      requeued: 0,
      replaced: 0,
    };
    const counting = {
      processPending: async () => {
        runs++;
        return empty;
      },
    } as unknown as Minter;
    const job = startRewardProcessorJob({
      minter: counting,
      cronExpression: '* * * * * *',
      logger: silentLogger,
    });
    await expect.poll(() => runs, { timeout: 3000, interval: 50 }).toBeGreaterThan(0);
    await job.stop();
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(runs).toBe(stoppedAt);
  });

  it('refuses an invalid cron expression', () => {
    expect(() =>
      startRewardProcessorJob({ minter: {} as Minter, cronExpression: 'every minute', logger: silentLogger }),
    ).toThrow(/PTS_REWARD_PROCESSOR_CRON/);
  });
});
