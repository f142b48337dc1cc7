import type { LedgerReconciliation } from '@pts/shared';
import { type Address, parseAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { createMetrics } from '../observability/metrics.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import type { Minter } from './minter.types.ts';
import { type ChainReconciler, createChainReconciler } from './reconciler.ts';
import {
  createTestMinter,
  insertPendingRewards,
  type RewardRow,
  randomWallets,
  rowStatuses,
  silentLogger,
  startTestChain,
  type TestChain,
} from './test-chain.ts';

// Issue 26, item 1: the chain goes back under load (anvil reverted to a snapshot stands in for a chain
// restarted from an older state file, or an L2 reorganizing its unsafe head). Every acknowledged reward must
// end up in the token's mint Transfer logs exactly once, and the ledger report must not say `ok` while the
// ledger confirms mints the chain no longer has.

const minterAccount = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const ZERO = '0x0000000000000000000000000000000000000000';

let database: TestDatabase;
let chain: TestChain;
let minter: Minter;
let reconciler: ChainReconciler;
let clock: ReturnType<typeof createTestMinter>['clock'];

afterEach(async () => {
  await reconciler?.stop();
  await minter?.stop();
  await chain?.stop();
  await database?.close();
});

function setUp(finality?: { depth: number; tag: 'latest' | 'safe' | 'finalized' }): void {
  const created = createTestMinter(database.db, chain, {
    ...(finality ? { finality } : {}),
    onRollback: (reason) => reconciler.rollbackSeen(reason),
  });
  minter = created.minter;
  clock = created.clock;
  reconciler = createChainReconciler({
    db: database.db,
    chainId: 1868,
    publicClient: chain.clients.publicClient,
    signer: minterAccount.address,
    tokenAddress: chain.tokenAddress,
    clock,
    logger: silentLogger,
    metrics: createMetrics(),
    mayRepair: () => true,
    intervalSeconds: 0,
  });
}

beforeEach(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
}, 60_000);

/** Mint Transfer logs (from the zero address) per recipient. */
async function mintsOnChain(): Promise<Map<string, bigint[]>> {
  const logs = await chain.clients.publicClient.getLogs({
    address: chain.tokenAddress,
    event: transferEvent,
    args: { from: ZERO },
    fromBlock: 0n,
    toBlock: 'latest',
  });
  const byWallet = new Map<string, bigint[]>();
  for (const log of logs) {
    const to = (log.args.to as Address).toLowerCase();
    byWallet.set(to, [...(byWallet.get(to) ?? []), log.args.value as bigint]);
  }
  return byWallet;
}

/** Confirmed rewards (ledger) whose mint the chain does not hold. */
async function confirmedButMissing(rows: RewardRow[]): Promise<number> {
  const statuses = await rowStatuses(
    database.db,
    rows.map((row) => row.id),
  );
  const onChain = await mintsOnChain();
  return rows.filter((row) => statuses.get(row.id) === 'confirmed' && !onChain.has(row.wallet.toLowerCase())).length;
}

