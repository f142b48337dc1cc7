import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import type { ConfirmedMint } from './minter.ts';
import type { Minter } from './minter.types.ts';
import { type ChainReconciler, createChainReconciler } from './reconciler.ts';
import {
  createTestMinter,
  insertPendingRewards,
  ledgerTotals,
  type RewardRow,
  randomWallets,
  rowStatuses,
  silentLogger,
  startTestChain,
  type TestChain,
} from './test-chain.ts';

// The chain forgets what the ledger confirmed (anvil reverted to a snapshot stands in for a state file older
// than the database, or an L2 reorganizing a block away): the reconciler reports it and puts it back, and the
// minter's tracker mints it again, exactly once.

const minterAccount = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);

let database: TestDatabase;
let chain: TestChain;
let minter: Minter;
let clock: ReturnType<typeof createTestMinter>['clock'];
let reconciler: ChainReconciler;
let metrics: Metrics;
/** How often each reward's confirmation side effects (notice, leaderboards) ran. */
let notified: Map<string, number>;

beforeEach(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
  notified = new Map();
  const created = createTestMinter(database.db, chain, {
    onMintsConfirmed: async (_trx, mints: ConfirmedMint[]) => {
      for (const mint of mints) notified.set(mint.id, (notified.get(mint.id) ?? 0) + 1);
    },
  });
  minter = created.minter;
  clock = created.clock;
  metrics = createMetrics();
  reconciler = createChainReconciler({
    db: database.db,
    chainId: 1868,
    publicClient: chain.clients.publicClient,
    signer: minterAccount.address,
    tokenAddress: chain.tokenAddress,
    clock,
    logger: silentLogger,
    metrics,
    mayRepair: () => true,
    intervalSeconds: 0,
  });
}, 60_000);

afterEach(async () => {
  await reconciler?.stop();
  await minter?.stop();
  await chain?.stop();
  await database?.close();
});

/** Mints `rows` through the minter and waits until the ledger calls them confirmed. */
async function mintConfirmed(count: number): Promise<RewardRow[]> {
  const rows = await insertPendingRewards(
    database.db,
    randomWallets(count).map((wallet, index) => ({ wallet, amount: BigInt(10 + index) })),
  );
  await settle(rows);
  return rows;
}

async function settle(rows: RewardRow[]): Promise<void> {
  for (let pass = 0; pass < 50; pass++) {
    await minter.processPending();
    const statuses = await rowStatuses(
      database.db,
      rows.map((row) => row.id),
    );
    if ([...statuses.values()].every((status) => status === 'confirmed')) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('rewards did not confirm');
}

async function expectChainEqualsLedger(rows: RewardRow[]): Promise<void> {
  for (const [wallet, total] of ledgerTotals(rows)) expect(await chain.balanceOf(wallet)).toBe(total);
  expect(await chain.totalSupply()).toBe(rows.reduce((sum, row) => sum + row.amount, 0n));
}

const metricValue = async (name: keyof Metrics, labels: Record<string, string> = {}) => {
  const metric = metrics[name] as { get(): Promise<{ values: { labels: object; value: number }[] }> };
  const { values } = await metric.get();
  return values.find((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, string>)[k] === l))
    ?.value;
};

