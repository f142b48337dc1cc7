import { type Address, type Hex, keccak256, parseTransaction } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { MINTER_ROLE } from './deploy.ts';
import { acquireSignerLock } from './minter.ts';
import type { Minter } from './minter.types.ts';
import {
  createTestMinter,
  insertPendingRewards,
  isTxHash,
  ledgerTotals,
  type RewardRow,
  randomWallets,
  rowStatuses,
  startTestChain,
  type TestChain,
} from './test-chain.ts';

let database: TestDatabase;
let chain: TestChain;
const minters: Minter[] = [];
const minterAddress = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY).address;

beforeAll(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
});

afterEach(async () => {
  for (const minter of minters.splice(0)) await minter.stop();
  await chain.rpc('evm_setAutomine', [true]);
});

afterAll(async () => {
  await chain?.stop();
  await database?.close();
});

function track<T extends { minter: Minter }>(created: T): T {
  minters.push(created.minter);
  return created;
}

/** A minter whose every broadcast fails the way an unreachable node (or a crash before the send) does. */
function minterWithUnreachableNode() {
  let attempts = 0;
  const created = track(
    createTestMinter(database.db, chain, {
      sendRawTransaction: async () => {
        attempts++;
        throw new Error('fetch failed: connect ECONNREFUSED');
      },
    }),
  );
  return { ...created, sendAttempts: () => attempts };
}

async function expectMintedExactlyOnce(rows: RewardRow[]): Promise<void> {
  for (const [wallet, amount] of ledgerTotals(rows)) {
    expect(await chain.balanceOf(wallet), `balance of ${wallet}`).toBe(amount);
  }
}

async function setMinterRole(granted: boolean): Promise<void> {
  const deployer = chain.clients.walletClientFor(privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY));
  const hash = await deployer.writeContract({
    address: chain.tokenAddress,
    abi: rewardTokenAbi,
    functionName: granted ? 'grantRole' : 'revokeRole',
    args: [MINTER_ROLE, minterAddress],
  });
  await chain.clients.publicClient.waitForTransactionReceipt({ hash });
}

async function chainTxsOf(ids: string[]) {
  const rows = await database.db
    .selectFrom('reward_mints')
    .innerJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .select(['chain_txs.id', 'chain_txs.status', 'chain_txs.hashes', 'chain_txs.nonce', 'chain_txs.last_error'])
    .where('reward_mints.id', 'in', ids)
    .execute();
  return [...new Map(rows.map((row) => [row.id, row])).values()];
}

function rewardsFor(wallets: Address[], count: number): { wallet: Address; amount: bigint }[] {
  return Array.from({ length: count }, (_, index) => ({
    wallet: wallets[index % wallets.length]!,
    amount: BigInt(index + 1),
  }));
}

