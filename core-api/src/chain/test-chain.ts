import { randomUUID } from 'node:crypto';
import { createManualClock, type ManualClock } from '@pts/shared';
import { pino } from 'pino';
import { type Address, type Hex, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Database } from '../db/database.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, type AnvilInstance, startAnvil } from './anvil.ts';
import { type ChainClients, createChainClients, ensureContracts } from './deploy.ts';
import { createMinter, type MinterConfig, type MinterDeps } from './minter.ts';

// Test support for the chain tests: a throwaway anvil with the reward token deployed, plus row helpers.

export const silentLogger = pino({ level: 'silent' });

/** Where the chain tests' manual clocks start (and the time test rows are stamped with). */
export const TEST_CLOCK_START = '2026-11-22T10:00:00Z';

const erc20 = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
]);

export interface TestChain {
  anvil: AnvilInstance;
  clients: ChainClients;
  tokenAddress: Address;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  balanceOf(wallet: Address): Promise<bigint>;
  totalSupply(): Promise<bigint>;
  stop(): Promise<void>;
}

/** Starts anvil on a free port and deploys the reward token through ensureContracts. */
export async function startTestChain(db: Database): Promise<TestChain> {
  const anvil = await startAnvil({ port: 0 });
  const clients = createChainClients(anvil.rpcUrl, 1868);
  const { rewardToken } = await ensureContracts({
    db,
    publicClient: clients.publicClient,
    walletClient: clients.walletClientFor(privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY)),
    chainId: 1868,
    minterAddress: privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY).address,
    logger: silentLogger,
    clock: createManualClock(TEST_CLOCK_START),
  });
  return {
    anvil,
    clients,
    tokenAddress: rewardToken,
    rpc: (method, params = []) => clients.publicClient.request({ method, params } as never),
    balanceOf: (wallet) =>
      clients.publicClient.readContract({
        address: rewardToken,
        abi: erc20,
        functionName: 'balanceOf',
        args: [wallet],
      }),
    totalSupply: () =>
      clients.publicClient.readContract({ address: rewardToken, abi: erc20, functionName: 'totalSupply' }),
    stop: () => anvil.stop(),
  };
}

export const testMinterConfig: MinterConfig = {
  PTS_MINT_BATCH_MAX: 20,
  PTS_MINT_BATCH_WAIT_MS: 5,
  PTS_MINT_STUCK_SECONDS: 30,
  PTS_MINT_MAX_ATTEMPTS: 3,
  PTS_RECEIPT_POLL_MS: 50,
  PTS_MINT_WAIT_MS: 10_000,
};

export interface TestMinterOptions extends Partial<Omit<MinterDeps, 'config'>> {
  config?: Partial<MinterConfig>;
}

/** A minter over the test chain with a manual clock and its own metrics; overrides replace any dependency. */
export function createTestMinter(db: Database, chain: TestChain, overrides: TestMinterOptions = {}) {
  const clock: ManualClock = createManualClock(TEST_CLOCK_START);
  const metrics: Metrics = createMetrics();
  const { config, ...rest } = overrides;
  const minter = createMinter({
    db,
    chainId: 1868,
    publicClient: chain.clients.publicClient,
    account: privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY),
    tokenAddress: chain.tokenAddress,
    clock,
    logger: silentLogger,
    metrics,
    ...rest,
    config: { ...testMinterConfig, ...config },
  });
  return { minter, clock, metrics };
}

/** Fresh wallets, so balances from earlier tests in the same file never mix in. */
export function randomWallets(count: number): Address[] {
  return Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()).address);
}

export interface RewardRow {
  id: string;
  wallet: Address;
  amount: bigint;
}

/**
 * Inserts committed `pending` rows the way the event path does before it calls `submit`, stamped `at` (by
 * default the test clocks' start, so nothing here depends on the wall clock).
 */
export async function insertPendingRewards(
  db: Database,
  rewards: { wallet: Address; amount: bigint }[],
  at: Date = new Date(TEST_CLOCK_START),
): Promise<RewardRow[]> {
  const rows = rewards.map((reward) => ({ id: randomUUID(), ...reward }));
  const now = at;
  await db
    .insertInto('reward_mints')
    .values(
      rows.map((row, index) => ({
        id: row.id,
        event_id: null,
        brand_id: '0x00000000000000000000000000000000000000b1',
        wallet_address: row.wallet.toLowerCase(),
        amount: row.amount,
        status: 'pending' as const,
        // Distinct, ordered timestamps make "oldest first" observable.
        created_at: new Date(now.getTime() + index),
        updated_at: now,
      })),
    )
    .execute();
  return rows;
}

/** Sum per wallet: what the ledger says each wallet must hold on chain. */
export function ledgerTotals(rows: RewardRow[]): Map<Address, bigint> {
  const totals = new Map<Address, bigint>();
  for (const row of rows) totals.set(row.wallet, (totals.get(row.wallet) ?? 0n) + row.amount);
  return totals;
}

export async function rowStatuses(db: Database, ids: string[]): Promise<Map<string, string>> {
  const rows = await db.selectFrom('reward_mints').select(['id', 'status']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.status]));
}

export function isTxHash(value: unknown): value is Hex {
  return typeof value === 'string' && /^0x[0-9a-f]{64}$/.test(value);
}
