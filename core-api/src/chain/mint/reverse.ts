import { sql } from 'kysely';
import { type Address, encodeFunctionData, type Hex, parseEventLogs, type TransactionReceipt } from 'viem';
import type { Database } from '../../db/database.ts';
import { rewardTokenAbi } from '../artifacts/index.ts';
import { insertSignedTx } from '../chain-txs.repository.ts';
import { shortError } from '../tx-sender.ts';
import { enqueueBroadcast } from './broadcast.ts';
import type { MinterContext } from './context.ts';
import { ensureResentBeforeSigning } from './resend.ts';

// Reversals on chain (issue 35 §2; docs/chain.md "Taking rewards back"): `reward_reversals` rows are an outbox
// like `reward_mints`. Pending rows are claimed and signed into one `reverseBatch` on the minter's own signer
// and nonce stream (recorded in `chain_txs` with the rows moved to `submitted` in one database transaction),
// sent after the commit, and settled from the mined receipt's `RewardReversed` events: `taken` is what the
// token burned, the rest is the member's debt at the brand. The token applies each reversal id once (it skips
// one applied before, with no event), so a batch sent again after it landed burns nothing twice; its skipped
// ids are settled from the token's record of what the first one took (readSkippedReversals). The tracker confirms the transaction like a
// mint batch (confirm.ts calls settleReversalsIn in the same database transaction); a reverted or dropped one
// puts its rows back to `pending`.

export const REVERSE_PURPOSE = 'reverseBatch';

/** Reversals signed into one transaction at most. */
const REVERSE_BATCH_MAX = 100;

/** Gas of a `reverseBatch`: ~35,000 per reversal (a burn and an event) over the transaction's own. */
export function reverseBatchGasLimit(count: number): bigint {
  return 60_000n + 45_000n * BigInt(count);
}

/** The bytes32 a reversal row is named by on chain: its uuid, left-padded. */
export function reversalTopic(id: string): Hex {
  return `0x${id.replace(/-/g, '').toLowerCase().padStart(64, '0')}`;
}

interface ClaimedReversal {
  id: string;
  wallet_address: string;
  pts: bigint | string | number;
}

/** Signs one `reverseBatch` for these rows and records it (`signed`) in `trx`. No RPC here. */
async function signReverseBatch(ctx: MinterContext, trx: Database, rows: ClaimedReversal[], nonce: bigint) {
  const fees = await ctx.sender.fees();
  const data = encodeFunctionData({
    abi: rewardTokenAbi,
    functionName: 'reverseBatch',
    args: [
      rows.map((row) => row.wallet_address as Address),
      rows.map((row) => BigInt(row.pts)),
      rows.map((row) => reversalTopic(row.id)),
    ],
  });
  const gas = reverseBatchGasLimit(rows.length);
  const { raw, hash } = await ctx.sender.sign({ nonce, to: ctx.tokenAddress, data, gas, value: 0n, ...fees });
  const at = ctx.clock.now();
  const chainTxId = await insertSignedTx(trx, {
    chainId: ctx.chainId,
    signer: ctx.signer,
    nonce,
    purpose: REVERSE_PURPOSE,
    hash,
    raw,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    gasLimit: gas,
    at,
  });
  return { chainTxId, hash, raw };
}

/** Claims pending reversals (oldest first, skipping rows another claim holds) and signs them; null when none. */
function claimAndSignReversals(ctx: MinterContext) {
  const { sender } = ctx;
  return sender.withSigningLock(async () => {
    const nonce = await sender.nextNonce();
    await ensureResentBeforeSigning(ctx);
    try {
      const signed = await ctx.db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('reward_reversals')
          .select(['id', 'wallet_address', 'pts'])
          .where('status', '=', 'pending')
          .where('wallet_address', 'is not', null)
          .orderBy('created_at')
          .orderBy('id')
          .limit(REVERSE_BATCH_MAX)
          .forUpdate()
          .skipLocked()
          .execute();
        if (rows.length === 0) return null;
        const tx = await signReverseBatch(ctx, trx, rows as ClaimedReversal[], nonce);
        await trx
          .updateTable('reward_reversals')
          .set({
            status: 'submitted',
            chain_tx_id: tx.chainTxId,
            transaction_hash: tx.hash,
            updated_at: ctx.clock.now(),
          })
          .where(
            'id',
            'in',
            rows.map((row) => row.id),
          )
          .execute();
        return { ...tx, nonce, count: rows.length };
      });
      if (signed) sender.nonceUsed(nonce);
      return signed;
    } catch (error) {
      if ((error as { code?: string }).code === '23505') sender.forgetNonce();
      throw error;
    }
  });
}

/**
 * Signs and sends every pending reversal, a batch at a time. Returns the transactions sent. The sends are
 * awaited so a caller (the reversal route) can wait for the receipt right after.
 */