describe('minter', () => {
  it('groups 50 concurrent rewards into a few mintBatch transactions and confirms them against the ledger', async () => {
    const { minter, metrics } = track(createTestMinter(database.db, chain));
    const supplyBefore = await chain.totalSupply();
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(7), 50));

    const submissions = await Promise.all(rows.map((row) => minter.submit(row.id)));
    expect(
      submissions.every((submission) => submission.status === 'submitted' && isTxHash(submission.transactionHash)),
    ).toBe(true);
    const hashes = new Set(submissions.map((submission) => submission.transactionHash));
    // Batch max is 20 in the test config: 50 rewards need at least 3 transactions, group commit keeps it near that.
    expect(hashes.size).toBeGreaterThanOrEqual(3);
    expect(hashes.size).toBeLessThanOrEqual(5);

    const result = await minter.processPending();
    expect(result.confirmedTransactions).toBe(hashes.size);
    expect(result.claimed).toBe(0);
    expect(
      [
        ...(
          await rowStatuses(
            database.db,
            rows.map((row) => row.id),
          )
        ).values(),
      ].every((s) => s === 'confirmed'),
    ).toBe(true);
    await expectMintedExactlyOnce(rows);
    expect((await chain.totalSupply()) - supplyBefore).toBe(rows.reduce((sum, row) => sum + row.amount, 0n));

    const batchSizes = await metrics.mintBatchSize.get();
    expect(batchSizes.values.find((value) => value.metricName === 'pts_mint_batch_size_sum')?.value).toBe(50);
    const status = await minter.queueStatus();
    expect(status).toMatchObject({ pending: 0, submitted: 0, openTransactions: 0, signer: minterAddress });
    expect(status.nextNonce).toBe(status.confirmedNonce);
  });

  it('recovers a batch committed but never broadcast (crash between commit and send) and mints it once', async () => {
    const supplyBefore = await chain.totalSupply();
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(3), 6));
    const crashed = minterWithUnreachableNode();
    const submissions = await Promise.all(rows.map((row) => crashed.minter.submit(row.id)));
    expect(crashed.sendAttempts()).toBe(1);
    // Issue 26: the broadcast failed, so the answer is `pending` with no hash (not `submitted` with one).
    expect(submissions.every((submission) => submission.status === 'pending' && !submission.transactionHash)).toBe(
      true,
    );
    const [recorded] = await chainTxsOf(rows.map((row) => row.id));
    const hash = recorded!.hashes[0] as `0x${string}`;
    expect(recorded).toMatchObject({ status: 'signed', hashes: [hash] });
    await expect(chain.clients.publicClient.getTransaction({ hash })).rejects.toThrow();
    await crashed.minter.stop();

    // A new process over the same database: the tracker resends the recorded raw transaction.
    const { minter } = track(createTestMinter(database.db, chain));
    const first = await minter.processPending();
    expect(first.claimed).toBe(0);
    const second = await minter.processPending();
    expect(second.confirmedTransactions).toBe(1);
    const [after] = await chainTxsOf(rows.map((row) => row.id));
    expect(after).toMatchObject({ status: 'confirmed', hashes: [hash] });
    expect((await minter.processPending()).claimed).toBe(0);
    await expectMintedExactlyOnce(rows);
    expect((await chain.totalSupply()) - supplyBefore).toBe(rows.reduce((sum, row) => sum + row.amount, 0n));
  });

  it('leaves rows pending when signing fails before commit, then mints them once without a nonce gap', async () => {
    const account = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
    let failures = 1;
    const crashing = {
      ...account,
      signTransaction: async (...args: Parameters<typeof account.signTransaction>) => {
        if (failures-- > 0) throw new Error('process died while signing');
        return account.signTransaction(...args);
      },
    };
    const { minter } = track(createTestMinter(database.db, chain, { account: crashing }));
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(2), 4));
    const nonceBefore = await chain.clients.publicClient.getTransactionCount({ address: minterAddress });

    const submissions = await Promise.all(rows.map((row) => minter.submit(row.id)));
    expect(submissions.every((submission) => submission.status === 'pending')).toBe(true);
    expect([
      ...(
        await rowStatuses(
          database.db,
          rows.map((row) => row.id),
        )
      ).values(),
    ]).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(await chainTxsOf(rows.map((row) => row.id))).toEqual([]);

    const result = await minter.processPending();
    expect(result).toMatchObject({ claimed: 4, batches: 1 });
    const [tx] = await chainTxsOf(rows.map((row) => row.id));
    expect(tx!.nonce).toBe(BigInt(nonceBefore));
    expect((await minter.processPending()).confirmedTransactions).toBe(1);
    expect((await minter.processPending()).claimed).toBe(0);
    await expectMintedExactlyOnce(rows);
  });

  it('re-queues the rows of a reverted transaction and mints them once after the cause is fixed', async () => {
    const { minter, metrics } = track(createTestMinter(database.db, chain));
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(2), 3));
    await setMinterRole(false);
    try {
      const submissions = await Promise.all(rows.map((row) => minter.submit(row.id)));
      expect(submissions.every((submission) => submission.status === 'submitted')).toBe(true);
    } finally {
      await setMinterRole(true);
    }

    const result = await minter.processPending();
    expect(result).toMatchObject({ requeued: 3, claimed: 3, batches: 1 });
    expect((await minter.processPending()).confirmedTransactions).toBe(1);

    const stored = await database.db
      .selectFrom('reward_mints')
      .select(['status', 'attempts', 'last_error'])
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    expect(stored.every((row) => row.status === 'confirmed' && row.attempts === 1)).toBe(true);
    const failed = await database.db
      .selectFrom('chain_txs')
      .select(['last_error'])
      .where('status', '=', 'failed')
      .execute();
    expect(failed.some((row) => row.last_error?.includes('reverted'))).toBe(true);
    expect((await metrics.mintTransactions.get()).values.find((v) => v.labels.result === 'reverted')?.value).toBe(1);
    await expectMintedExactlyOnce(rows);
  });

  it('marks rows failed once they reach PTS_MINT_MAX_ATTEMPTS', async () => {
    const { minter } = track(createTestMinter(database.db, chain, { config: { PTS_MINT_MAX_ATTEMPTS: 1 } }));
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 1));
    await setMinterRole(false);
    try {
      await minter.submit(rows[0]!.id);
      expect(await minter.processPending()).toMatchObject({ requeued: 0, claimed: 0 });
    } finally {
      await setMinterRole(true);
    }
    const row = await database.db
      .selectFrom('reward_mints')
      .select(['status', 'attempts'])
      .where('id', '=', rows[0]!.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', attempts: 1 });
    await expect(minter.submit(rows[0]!.id)).rejects.toThrow(/failed/);
    expect(await chain.balanceOf(rows[0]!.wallet)).toBe(0n);
  });

  it('replaces a stuck transaction with higher fees on the same nonce and mints once when a block comes', async () => {
    const { minter, clock, metrics } = track(createTestMinter(database.db, chain));
    await chain.rpc('evm_setAutomine', [false]);
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(2), 2));
    const submissions = await Promise.all(rows.map((row) => minter.submit(row.id)));
    const original = submissions[0]!.transactionHash!;
    // The send is marked `submitted` in a grouped UPDATE a moment after submit() answers (the submit marker):
    // the stuck clock starts from that mark, so wait for it before moving the clock.
    await expect.poll(async () => (await chainTxsOf(rows.map((row) => row.id)))[0]?.status).toBe('submitted');

    expect((await minter.processPending()).replaced).toBe(0);
    clock.advance(31_000);
    expect((await minter.processPending()).replaced).toBe(1);
    const [tx] = await chainTxsOf(rows.map((row) => row.id));
    expect(tx!.status).toBe('submitted');
    expect(tx!.hashes).toHaveLength(2);
    expect(tx!.hashes[0]).toBe(original);
    const replacement = tx!.hashes[1] as Hex;
    expect(replacement).not.toBe(original);
    const fees = await database.db
      .selectFrom('chain_txs')
      .select(['max_fee_per_gas', 'max_priority_fee_per_gas', 'raw_tx'])
      .where('id', '=', tx!.id)
      .executeTakeFirstOrThrow();
    expect(keccak256(fees.raw_tx as Hex)).toBe(replacement);
    expect((await metrics.mintTransactions.get()).values.find((v) => v.labels.result === 'replaced')?.value).toBe(1);

    await chain.rpc('evm_mine');
    const result = await minter.processPending();
    expect(result.confirmedTransactions).toBe(1);
    const confirmed = await database.db
      .selectFrom('chain_txs')
      .select(['status', 'current_hash'])
      .where('id', '=', tx!.id)
      .executeTakeFirstOrThrow();
    expect(confirmed.status).toBe('confirmed');
    expect(confirmed.current_hash).toBe(replacement);
    await expectMintedExactlyOnce(rows);
  });

  it('re-queues a transaction whose nonce was taken by another transaction, then mints once', async () => {
    const { minter, clock } = track(createTestMinter(database.db, chain));
    await chain.rpc('evm_setAutomine', [false]);
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 2));
    const [submission] = await Promise.all(rows.map((row) => minter.submit(row.id)));
    const [tx] = await chainTxsOf(rows.map((row) => row.id));

    // Someone else with the minter key spends the same nonce with a higher tip: our batch can never mine.
    const account = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
    const fees = await chain.clients.publicClient.estimateFeesPerGas();
    const other = await account.signTransaction({
      type: 'eip1559',
      chainId: 1868,
      nonce: Number(tx!.nonce),
      to: account.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas * 3n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 3n,
    });
    await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: other });
    await chain.rpc('evm_mine');
    await chain.rpc('evm_setAutomine', [true]);
    await expect(
      chain.clients.publicClient.getTransactionReceipt({ hash: submission!.transactionHash! }),
    ).rejects.toThrow();

    // Not before PTS_MINT_STUCK_SECONDS: a lagging RPC node may not have served the receipt yet.
    expect(await minter.processPending()).toMatchObject({ requeued: 0, claimed: 0 });
    // The stuck clock starts from the grouped `submitted` mark, which may land after submit() answers: wait for
    // it before moving the clock (under load the mark came after the move: CI, PGlite, session 20).
    await expect.poll(async () => (await chainTxsOf(rows.map((row) => row.id)))[0]?.status).toBe('submitted');
    clock.advance(31_000);
    // A tracking pass the receipt poller started before the clock moved may still be running: processPending
    // then joins it and sees nothing stuck yet. Sum the passes until the batch is re-queued and sent again.
    const total = { requeued: 0, claimed: 0, batches: 0 };
    for (let pass = 0; pass < 10 && total.claimed === 0; pass++) {
      const result = await minter.processPending();
      total.requeued += result.requeued;
      total.claimed += result.claimed;
      total.batches += result.batches;
    }
    expect(total).toEqual({ requeued: 2, claimed: 2, batches: 1 });
    // The new batch is confirmed once, by this pass or by a receipt poll already under way.
    await expect
      .poll(async () => {
        await minter.processPending();
        return rowStatuses(
          database.db,
          rows.map((row) => row.id),
        );
      })
      .toEqual(new Map(rows.map((row) => [row.id, 'confirmed'])));
    await expectMintedExactlyOnce(rows);
  });

  it('does not mint again a batch whose mint landed under a hash it never recorded (a state file ahead of its blocks)', async () => {
    const confirmedBy: string[] = [];
    const { minter, clock, metrics } = track(
      createTestMinter(database.db, chain, {
        onMintsConfirmed: async (_trx, mints) => {
          confirmedBy.push(...mints.map((mint) => mint.confirmedBy));
        },
      }),
    );
    await chain.rpc('evm_setAutomine', [false]);
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 2));
    const [submission] = await Promise.all(rows.map((row) => minter.submit(row.id)));
    const [tx] = await chainTxsOf(rows.map((row) => row.id));
    const { raw_tx } = await database.db
      .selectFrom('chain_txs')
      .select('raw_tx')
      .where('id', '=', tx!.id)
      .executeTakeFirstOrThrow();

    // The chain ends up with the batch's nonce used and its tokens minted, but with no transaction under any
    // hash the ledger recorded: what anvil restored from a state dump taken mid-block holds. Here the same
    // mint is signed again with other fees and mined in place of the recorded one.
    const signed = parseTransaction(raw_tx as Hex);
    await chain.rpc('anvil_dropTransaction', [submission!.transactionHash]);
    const twin = await privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY).signTransaction({
      type: 'eip1559',
      chainId: 1868,
      nonce: Number(tx!.nonce),
      to: signed.to!,
      data: signed.data!,
      gas: signed.gas!,
      value: 0n,
      maxFeePerGas: signed.maxFeePerGas! * 2n,
      maxPriorityFeePerGas: signed.maxPriorityFeePerGas! * 2n,
    });
    await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: twin });
    await chain.rpc('evm_mine');
    await chain.rpc('evm_setAutomine', [true]);
    await expectMintedExactlyOnce(rows);

    expect(await minter.processPending()).toMatchObject({ requeued: 0, claimed: 0 });
    // The send is marked `submitted` in a grouped UPDATE a moment after submit() answers (the submit marker):
    // the stuck clock starts from that mark, so wait for it before moving the clock (under load the mark came
    // after the move, the batch was never stuck, and it stayed `submitted`: CI, PostgreSQL, session 16).
    await expect.poll(async () => (await chainTxsOf(rows.map((row) => row.id)))[0]?.status).toBe('submitted');
    clock.advance(31_000);
    // A tracking pass the receipt poller started before the clock moved may still be running: processPending
    // then joins it (one pass at a time) and sees the batch not stuck yet. The next pass settles it.
    let confirmedTransactions = 0;
    let statuses = new Map<string, string>();
    for (let pass = 0; pass < 10 && confirmedTransactions === 0; pass++) {
      const result = await minter.processPending();
      expect(result).toMatchObject({ requeued: 0, claimed: 0 });
      confirmedTransactions += result.confirmedTransactions;
      statuses = await rowStatuses(
        database.db,
        rows.map((row) => row.id),
      );
      if ([...statuses.values()].every((status) => status === 'confirmed')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...statuses.values()]).toEqual(['confirmed', 'confirmed']);
    const [settled] = await chainTxsOf(rows.map((row) => row.id));
    expect(settled!.status).toBe('confirmed');
    const landed = (await metrics.mintTransactions.get()).values.find(
      (v) => v.labels.result === 'landed_without_receipt',
    );
    expect(landed?.value).toBe(1);
    // Issue 24 §13: what is shown of these rewards says they were confirmed by the supply, not by a receipt.
    expect(confirmedBy).toEqual(['supply', 'supply']);
    const { confirmed_by } = await database.db
      .selectFrom('chain_txs')
      .select('confirmed_by')
      .where('id', '=', tx!.id)
      .executeTakeFirstOrThrow();
    expect(confirmed_by).toBe('supply');
    expect((await minter.processPending()).claimed).toBe(0);
    await expectMintedExactlyOnce(rows);
  });

  it('fills the nonce gap of a reset chain with the lost confirmed batch itself, never burning its nonce', async () => {
    // Issue 26: the gap filler burned the nonce of a batch the ledger held `confirmed`, so its rewards were
    // acknowledged and never on chain. Now that batch goes back to the outbox and its own bytes fill the gap.
    const rollbacks: string[] = [];
    const { minter, clock, metrics } = track(
      createTestMinter(database.db, chain, { onRollback: (reason) => rollbacks.push(reason) }),
    );
    const snapshot = await chain.rpc('evm_snapshot');
    const lost = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 2));
    await Promise.all(lost.map((row) => minter.submit(row.id)));
    expect((await minter.processPending()).confirmedTransactions).toBe(1);
    // The chain forgets the confirmed batch (anvil restarted from an older state file); the database does not.
    await chain.rpc('evm_revert', [snapshot]);
    await chain.rpc('anvil_dropAllTransactions');

    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(2), 3));
    await Promise.all(rows.map((row) => minter.submit(row.id)));
    expect((await minter.processPending()).confirmedTransactions).toBe(0);
    expect(rollbacks.length).toBeGreaterThan(0);
    clock.advance(31_000);
    await minter.processPending();
    // Time passes: anvil's automine leaves a transaction queued behind a gap until another arrives, and the
    // tracker's stuck rule (a fee bump) supplies one.
    for (let pass = 0; pass < 5; pass++) {
      clock.advance(31_000);
      await minter.processPending();
    }
    expect((await metrics.mintTransactions.get()).values.find((v) => v.labels.result === 'gap_filled')).toBeUndefined();
    await expectMintedExactlyOnce([...lost, ...rows]);
    const statuses = await rowStatuses(
      database.db,
      [...lost, ...rows].map((row) => row.id),
    );
    expect(new Set(statuses.values())).toEqual(new Set(['confirmed']));
  });

  it('reports minting wedged when transactions wait and none mines for PTS_CHAIN_WEDGED_SECONDS', async () => {
    // Issue 26: a failover left 1,108 transactions unmined while health said `ok`.
    const { minter, clock } = track(createTestMinter(database.db, chain, { wedgedAfterSeconds: 60 }));
    await minter.processPending();
    expect(minter.mintingState()).toMatchObject({ status: 'ok', waitingTransactions: 0 });
    await chain.rpc('evm_setAutomine', [false]);
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 2));
    await Promise.all(rows.map((row) => minter.submit(row.id)));
    await minter.processPending();
    clock.advance(30_000);
    await minter.processPending();
    expect(minter.mintingState()).toMatchObject({ status: 'ok', waitingTransactions: 1 });
    clock.advance(31_000);
    await minter.processPending();
    expect(minter.mintingState()).toMatchObject({ status: 'wedged', waitingTransactions: 1 });
    await chain.rpc('evm_mine');
    await minter.processPending();
    expect(minter.mintingState()).toMatchObject({ status: 'ok' });
    expect(minter.mintingState().lastMinedAt).toBe(clock.now().toISOString());
    await minter.processPending();
    expect(minter.mintingState()).toMatchObject({ status: 'ok', waitingTransactions: 0 });
    await expectMintedExactlyOnce(rows);
  });

  it('rejects an unknown or malformed reward id without holding up the others', async () => {
    const { minter } = track(createTestMinter(database.db, chain));
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 1));
    const [good, unknown, malformed] = await Promise.allSettled([
      minter.submit(rows[0]!.id),
      minter.submit('00000000-0000-4000-8000-000000000000'),
      minter.submit('not-a-uuid'),
    ]);
    expect(good).toMatchObject({ status: 'fulfilled', value: { status: 'submitted' } });
    expect(unknown).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/no reward_mints row/) },
    });
    expect(malformed).toMatchObject({ status: 'rejected' });
    expect((await minter.processPending()).confirmedTransactions).toBe(1);
    await expectMintedExactlyOnce(rows);
  });

  it('reports the queue by status', async () => {
    const { minter, metrics } = track(createTestMinter(database.db, chain));
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 2));
    const status = await minter.queueStatus();
    expect(status.pending).toBe(2);
    expect(status.oldestPendingAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await metrics.rewardsByStatus.get()).values.find((v) => v.labels.status === 'pending')?.value).toBe(2);
    await minter.processPending();
    await minter.processPending();
    expect(await minter.queueStatus()).toMatchObject({ pending: 0, submitted: 0, oldestPendingAt: null });
    await expectMintedExactlyOnce(rows);
  });

  it('confirms in the background once started', async () => {
    const { minter } = track(createTestMinter(database.db, chain));
    minter.start();
    const rows = await insertPendingRewards(database.db, rewardsFor(randomWallets(1), 1));
    await minter.submit(rows[0]!.id);
    await expect
      .poll(async () => (await rowStatuses(database.db, [rows[0]!.id])).get(rows[0]!.id), {
        timeout: 5000,
        interval: 50,
      })
      .toBe('confirmed');
  });
});

