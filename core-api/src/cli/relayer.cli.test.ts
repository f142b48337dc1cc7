import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { createErrorHandler } from '../http/errors.ts';
import { routerFrom } from '../http/route-table.ts';
import { createRelayRecords } from '../modules/relayer/relay.service.ts';
import { relayerGasAdminRoutes } from '../modules/relayer/relayer-gas.routes.ts';
import { runCli } from './run-cli.ts';

const ADMIN_TOKEN = 'relayer-cli-admin-token-0123456789';
const BRAND_A = '0x00000000000000000000000000000000000000a1';
const BRAND_B = '0x00000000000000000000000000000000000000b2';
const CHAIN_ID = 1868;

let database: TestDatabase;
let server: Server;
let baseUrl: string;

/** A relayed transaction row as the sender leaves it once its receipt is recorded. */
async function insertRelayed(
  brandId: string | null,
  gasUsed: bigint | null,
  effectiveGasPrice: bigint | null,
  nonce: number,
  status: 'confirmed' | 'failed' | 'submitted' = 'confirmed',
  chainId = CHAIN_ID,
): Promise<void> {
  const now = new Date();
  await database.db
    .insertInto('relay_transactions')
    .values({
      id: randomUUID(),
      chain_id: chainId,
      signer: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
      nonce: BigInt(nonce),
      status,
      current_hash: `0x${nonce.toString(16).padStart(64, '0')}`,
      hashes: JSON.stringify([`0x${nonce.toString(16).padStart(64, '0')}`]),
      to_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      data: '0x12345678',
      brand_id: brandId,
      user_address: null,
      purpose: 'perk-redeem',
      gas_used: gasUsed === null ? null : gasUsed.toString(),
      effective_gas_price: effectiveGasPrice === null ? null : effectiveGasPrice.toString(),
      block_number: gasUsed === null ? null : BigInt(nonce + 1),
      created_at: now,
      updated_at: now,
    })
    .execute();
}

beforeAll(async () => {
  database = await createTestDatabase();
  const app = express();
  app.use(
    '/admin',
    routerFrom(
      relayerGasAdminRoutes({
        relayRecords: createRelayRecords({ db: database.db, chainId: CHAIN_ID }),
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  app.use(createErrorHandler(pino({ level: 'silent' })));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // Brand A: two confirmed and one reverted (its gas was paid too); brand B: one; one unbranded claim.
  await insertRelayed(BRAND_A, 50_000n, 1_000_000_000n, 0);
  await insertRelayed(BRAND_A, 30_000n, 2_000_000_000n, 1);
  await insertRelayed(BRAND_A, 25_000n, 1_000_000_000n, 2, 'failed');
  await insertRelayed(BRAND_B, 100_000n, 3_000_000_000n, 3);
  await insertRelayed(null, 21_000n, 1_000_000_000n, 4);
  // Not counted: still in flight, and another chain.
  await insertRelayed(BRAND_A, null, null, 5, 'submitted');
  await insertRelayed(BRAND_A, 999_999n, 1_000_000_000n, 0, 'confirmed', 1);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await database?.close();
});

async function pts(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: baseUrl, PTS_ADMIN_TOKEN: ADMIN_TOKEN },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

describe('pts relayer gas', () => {
  it('prints gas used and cost per brand as JSON', async () => {
    const run = await pts(['relayer', 'gas', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(run.stdout);
    expect(report.brands).toEqual([
      {
        brandId: BRAND_A,
        transactions: 3,
        gasUsed: '105000',
        costWei: String(50_000n * 1_000_000_000n + 30_000n * 2_000_000_000n + 25_000n * 1_000_000_000n),
        costEth: '0.000135',
      },
      { brandId: BRAND_B, transactions: 1, gasUsed: '100000', costWei: '300000000000000', costEth: '0.0003' },
      { brandId: null, transactions: 1, gasUsed: '21000', costWei: '21000000000000', costEth: '0.000021' },
    ]);
    expect(report.total).toEqual({
      transactions: 5,
      gasUsed: '226000',
      costWei: '456000000000000',
      costEth: '0.000456',
    });
  });

  it('filters by brand and prints a table', async () => {
    const run = await pts(['relayer', 'gas', '--brand', BRAND_B.toUpperCase().replace('0X', '0x')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/BRAND\s+TRANSACTIONS\s+GAS USED\s+COST \(WEI\)\s+COST \(ETH\)/);
    expect(run.stdout).toContain(BRAND_B);
    expect(run.stdout).toContain('300000000000000');
    expect(run.stdout).not.toContain(BRAND_A);
    expect(run.stdout).not.toContain('TOTAL');

    const all = await pts(['relayer', 'gas']);
    expect(all.stdout).toMatch(/TOTAL\s+5\s+226000\s+456000000000000\s+0\.000456/);
    expect(all.stdout).toContain('(no brand)');
  });

  it('says so when a brand has no relayed transactions, and refuses a bad brand id', async () => {
    const none = await pts(['relayer', 'gas', '--brand', '0x00000000000000000000000000000000000000c3']);
    expect(none).toMatchObject({ code: 0 });
    expect(none.stdout).toContain('No relayed transactions for 0x00000000000000000000000000000000000000c3 yet.');

    const bad = await pts(['relayer', 'gas', '--brand', 'acme']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--brand must be a Brand ID');
  });
});