export async function sendPendingReversals(ctx: MinterContext): Promise<Hex[]> {
  const hashes: Hex[] = [];
  // Most passes find nothing: they never take the signing lock for it.
  const waiting = await ctx.db
    .selectFrom('reward_reversals')
    .select('id')
    .where('status', '=', 'pending')
    .where('wallet_address', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  if (!waiting) return hashes;
  for (let pass = 0; pass < 10 && !ctx.stopped; pass++) {
    const batch = await claimAndSignReversals(ctx);
    if (!batch) break;
    ctx.log.debug({ nonce: Number(batch.nonce), hash: batch.hash, reversals: batch.count }, 'reverseBatch signed');
    hashes.push(batch.hash);
    await enqueueBroadcast(ctx, batch).catch((error: unknown) =>
      ctx.log.warn({ error: shortError(error) }, 'recording a reverseBatch broadcast failed'),
    );
  }
  return hashes;
}

/** Reversal ids read per `reversalsApplied` call. */
const APPLIED_READ_CHUNK = 500;

/**
 * What the token recorded for each of these reversal topics at `blockNumber` (latest when unset): applied or
 * not, and what it took when it was. Ids the token skipped as applied before (a `reverseBatch` sent again
 * after the first landed) are settled from this, with what the first one burned.
 */
export async function readAppliedReversals(
  ctx: Pick<MinterContext, 'publicClient' | 'tokenAddress'>,
  topics: Hex[],
  blockNumber?: bigint,
): Promise<Map<string, { applied: boolean; taken: bigint }>> {
  const records = new Map<string, { applied: boolean; taken: bigint }>();
  for (let start = 0; start < topics.length; start += APPLIED_READ_CHUNK) {
    const chunk = topics.slice(start, start + APPLIED_READ_CHUNK);
    const [applied, taken] = await ctx.publicClient.readContract({
      address: ctx.tokenAddress,
      abi: rewardTokenAbi,
      functionName: 'reversalsApplied',
      args: [chunk],
      ...(blockNumber === undefined ? {} : { blockNumber }),
    });
    for (const [index, topic] of chunk.entries()) {
      records.set(topic.toLowerCase(), { applied: applied[index]!, taken: taken[index]! });
    }
  }
  return records;
}

/** A mined `reverseBatch` to settle: its ledger id and its receipt (with logs when read from the node). */
interface MinedReversal {
  chainTxId: bigint;
  receipt: Partial<Pick<TransactionReceipt, 'logs' | 'blockNumber'>>;
}

/**
 * What the reversals of these mined transactions took when the token skipped them (no `RewardReversed` in
 * the receipt: applied by an earlier transaction), by reversal topic: read from the token's record before
 * the database transaction that settles them (no RPC inside one).
 */
export async function readSkippedReversals(
  ctx: Pick<MinterContext, 'db' | 'publicClient' | 'tokenAddress'>,
  mined: MinedReversal[],
): Promise<Map<string, bigint>> {
  const earlier = new Map<string, bigint>();
  for (const { chainTxId, receipt } of mined) {
    if (!receipt.logs) continue;
    const logged = takenByTopic({ logs: receipt.logs }, ctx.tokenAddress);
    const rows = await ctx.db
      .selectFrom('reward_reversals')
      .select('id')
      .where('chain_tx_id', '=', chainTxId)
      .where('status', '=', 'submitted')
      .execute();
    const skipped = rows.map((row) => reversalTopic(row.id)).filter((topic) => !logged.has(topic));
    if (skipped.length === 0) continue;
    const records = await readAppliedReversals(ctx, skipped, receipt.blockNumber);
    for (const [topic, record] of records) if (record.applied) earlier.set(topic, record.taken);
  }
  return earlier;
}

/** What each reversal of a receipt took: `RewardReversed(from, reversalId, requested, taken)` by reversal topic. */
function takenByTopic(receipt: Pick<TransactionReceipt, 'logs'>, token: Address): Map<string, bigint> {
  const taken = new Map<string, bigint>();
  const logs = parseEventLogs({ abi: rewardTokenAbi, eventName: 'RewardReversed', logs: receipt.logs });
  for (const log of logs) {
    if (log.address.toLowerCase() !== token.toLowerCase()) continue;
    taken.set(log.args.reversalId.toLowerCase(), log.args.taken);
  }
  return taken;
}

/**
 * Settles the reversals of confirmed transactions from their receipts, in `trx` (the transaction that confirms
 * them): taken and debt recorded, the debt added to the member's at the brand. A reversal the token skipped
 * (applied by an earlier transaction: no event here) is settled with what it took then, from `earlier`
 * (readSkippedReversals); one found in neither, and rows of a receipt without logs (confirmed from the token
 * supply), stay `submitted` for settleOpenReversals. The rows settled.
 */
export async function settleReversalsIn(
  ctx: Pick<MinterContext, 'tokenAddress'>,
  trx: Database,
  mined: MinedReversal[],
  at: Date,
  earlier: ReadonlyMap<string, bigint> = new Map(),
): Promise<{ id: string; brandId: string; taken: bigint; debt: bigint }[]> {
  const settled: { id: string; brandId: string; taken: bigint; debt: bigint }[] = [];
  for (const { chainTxId, receipt } of mined) {
    if (!receipt.logs) continue;
    const rows = await trx
      .selectFrom('reward_reversals')
      .select(['id', 'brand_id', 'wallet_address', 'pts'])
      .where('chain_tx_id', '=', chainTxId)
      .where('status', '=', 'submitted')
      .forUpdate()
      .execute();
    if (rows.length === 0) continue;
    const taken = takenByTopic({ logs: receipt.logs }, ctx.tokenAddress);
    for (const row of rows) {
      const topic = reversalTopic(row.id);
      const took = taken.get(topic) ?? earlier.get(topic);
      if (took === undefined) continue;
      const debt = BigInt(row.pts) - took;
      await recordSettlement(trx, row, took, debt, at);
      settled.push({ id: row.id, brandId: row.brand_id, taken: took, debt });
    }
  }
  return settled;
}

async function recordSettlement(
  trx: Database,
  row: { id: string; brand_id: string; wallet_address: string | null },
  taken: bigint,
  debt: bigint,
  at: Date,
): Promise<void> {
  await trx
    .updateTable('reward_reversals')
    .set({ status: 'confirmed', taken, debt, confirmed_at: at, updated_at: at, last_error: null })
    .where('id', '=', row.id)
    .execute();
  if (debt <= 0n || !row.wallet_address) return;
  await sql`
    INSERT INTO member_debts (brand_id, wallet_address, debt, updated_at)
    VALUES (${row.brand_id}, ${row.wallet_address.toLowerCase()}, ${debt.toString()}::bigint, ${at})
    ON CONFLICT (brand_id, wallet_address) DO UPDATE SET debt = member_debts.debt + excluded.debt, updated_at = ${at}`.execute(
    trx,
  );
}

/**
 * The safety net: reversals whose transaction the tracker confirmed without logs are settled from a fresh
 * receipt; those whose transaction failed (reverted, dropped) go back to `pending` to be sent again.
 */
export async function settleOpenReversals(
  ctx: MinterContext,
  onSettled?: (trx: Database, ids: string[]) => Promise<void>,
): Promise<number> {
  const open = await ctx.db
    .selectFrom('reward_reversals as r')
    .innerJoin('chain_txs as t', 't.id', 'r.chain_tx_id')
    .select(['r.chain_tx_id', 't.status as tx_status', 't.current_hash'])
    .where('r.status', '=', 'submitted')
    .where('t.status', 'in', ['confirmed', 'failed'])
    .groupBy(['r.chain_tx_id', 't.status', 't.current_hash'])
    .execute();
  let settled = 0;
  for (const tx of open) {
    const chainTxId = BigInt(tx.chain_tx_id as bigint);
    if (tx.tx_status === 'failed') {
      await requeueReversals(ctx, chainTxId);
      continue;
    }
    const receipt = await ctx.sender.receipt(tx.current_hash as Hex);
    if (!receipt) continue;
    const earlier = await readSkippedReversals(ctx, [{ chainTxId, receipt }]);
    await ctx.db.transaction().execute(async (trx) => {
      const rows = await settleReversalsIn(ctx, trx, [{ chainTxId, receipt }], ctx.clock.now(), earlier);
      settled += rows.length;
      if (onSettled && rows.length > 0)
        await onSettled(
          trx,
          rows.map((row) => row.id),
        );
    });
  }
  return settled;
}

/**
 * A failed transaction's reversals back to `pending`, to be sent again. Its burns may have landed after all (a
 * transaction mined without a receipt the node can show): the token applies each reversal id once, so the
 * next `reverseBatch` skips those and they are settled with what was burned the first time.
 */
export async function requeueReversals(ctx: Pick<MinterContext, 'db' | 'clock'>, chainTxId: bigint): Promise<void> {
  await ctx.db
    .updateTable('reward_reversals')
    .set({
      status: 'pending',
      chain_tx_id: null,
      transaction_hash: null,
      attempts: sql<number>`attempts + 1`,
      last_error: `transaction ${chainTxId} failed`,
      updated_at: ctx.clock.now(),
    })
    .where('chain_tx_id', '=', chainTxId)
    .where('status', '=', 'submitted')
    .execute();
}

/** The reversal outbox's pass: open rows settled from a fresh receipt or put back, then pending rows sent. */
export async function driveReversals(ctx: MinterContext): Promise<void> {
  await settleOpenReversals(ctx, ctx.onReversalsSettled);
  await sendPendingReversals(ctx);
}

/**
 * Sends the pending reversals, then tracks receipts (the tracker confirms them and settles their rows) until
 * each of `ids` is confirmed or `waitMs` passed.
 */
export async function reverseAndWait(
  ctx: MinterContext,
  tracker: { track(): Promise<unknown> },
  ids: string[],
  waitMs: number,
): Promise<void> {
  await sendPendingReversals(ctx);
  const until = Date.now() + waitMs;
  while (!ctx.stopped && ids.length > 0) {
    await tracker.track();
    const open = await ctx.db
      .selectFrom('reward_reversals')
      .select('id')
      .where('id', 'in', ids)
      .where('status', '<>', 'confirmed')
      .execute();
    if (open.length === 0 || Date.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(ctx.config.PTS_RECEIPT_POLL_MS, 200)));
  }
}
