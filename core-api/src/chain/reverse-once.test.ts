import { randomUUID } from 'node:crypto';
import { type Address, type Hex, parseTransaction } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import type { Minter } from './minter.types.ts';
import { splitDroppedBatches } from './supply-witness.ts';
import {
  createTestMinter,
  insertPendingRewards,
  randomWallets,
  rowStatuses,
  startTestChain,
  TEST_CLOCK_START,
  type TestChain,
} from './test-chain.ts';

// A crash at any point loses no reward and burns nothing twice (issue 35 §2). A `reverseBatch` that used its
// nonce with no receipt under any hash the ledger recorded (anvil restored from a state file ahead of its
// blocks) is put back to `pending` and sent again: the token applies each reversal id once, so the second one
// burns nothing and the reversal is settled with what the first one took. And while a burn is in flight the
// supply witness counts it, so a mint batch that landed without a receipt is not judged lost and minted again.
// Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

let database: TestDatabase;
let chain: TestChain;
const minters: Minter[] = [];
const minter = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
const BRAND = '0x00000000000000000000000000000000000000b1';

beforeAll(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
});

afterEach(async () => {
  for (const created of minters.splice(0)) await created.stop();
  await chain.rpc('evm_setAutomine', [true]);
});

afterAll(async () => {
  await chain?.stop();
  await database?.close();
});

function newMinter() {
  const created = createTestMinter(database.db, chain);
  minters.push(created.minter);
  return created;
}

/** Mints `amount` to a fresh wallet through the minter and waits for its confirmation. */
async function fundedWallet(created: ReturnType<typeof newMinter>, amount: bigint): Promise<Address> {
  const [wallet] = randomWallets(1);
  const [row] = await insertPendingRewards(database.db, [{ wallet: wallet!, amount }]);
  await created.minter.submit(row!.id);
  await expect
    .poll(async () => {
      await created.minter.processPending();
      return (await rowStatuses(database.db, [row!.id])).get(row!.id);
    })
    .toBe('confirmed');
  expect(await chain.balanceOf(wallet!)).toBe(amount);
  return wallet!;
}

/** A pending reversal of `pts` from `wallet`, as the reversal service records one (with its event). */
async function insertReversal(wallet: Address, pts: bigint): Promise<string> {
  const eventId = randomUUID();
  const at = new Date(TEST_CLOCK_START);
  await database.db
    .insertInto('events')
    .values({
      id: eventId,
      brand_id: BRAND,
      event_type: 'purchase',
      user_email: `member-${eventId.slice(0, 8)}@example.com`,
      status: 'accepted',
      metadata: '{}',
      reward_amount: pts,
      created_at: at,
    })
    .execute();
  const id = randomUUID();
  await database.db
    .insertInto('reward_reversals')
    .values({
      id,
      brand_id: BRAND,
      reversal_id: `refund-${id}`,
      event_id: eventId,
      user_email: `member-${eventId.slice(0, 8)}@example.com`,
      wallet_address: wallet.toLowerCase(),
      pts,
      status: 'pending',
      created_at: at,
      updated_at: at,
    })
    .execute();
  return id;
}

async function chainTxOf(table: 'reward_reversals' | 'reward_mints', id: string) {
  // A mint is signed by the batcher a moment after submit() hands it over: wait for its transaction.
  let chain_tx_id: bigint | null = null;
  await expect
    .poll(async () => {
      ({ chain_tx_id } = await database.db
        .selectFrom(table)
        .select('chain_tx_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow());
      return chain_tx_id;
    })
    .not.toBeNull();
  return database.db.selectFrom('chain_txs').selectAll().where('id', '=', chain_tx_id!).executeTakeFirstOrThrow();
}

/**
 * What anvil restored from a state dump taken mid-block holds: the transaction's effects and its nonce used,
 * but no transaction under any hash the ledger recorded. The recorded one is dropped from the pool and the same
 * call, signed again with other fees, is mined in its place (call with automine off; mine afterwards).
 */
async function landWithoutReceipt(tx: { current_hash: string | null; raw_tx: string | null }): Promise<void> {
  const signed = parseTransaction(tx.raw_tx as Hex);
  await chain.rpc('anvil_dropTransaction', [tx.current_hash]);
  const twin = await minter.signTransaction({
    type: 'eip1559',
    chainId: 1868,
    nonce: signed.nonce!,
    to: signed.to!,
    data: signed.data!,
    gas: signed.gas!,
    value: 0n,
    maxFeePerGas: signed.maxFeePerGas! * 2n,
    maxPriorityFeePerGas: signed.maxPriorityFeePerGas! * 2n,
  });
  await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: twin });
}

/** Waits for the grouped `submitted` mark the stuck clock starts from (it may land after the send answers). */
async function untilSubmitted(chainTxId: bigint | string): Promise<void> {
  await expect
    .poll(
      async () =>
        (
          await database.db
            .selectFrom('chain_txs')
            .select('status')
            .where('id', '=', BigInt(chainTxId))
            .executeTakeFirstOrThrow()
        ).status,
    )
    .toBe('submitted');
}