/** One round of load: `count` rewards to fresh wallets, submitted the way the event path hands them over. */
async function load(count: number): Promise<RewardRow[]> {
  const rows = await insertPendingRewards(
    database.db,
    randomWallets(count).map((wallet, index) => ({ wallet, amount: BigInt(1 + index) })),
    clock.now(),
  );
  await Promise.all(rows.map((row) => minter.submit(row.id, { waitMs: 2_000 })));
  return rows;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chain rollback under load', () => {
  it('re-drives every confirmed reward the chain lost, mints each exactly once, and never reports ok meanwhile', async () => {
    setUp();
    minter.start();
    const acknowledged: RewardRow[] = [];
    for (let round = 0; round < 6; round++) acknowledged.push(...(await load(8)));
    const snapshot = await chain.rpc('evm_snapshot');
    for (let round = 0; round < 8; round++) {
      acknowledged.push(...(await load(8)));
      clock.advance(1_000);
    }
    await sleep(300);
    expect(await confirmedButMissing(acknowledged)).toBe(0);
    // The periodic pass (at election and every PTS_RECONCILE_INTERVAL_SECONDS) found them agreeing.
    expect((await reconciler.reconcile()).report.status).toBe('ok');
    // The chain goes back: the last 8 rounds' blocks are gone, mempool included (a restart from older state).
    await chain.rpc('evm_revert', [snapshot]);
    await chain.rpc('anvil_dropAllTransactions');
    // The tracker polls every PTS_RECEIPT_POLL_MS (50 ms here): that is how long the rollback can go unseen.
    await sleep(150);
    const reports: { report: LedgerReconciliation; missing: number }[] = [];
    // The load goes on, and time passes (the stuck timer and the gap filler come into play).
    for (let round = 0; round < 10; round++) {
      acknowledged.push(...(await load(8)));
      clock.advance(5_000);
      await sleep(100);
      reports.push({ report: reconciler.report(), missing: await confirmedButMissing(acknowledged) });
    }
    // Drain: until the ledger confirms every reward and the reconciler agrees.
    for (let pass = 0; pass < 60; pass++) {
      clock.advance(31_000);
      await minter.processPending();
      await reconciler.reconcile();
      const statuses = await rowStatuses(
        database.db,
        acknowledged.map((row) => row.id),
      );
      reports.push({ report: reconciler.report(), missing: await confirmedButMissing(acknowledged) });
      if ([...statuses.values()].every((s) => s === 'confirmed') && reconciler.report().status === 'ok') break;
      await sleep(100);
    }

    const onChain = await mintsOnChain();
    for (const row of acknowledged) {
      expect(onChain.get(row.wallet.toLowerCase()), `mints of ${row.wallet}`).toEqual([row.amount]);
    }
    expect(
      new Set(
        (
          await rowStatuses(
            database.db,
            acknowledged.map((row) => row.id),
          )
        ).values(),
      ),
    ).toEqual(new Set(['confirmed']));
    expect(reconciler.report().status).toBe('ok');
    // Honest throughout: the rollback was reported, and no report said `ok` while a confirmed reward was missing.
    expect(reports.some(({ report }) => report.status !== 'ok' && report.status !== 'unknown')).toBe(true);
    const dishonest = reports.filter(({ report, missing }) => report.status === 'ok' && missing > 0);
    expect(dishonest, JSON.stringify(reports)).toEqual([]);
  }, 120_000);

  it('confirms a reward only once its block is final, and a rollback within the depth re-sends it', async () => {
    setUp({ depth: 3, tag: 'latest' });
    const snapshot = await chain.rpc('evm_snapshot');
    const rows = await load(3);
    const statusesOf = async () => [
      ...(
        await rowStatuses(
          database.db,
          rows.map((row) => row.id),
        )
      ).values(),
    ];
    /** Tracking passes until one has recorded the batch's block (a send may return before its block is in). */
    const recordedBlock = async (): Promise<bigint> => {
      for (let pass = 0; pass < 40; pass++) {
        await minter.processPending();
        const [tx] = await database.db.selectFrom('chain_txs').select('block_number').execute();
        if (tx?.block_number !== null && tx?.block_number !== undefined) return BigInt(tx.block_number);
        await sleep(50);
        // Time passes: anvil's automine can leave a re-sent transaction in its pool until another arrives,
        // and the stuck rule (a fee bump) supplies one.
        clock.advance(31_000);
      }
      throw new Error('the batch was not mined');
    };
    /** Mines until the head is `block + blocks`. */
    const mineTo = async (block: bigint, blocks: bigint) => {
      const head = await chain.clients.publicClient.getBlockNumber({ cacheTime: 0 });
      const missing = block + blocks - head;
      if (missing > 0n) await chain.rpc('anvil_mine', [`0x${missing.toString(16)}`]);
    };
    await recordedBlock();
    // Mined, not final: still `submitted`, with its block recorded.
    expect(new Set(await statusesOf())).toEqual(new Set(['submitted']));
    const recorded = await database.db.selectFrom('chain_txs').select(['status', 'block_number']).execute();
    expect(recorded).toEqual([{ status: 'submitted', block_number: expect.anything() }]);

    // Its block is rolled back: the receipt disappears, the batch's own bytes go out again.
    await chain.rpc('evm_revert', [snapshot]);
    await chain.rpc('anvil_dropAllTransactions');
    const block = await recordedBlock();
    expect(new Set(await statusesOf())).toEqual(new Set(['submitted']));
    await mineTo(block, 2n);
    await minter.processPending();
    expect(new Set(await statusesOf())).toEqual(new Set(['submitted']));
    await mineTo(block, 3n);
    await minter.processPending();
    expect(new Set(await statusesOf())).toEqual(new Set(['confirmed']));
    const onChain = await mintsOnChain();
    for (const row of rows) expect(onChain.get(row.wallet.toLowerCase())).toEqual([row.amount]);
    // Never confirmed while not final, so never reopened.
    const reopened = await database.db
      .selectFrom('reward_mints')
      .select('id')
      .where('reconciled_at', 'is not', null)
      .execute();
    expect(reopened).toEqual([]);
  }, 60_000);
});