describe('acquireSignerLock', () => {
  it.runIf(testDatabaseKind === 'postgres')('lets only one process hold a signer until it releases', async () => {
    const options = { db: database.db, kind: database.kind, chainId: 1868, signer: minterAddress };
    const first = await acquireSignerLock(options);
    expect(first).not.toBeNull();
    expect(await acquireSignerLock(options)).toBeNull();
    const otherSigner = await acquireSignerLock({ ...options, signer: randomWallets(1)[0]! });
    expect(otherSigner).not.toBeNull();
    await otherSigner!.release();
    await first!.release();
    const again = await acquireSignerLock(options);
    expect(again).not.toBeNull();
    await again!.release();
  });

  it.runIf(testDatabaseKind === 'pglite')('always succeeds on single-process PGlite', async () => {
    const lock = await acquireSignerLock({
      db: database.db,
      kind: database.kind,
      chainId: 1868,
      signer: minterAddress,
    });
    expect(lock).not.toBeNull();
    await lock!.release();
  });

  describe('inline signing (beginInline, the accept path)', () => {
    /**
     * Inserts reward rows the way the event batcher does: begins an inline signing, signs in its own
     * transaction, then tells the minter how the transaction ended.
     */
    async function acceptInline(
      minter: Minter,
      rewards: { wallet: Address; amount: bigint }[],
      options: { failAfterSigning?: boolean } = {},
    ) {
      const rows = rewards.map((reward) => ({ id: crypto.randomUUID(), ...reward }));
      const inline = await minter.beginInline();
      const signer = inline?.signer;
      const write = () =>
        database.db.transaction().execute(async (trx) => {
          const signed = await signer?.sign(
            trx,
            rows.map((row) => ({ id: row.id, walletAddress: row.wallet.toLowerCase(), amount: row.amount })),
          );
          const now = new Date();
          await trx
            .insertInto('reward_mints')
            .values(
              rows.map((row) => ({
                id: row.id,
                event_id: null,
                brand_id: '0x00000000000000000000000000000000000000b1',
                wallet_address: row.wallet.toLowerCase(),
                amount: row.amount,
                status: signed ? ('submitted' as const) : ('pending' as const),
                chain_tx_id: signed?.chainTxId ?? null,
                created_at: now,
                updated_at: now,
              })),
            )
            .execute();
          if (options.failAfterSigning) throw new Error('the accept transaction failed after signing');
          return signed;
        });
      let value: Awaited<ReturnType<typeof write>>;
      try {
        value = await write();
      } catch (error) {
        inline?.rolledBack(error);
        throw error;
      }
      return { rows, value, sent: inline?.committed() };
    }

    it('commits rows already submitted with their signed batch, sends it after the commit, confirms once', async () => {
      const { minter } = track(createTestMinter(database.db, chain));
      const { rows, value, sent } = await acceptInline(minter, rewardsFor(randomWallets(4), 8));
      expect(value && isTxHash(value.transactionHash)).toBe(true);
      expect(await sent).toEqual({ status: 'submitted', transactionHash: value!.transactionHash });
      const [tx] = await chainTxsOf(rows.map((row) => row.id));
      expect(tx?.hashes).toEqual([value!.transactionHash]);
      expect((await minter.processPending()).confirmedTransactions).toBe(1);
      expect(
        new Set(
          (
            await rowStatuses(
              database.db,
              rows.map((row) => row.id),
            )
          ).values(),
        ),
      ).toEqual(new Set(['confirmed']));
      await expectMintedExactlyOnce(rows);
    });

    it('gives the nonce back when the transaction rolls back: the next batch takes it, no gap', async () => {
      const { minter } = track(createTestMinter(database.db, chain));
      const nonceBefore = await chain.clients.publicClient.getTransactionCount({ address: minterAddress });
      await expect(acceptInline(minter, rewardsFor(randomWallets(2), 3), { failAfterSigning: true })).rejects.toThrow(
        'failed after signing',
      );
      const { rows, sent } = await acceptInline(minter, rewardsFor(randomWallets(2), 3));
      await sent;
      const [tx] = await chainTxsOf(rows.map((row) => row.id));
      expect(tx!.nonce).toBe(BigInt(nonceBefore));
      expect((await minter.processPending()).confirmedTransactions).toBe(1);
      await expectMintedExactlyOnce(rows);
    });

    it('recovers a batch committed but never sent (crash after commit) and mints it once', async () => {
      const crashed = minterWithUnreachableNode();
      const { rows, value, sent } = await acceptInline(crashed.minter, rewardsFor(randomWallets(3), 5));
      // Issue 26: never `submitted` with a hash when the broadcast failed.
      expect(await sent).toEqual({ status: 'pending' });
      expect(crashed.sendAttempts()).toBe(1);
      const [recorded] = await chainTxsOf(rows.map((row) => row.id));
      expect(recorded).toMatchObject({ status: 'signed', hashes: [value!.transactionHash] });
      await crashed.minter.stop();

      const { minter } = track(createTestMinter(database.db, chain));
      await minter.processPending();
      expect((await minter.processPending()).confirmedTransactions).toBe(1);
      await expectMintedExactlyOnce(rows);
    });

    it('keeps nonces consecutive and mints each reward once when inline batches race the minter’s own path', async () => {
      const { minter } = track(createTestMinter(database.db, chain));
      const pendingRows = await insertPendingRewards(database.db, rewardsFor(randomWallets(5), 20));
      const inline = Array.from({ length: 10 }, () => acceptInline(minter, rewardsFor(randomWallets(3), 3)));
      const submitted = pendingRows.map((row) => minter.submit(row.id));
      const results = await Promise.all(inline);
      await Promise.all([...submitted, ...results.map((r) => r.sent)]);
      await minter.processPending();
      await minter.processPending();
      const all = [...pendingRows, ...results.flatMap((r) => r.rows)];
      const txs = await chainTxsOf(all.map((row) => row.id));
      const nonces = txs.map((tx) => Number(tx.nonce)).sort((a, b) => a - b);
      expect(nonces).toEqual(Array.from({ length: nonces.length }, (_, i) => nonces[0]! + i));
      expect(new Set(txs.map((tx) => tx.status))).toEqual(new Set(['confirmed']));
      await expectMintedExactlyOnce(all);
    });

    it('does not sign for a stopped minter: rows go in pending', async () => {
      const { minter } = track(createTestMinter(database.db, chain));
      await minter.stop();
      const { value, sent } = await acceptInline(minter, rewardsFor(randomWallets(1), 1));
      expect(value).toBeUndefined();
      expect(sent).toBeUndefined();
    });
  });
});