async function reversalRow(id: string) {
  return database.db
    .selectFrom('reward_reversals')
    .select(['status', 'taken', 'debt', 'attempts', 'chain_tx_id'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/** Passes (the clock past the stuck time each) until the reversal is confirmed. */
async function settleReversal(created: ReturnType<typeof newMinter>, id: string) {
  for (let pass = 0; pass < 20; pass++) {
    created.clock.advance(31_000);
    await created.minter.processPending();
    if ((await reversalRow(id)).status === 'confirmed') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return reversalRow(id);
}

describe('a reversal burns once', () => {
  it('a reverseBatch sent again after it landed without a receipt burns nothing twice', async () => {
    const created = newMinter();
    const wallet = await fundedWallet(created, 100n);
    const supplyBefore = await chain.totalSupply();

    await chain.rpc('evm_setAutomine', [false]);
    const id = await insertReversal(wallet, 30n);
    await created.minter.reverse([id], { waitMs: 0 });
    const first = await chainTxOf('reward_reversals', id);
    expect(first.purpose).toBe('reverseBatch');
    await landWithoutReceipt(first);
    await chain.rpc('evm_mine');
    await chain.rpc('evm_setAutomine', [true]);
    expect(await chain.balanceOf(wallet)).toBe(70n);
    await untilSubmitted(first.id);

    // The nonce is used and no recorded hash has a receipt: the batch is judged failed and its row sent again
    // in a new reverseBatch, which the token skips (applied before) and which is settled with the first burn.
    const row = await settleReversal(created, id);
    expect(row).toMatchObject({ status: 'confirmed' });
    expect(BigInt(row.taken!)).toBe(30n);
    expect(BigInt(row.debt!)).toBe(0n);
    expect(row.attempts).toBeGreaterThan(0);
    expect(String(row.chain_tx_id)).not.toBe(String(first.id));
    expect(await chain.balanceOf(wallet)).toBe(70n);
    expect(await chain.totalSupply()).toBe(supplyBefore - 30n);
  });

  it('a mint batch that landed without a receipt is not minted again while a burn is in flight', async () => {
    const created = newMinter();
    const burned = await fundedWallet(created, 100n);
    const [earner] = randomWallets(1);
    const supplyBefore = await chain.totalSupply();

    await chain.rpc('evm_setAutomine', [false]);
    const [reward] = await insertPendingRewards(database.db, [{ wallet: earner!, amount: 50n }]);
    await created.minter.submit(reward!.id, { waitMs: 0 });
    const mint = await chainTxOf('reward_mints', reward!.id);
    const reversal = await insertReversal(burned, 30n);
    await created.minter.reverse([reversal], { waitMs: 0 });
    const reverse = await chainTxOf('reward_reversals', reversal);
    expect(BigInt(reverse.nonce)).toBe(BigInt(mint.nonce) + 1n);
    // Both land with no receipt under a recorded hash: the supply holds the mint, less the burn.
    await landWithoutReceipt(mint);
    await landWithoutReceipt(reverse);
    await chain.rpc('evm_mine');
    await chain.rpc('evm_setAutomine', [true]);
    expect(await chain.totalSupply()).toBe(supplyBefore + 50n - 30n);

    // The witness, as the tracker asks it: the burn in the open reverseBatch is counted, so the surplus is the
    // mint's 50 and the batch landed (before: 20, and the batch was judged lost and minted again).
    const { publicClient } = chain.clients;
    const head = await publicClient.getBlockNumber({ cacheTime: 0 });
    const split = await splitDroppedBatches(
      {
        db: database.db,
        chainId: 1868,
        publicClient,
        tokenAddress: chain.tokenAddress,
        signer: minter.address.toLowerCase(),
        receipt: (hash) => publicClient.getTransactionReceipt({ hash }).catch(() => null),
      },
      [mint],
      head,
    );
    expect(split.surplus).toBe(50n);
    expect(split.landed.map((tx) => String(tx.id))).toEqual([String(mint.id)]);
    expect(split.lost).toEqual([]);

    // And the minter's own passes: the mint confirmed by the supply, the reversal settled, each once.
    await untilSubmitted(mint.id);
    await untilSubmitted(reverse.id);
    const row = await settleReversal(created, reversal);
    expect(row).toMatchObject({ status: 'confirmed' });
    expect(BigInt(row.taken!)).toBe(30n);
    await expect
      .poll(async () => {
        await created.minter.processPending();
        return (await rowStatuses(database.db, [reward!.id])).get(reward!.id);
      })
      .toBe('confirmed');
    expect(await chain.balanceOf(earner!)).toBe(50n);
    expect(await chain.balanceOf(burned)).toBe(70n);
    expect(await chain.totalSupply()).toBe(supplyBefore + 50n - 30n);
  });
});