describe('chain reconciler', () => {
  it('reports zero drift for a healthy ledger and reopens nothing', async () => {
    const rows = [...(await mintConfirmed(3)), ...(await mintConfirmed(2))];
    const result = await reconciler.reconcile();
    expect(result.lost).toEqual([]);
    expect(result.reopened).toBe(0);
    expect(result.report).toMatchObject({
      status: 'ok',
      missingOnChain: '0',
      unexpectedOnChain: '0',
      reopenedTransactions: 0,
      restoringRewards: 0,
    });
    expect(result.report.checkedAt).toBe(clock.now().toISOString());
    expect(await metricValue('ledgerDrift', { kind: 'missing' })).toBe(0);
    expect(await metricValue('reconcilerRuns', { result: 'ok' })).toBe(1);
    expect([
      ...(
        await rowStatuses(
          database.db,
          rows.map((row) => row.id),
        )
      ).values(),
    ]).toEqual(rows.map(() => 'confirmed'));
    await expectChainEqualsLedger(rows);
  });

  it('re-queues a confirmed mint whose transaction the chain lost and mints it exactly once', async () => {
    const kept = await mintConfirmed(2);
    const snapshot = await chain.rpc('evm_snapshot');
    const lost = await mintConfirmed(3);
    const [lostTx] = await database.db
      .selectFrom('chain_txs')
      .innerJoin('reward_mints', 'reward_mints.chain_tx_id', 'chain_txs.id')
      .select(['chain_txs.id', 'chain_txs.current_hash'])
      .where('reward_mints.id', '=', lost[0]!.id)
      .execute();
    await chain.rpc('evm_revert', [snapshot]);
    expect(await chain.totalSupply()).toBe(kept.reduce((sum, row) => sum + row.amount, 0n));
    const lostAmount = lost.reduce((sum, row) => sum + row.amount, 0n);

    // Reporting only (a replica without the signer lock): drift, nothing moved.
    const seen = await reconciler.reconcile({ repair: false });
    expect(seen.report).toMatchObject({ status: 'drift', missingOnChain: String(lostAmount), restoringRewards: 0 });
    expect(seen.lost).toEqual([expect.objectContaining({ amount: lostAmount, rewards: 3 })]);
    expect(
      new Set(
        (
          await rowStatuses(
            database.db,
            lost.map((row) => row.id),
          )
        ).values(),
      ),
    ).toEqual(new Set(['confirmed']));

    const repaired = await reconciler.reconcile();
    expect(repaired.reopened).toBe(1);
    expect(repaired.report).toMatchObject({ status: 'restoring', restoringRewards: 3, reopenedTransactions: 1 });
    expect(await metricValue('reconcilerReopened')).toBe(1);
    expect(await metricValue('ledgerDrift', { kind: 'missing' })).toBe(Number(lostAmount));
    // A second pass finds nothing more to reopen: the transaction is back in the outbox once.
    expect((await reconciler.reconcile()).reopened).toBe(0);

    await settle(lost);
    await expectChainEqualsLedger([...kept, ...lost]);
    // The very same signed transaction was mined again (one nonce, so at most once).
    const again = await database.db
      .selectFrom('chain_txs')
      .select(['status', 'current_hash'])
      .where('id', '=', lostTx!.id)
      .executeTakeFirstOrThrow();
    expect(again).toEqual({ status: 'confirmed', current_hash: lostTx!.current_hash });
    // The brand's notice and the leaderboards counted each reward once, at its first confirmation.
    for (const row of [...kept, ...lost]) expect(notified.get(row.id)).toBe(1);

    const healthy = await reconciler.reconcile();
    expect(healthy.report).toMatchObject({ status: 'ok', missingOnChain: '0', restoringRewards: 0 });
    expect(await metricValue('ledgerDrift', { kind: 'missing' })).toBe(0);
  });

  it('mints a lost mint again in a new batch when another transaction took its nonce, once', async () => {
    const kept = await mintConfirmed(1);
    const snapshot = await chain.rpc('evm_snapshot');
    const lost = await mintConfirmed(2);
    const [lostTx] = await database.db
      .selectFrom('chain_txs')
      .innerJoin('reward_mints', 'reward_mints.chain_tx_id', 'chain_txs.id')
      .select(['chain_txs.id', 'chain_txs.nonce'])
      .where('reward_mints.id', '=', lost[0]!.id)
      .execute();
    await chain.rpc('evm_revert', [snapshot]);
    // The nonce of the lost batch goes to a 0-value self-transfer (what the tracker's gap burn sends after a
    // chain reset): the lost batch can never mine now, and only the supply shows it missing.
    const fees = await chain.clients.publicClient.estimateFeesPerGas();
    const burn = await minterAccount.signTransaction({
      type: 'eip1559',
      chainId: 1868,
      nonce: Number(lostTx!.nonce),
      to: minterAccount.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: burn });

    const repaired = await reconciler.reconcile();
    expect(repaired.reopened).toBe(1);
    expect(repaired.lost.map((tx) => tx.nonce)).toEqual([BigInt(lostTx!.nonce)]);

    // The tracker finds the nonce used by another transaction and, once past the stuck delay, re-queues the
    // rewards into a new batch.
    await minter.processPending();
    clock.advance(31_000);
    await settle(lost);
    await expectChainEqualsLedger([...kept, ...lost]);
    const failed = await database.db
      .selectFrom('chain_txs')
      .select('status')
      .where('id', '=', lostTx!.id)
      .executeTakeFirstOrThrow();
    expect(failed.status).toBe('failed');
    for (const row of [...kept, ...lost]) expect(notified.get(row.id)).toBe(1);
    expect((await reconciler.reconcile()).report).toMatchObject({ status: 'ok', missingOnChain: '0' });
  });

  it('reports tokens on chain that the ledger never signed', async () => {
    const rows = await mintConfirmed(1);
    // A mint the ledger knows nothing of (a leaked minter key, a second process minting without the ledger).
    await database.db.deleteFrom('reward_mints').where('id', '=', rows[0]!.id).execute();
    const result = await reconciler.reconcile();
    expect(result.report).toMatchObject({ status: 'drift', unexpectedOnChain: String(rows[0]!.amount) });
    expect(await metricValue('ledgerDrift', { kind: 'unexpected' })).toBe(Number(rows[0]!.amount));
  });
});
