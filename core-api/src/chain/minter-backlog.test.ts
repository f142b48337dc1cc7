import { type Address, type Hex, keccak256, parseTransaction } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import type { Minter } from './minter.types.ts';
import {
  createTestMinter,
  insertPendingRewards,
  ledgerTotals,
  type RewardRow,
  randomWallets,
  startTestChain,
  type TestChain,
} from './test-chain.ts';
import { errorText } from './tx-sender.ts';

// Issue 26 §2 and §3: recovery from a backlog after the chain stalled, and nonce order after a failover. The
// chain is an anvil whose mining the tests stop (automine off) and resume (evm_mine) themselves.

let database: TestDatabase;
let chain: TestChain;
const minters: Minter[] = [];

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

const NONCE_USED = /nonce too low|nonce has already been used|invalid nonce/i;

interface SendLog {
  nonce: number;
  hash: Hex;
  nonceUsed: boolean;
}

/**
 * Forwards every broadcast to anvil and logs it while `armed`; `afterSend(count)` runs after each logged send
 * (the chain producing a block mid-pass, for instance).
 */
function recordingSender() {
  const sends: SendLog[] = [];
  const state = { armed: false, afterSend: async (_count: number) => {} };
  const sendRawTransaction = async (raw: Hex): Promise<Hex> => {
    let nonceUsed = false;
    try {
      return await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: raw });
    } catch (error) {
      nonceUsed = NONCE_USED.test(errorText(error));
      throw error;
    } finally {
      if (state.armed) {
        sends.push({ nonce: Number(parseTransaction(raw).nonce), hash: keccak256(raw), nonceUsed });
        await state.afterSend(sends.length);
      }
    }
  };
  return { sends, state, sendRawTransaction };
}

function backlogMinter(sendRawTransaction?: (raw: Hex) => Promise<Hex>) {
  const created = createTestMinter(database.db, chain, {
    config: { PTS_MINT_BATCH_MAX: 1 },
    ...(sendRawTransaction ? { sendRawTransaction } : {}),
  });
  minters.push(created.minter);
  return created;
}

/** One transaction per reward (batch max 1), all sent to anvil's pool and none mined. */
async function openBacklog(minter: Minter, count: number): Promise<RewardRow[]> {
  await chain.rpc('evm_setAutomine', [false]);
  const rows = await insertPendingRewards(
    database.db,
    randomWallets(count).map((wallet, index) => ({ wallet, amount: BigInt(index + 1) })),
  );
  let signed = 0;
  while (signed < count) signed += (await minter.processPending()).batches;
  return rows;
}

async function openTxs(): Promise<{ nonce: bigint; current_hash: string; hashes: string[] }[]> {
  return database.db
    .selectFrom('chain_txs')
    .select(['nonce', 'current_hash', 'hashes'])
    .where('status', 'in', ['signed', 'submitted'])
    .orderBy('nonce')
    .execute();
}

async function expectMintedExactlyOnce(rows: RewardRow[]): Promise<void> {
  for (const [wallet, amount] of ledgerTotals(rows)) {
    expect(await chain.balanceOf(wallet as Address), `balance of ${wallet}`).toBe(amount);
  }
}

function ascending(nonces: number[]): boolean {
  return nonces.every((nonce, index) => index === 0 || nonce > nonces[index - 1]!);
}

describe('minter backlog after a stall', () => {
  it('replaces only what is still pending, lowest nonce first, and records what mines mid-pass in that pass', async () => {
    const recorder = recordingSender();
    const { minter, clock } = backlogMinter(recorder.sendRawTransaction);
    const rows = await openBacklog(minter, 70);
    expect(await openTxs()).toHaveLength(70);
    expect((await minter.processPending()).replaced).toBe(0);

    // Nothing mined for longer than PTS_MINT_STUCK_SECONDS. Mid-pass, once 50 sends have gone out, the chain
    // comes back and mines a block with everything its pool holds.
    clock.advance(31_000);
    recorder.state.armed = true;
    let mined = false;
    recorder.state.afterSend = async (count) => {
      if (count >= 50 && !mined) {
        mined = true;
        await chain.rpc('evm_mine');
      }
    };
    const pass = await minter.processPending();
    recorder.state.armed = false;

    const sent = recorder.sends;
    expect(sent.filter((send) => send.nonceUsed)).toEqual([]);
    expect(ascending(sent.map((send) => send.nonce))).toBe(true);
    // The first 50 were replaced; the 20 the block mined meanwhile were recorded by the same pass.
    expect(pass.replaced).toBe(50);
    expect(pass.confirmedTransactions).toBe(20);
    expect(await openTxs()).toHaveLength(50);

    expect((await minter.processPending()).confirmedTransactions).toBe(50);
    await expectMintedExactlyOnce(rows);
  });

  it('does not replace while the chain mines the backlog; sends again, as signed, only what the node lost', async () => {
    const recorder = recordingSender();
    const { minter, clock } = backlogMinter(recorder.sendRawTransaction);
    const rows = await openBacklog(minter, 30);
    await minter.processPending();
    const open = await openTxs();
    // The node lost five (a restart emptied part of its pool); it mines the twenty below them.
    for (const tx of open.slice(20)) await chain.rpc('anvil_dropTransaction', [tx.current_hash]);
    await chain.rpc('evm_mine');
    for (const tx of open.slice(25)) {
      const { raw_tx } = await database.db
        .selectFrom('chain_txs')
        .select('raw_tx')
        .where('current_hash', '=', tx.current_hash)
        .executeTakeFirstOrThrow();
      await chain.clients.publicClient.sendRawTransaction({ serializedTransaction: raw_tx as Hex });
    }

    clock.advance(31_000);
    recorder.state.armed = true;
    const pass = await minter.processPending();
    recorder.state.armed = false;

    expect(pass.replaced).toBe(0);
    expect(pass.confirmedTransactions).toBe(20);
    expect(recorder.sends.map((send) => send.hash)).toEqual(open.slice(20, 25).map((tx) => tx.current_hash));
    expect(recorder.sends.filter((send) => send.nonceUsed)).toEqual([]);

    await chain.rpc('evm_mine');
    expect((await minter.processPending()).confirmedTransactions).toBe(10);
    await expectMintedExactlyOnce(rows);
  });

  it('runs one tracking pass at a time however many triggers overlap: each stuck transaction is replaced once', async () => {
    const { minter, clock } = backlogMinter();
    const rows = await openBacklog(minter, 10);
    await minter.processPending();
    clock.advance(31_000);
    minter.start();
    const passes = await Promise.all([minter.processPending(), minter.processPending(), minter.processPending()]);
    expect(passes.map((pass) => pass.replaced)).toEqual([10, 10, 10]);
    expect((await openTxs()).map((tx) => tx.hashes.length)).toEqual(Array(10).fill(2));
    await chain.rpc('evm_mine');
    // The started minter's own tracking may confirm them before a pass asked for here: passes until none is open.
    await expect
      .poll(
        async () => {
          await minter.processPending();
          return (await openTxs()).length;
        },
        { timeout: 20_000 },
      )
      .toBe(0);
    await expectMintedExactlyOnce(rows);
  });
});

describe('minter failover', () => {
  it('a new signer sends the open transactions it inherits, in nonce order, before any batch of its own', async () => {
    // The old leader signed three batches and died before any reached the node.
    const dead = backlogMinter(async () => {
      throw new Error('fetch failed: connect ECONNREFUSED');
    });
    const inherited = await insertPendingRewards(
      database.db,
      randomWallets(3).map((wallet) => ({ wallet, amount: 5n })),
    );
    while ((await openTxs()).length < 3) await dead.minter.processPending();
    await dead.minter.stop();
    const left = await openTxs();
    expect(left).toHaveLength(3);

    const recorder = recordingSender();
    recorder.state.armed = true;
    const { minter } = backlogMinter(recorder.sendRawTransaction);
    const own = await insertPendingRewards(
      database.db,
      randomWallets(1).map((wallet) => ({ wallet, amount: 7n })),
    );
    const submission = await minter.submit(own[0]!.id);
    expect(submission.status).toBe('submitted');
    await minter.processPending();

    const first = Number(left[0]!.nonce);
    expect(recorder.sends.slice(0, 4).map((send) => send.nonce)).toEqual([first, first + 1, first + 2, first + 3]);
    expect((await openTxs()).length).toBe(0);
    await expectMintedExactlyOnce([...inherited, ...own]);
  });
});
