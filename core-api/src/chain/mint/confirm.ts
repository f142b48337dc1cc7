import { sql } from 'kysely';
import type { Hex, TransactionReceipt } from 'viem';
import type { Database } from '../../db/database.ts';
import { type ChainTxRow, confirmTxs, failTx } from '../chain-txs.repository.ts';
import { splitDroppedBatches } from '../supply-witness.ts';
import type { MinterContext } from './context.ts';
import { REVERSE_PURPOSE, readSkippedReversals, requeueReversals, settleReversalsIn } from './reverse.ts';

// Settling transactions in the ledger: mined ones confirmed with their rewards, failed ones re-queued, and
// batches whose nonce another transaction used told apart by the token supply.

/** Mined transactions confirmed in one database transaction (confirmMined). */
const CONFIRM_GROUP = 25;

/** A mined transaction to confirm: its receipt, or (`by: 'supply'`) the token supply's word that it landed. */
export interface MinedTx {
  tx: ChainTxRow;
  /** `logs` when read from the node (the tracker's receipts): reversals are settled from them. */
  receipt: Pick<TransactionReceipt, 'transactionHash' | 'blockNumber' | 'gasUsed'> &
    Partial<Pick<TransactionReceipt, 'logs'>>;
  by?: 'receipt' | 'supply';
}

/**
 * Records mined transactions as confirmed, with their rewards and whatever `onMintsConfirmed` writes, in
 * one database transaction per group of up to CONFIRM_GROUP: under load the tracker finds several mined
 * batches per pass, and their bookkeeping (webhooks, leaderboards, achievements) then costs one set of
 * statements instead of one per batch. Returns how many transactions this call confirmed.
 */
export async function confirmMined(ctx: MinterContext, mined: MinedTx[]): Promise<number> {
  let confirmedCount = 0;
  for (let start = 0; start < mined.length; start += CONFIRM_GROUP) {
    confirmedCount += await confirmGroup(ctx, mined.slice(start, start + CONFIRM_GROUP));
  }
  return confirmedCount;
}

async function confirmGroup(ctx: MinterContext, group: MinedTx[]): Promise<number> {
  const began = performance.now();
  const rewards = { count: 0 };
  // Read before the database transaction (no RPC inside one): what the token's skipped reversals took.
  const earlier = await readSkippedReversals(
    ctx,
    group
      .filter(({ tx }) => tx.purpose === REVERSE_PURPOSE)
      .map(({ tx, receipt }) => ({ chainTxId: BigInt(tx.id), receipt })),
  );
  const count = await confirmGroupIn(ctx, group, rewards, earlier);
  // The bookkeeping that commits with a confirmation is what bounds confirmed rewards per second (benchmarks.md).
  ctx.log.debug(
    { transactions: count, rewards: rewards.count, ms: Math.round(performance.now() - began) },
    'mined transactions confirmed',
  );
  return count;
}

function confirmGroupIn(
  ctx: MinterContext,
  group: MinedTx[],
  rewards: { count: number },
  earlier: ReadonlyMap<string, bigint>,
): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    const at = ctx.clock.now();
    const updated = await confirmTxs(
      trx,
      group.map(({ tx, receipt, by }) => ({
        chainTxId: BigInt(tx.id),
        hash: receipt.transactionHash,
        blockNumber: receipt.blockNumber,
        gasUsed: receipt.gasUsed,
        by,
      })),
      at,
    );
    if (updated.length === 0) return 0;
    const byTx = new Map(group.map((mined) => [String(mined.tx.id), mined]));
    await settleConfirmedReversals(ctx, trx, updated, byTx, at, earlier);
    const confirmed = await trx
      .updateTable('reward_mints')
      .set({ status: 'confirmed', last_error: null, updated_at: at })
      .where('chain_tx_id', 'in', updated)
      .where('status', '=', 'submitted')
      .returning(['id', 'event_id', 'brand_id', 'wallet_address', 'amount', 'chain_tx_id', 'reconciled_at'])
      .execute();
    rewards.count = confirmed.length;
    // A reward the reconciler put back (its first confirmation was lost on chain) had its notice and
    // leaderboard points at that first confirmation: it is only minted again here.
    const firstTime = confirmed.filter((row) => row.reconciled_at === null);
    if (ctx.onMintsConfirmed && firstTime.length > 0) {
      await ctx.onMintsConfirmed(
        trx,
        firstTime.map((row) => {
          const { receipt, by } = byTx.get(String(row.chain_tx_id))!;
          return {
            id: row.id,
            eventId: row.event_id,
            brandId: row.brand_id,
            walletAddress: row.wallet_address,
            amount: BigInt(row.amount),
            transactionHash: receipt.transactionHash,
            blockNumber: receipt.blockNumber,
            confirmedBy: by ?? 'receipt',
          };
        }),
        { at },
      );
    }
    return updated.length;
  });
}

/** The reversals carried by the transactions this confirmation recorded, settled from their receipts' logs. */
async function settleConfirmedReversals(
  ctx: MinterContext,
  trx: Database,
  updated: bigint[],
  byTx: Map<string, MinedTx>,
  at: Date,
  earlier: ReadonlyMap<string, bigint>,
): Promise<void> {
  const reversing = updated.filter((id) => byTx.get(String(id))?.tx.purpose === REVERSE_PURPOSE);
  if (reversing.length === 0) return;
  const mined = reversing.map((chainTxId) => ({ chainTxId, receipt: byTx.get(String(chainTxId))!.receipt }));
  const settled = await settleReversalsIn(ctx, trx, mined, at, earlier);
  if (ctx.onReversalsSettled && settled.length > 0) {
    await ctx.onReversalsSettled(
      trx,
      settled.map((row) => row.id),
    );
  }
}

/** Marks the transaction failed and puts its rows back to `pending` (or `failed` after the last attempt). */
export function requeue(
  ctx: MinterContext,
  tx: ChainTxRow,
  reason: string,
  blockNumber: bigint | null,
): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await failTx(trx, BigInt(tx.id), reason, blockNumber, ctx.clock.now()))) return 0;
    await requeueReversals({ db: trx, clock: ctx.clock }, BigInt(tx.id));
    const rows = await trx
      .updateTable('reward_mints')
      .set({
        attempts: sql<number>`attempts + 1`,
        status: sql<
          'pending' | 'failed'
        >`CASE WHEN attempts + 1 >= ${ctx.config.PTS_MINT_MAX_ATTEMPTS} THEN 'failed' ELSE 'pending' END`,
        last_error: reason,
        updated_at: ctx.clock.now(),
      })
      .where('chain_tx_id', '=', tx.id)
      .where('status', '=', 'submitted')
      .returning(['status'])
      .execute();
    return rows.filter((row) => row.status === 'pending').length;
  });
}

/**
 * Batches whose nonce was used with none of their hashes mined: those whose tokens the supply holds mined
 * without a receipt we can find (supply-witness.ts) and are confirmed; the others can never mine now, and
 * their rewards are re-queued. Returns how many transactions were confirmed and how many rewards re-queued.
 */
export async function settleDropped(
  ctx: MinterContext,
  dropped: ChainTxRow[],
  finalBlock: bigint,
): Promise<{ confirmed: number; requeued: number }> {
  const { db, chainId, publicClient, tokenAddress, signer, sender, log, metrics } = ctx;
  const split = await splitDroppedBatches(
    { db, chainId, publicClient, tokenAddress, signer, receipt: (hash) => sender.receipt(hash) },
    dropped,
    finalBlock,
  );
  let confirmed = 0;
  if (split.landed.length > 0) {
    confirmed = await confirmMined(
      ctx,
      split.landed.map((tx) => ({
        tx,
        receipt: { transactionHash: tx.current_hash as Hex, blockNumber: split.blockNumber, gasUsed: 0n },
        by: 'supply' as const,
      })),
    );
    metrics.mintTransactions.inc({ result: 'landed_without_receipt' }, split.landed.length);
    log.warn(
      {
        nonces: split.landed.map((tx) => Number(tx.nonce)),
        blockNumber: split.blockNumber.toString(),
        surplus: split.surplus.toString(),
      },
      'mintBatch nonce used with no receipt for its hashes, but the token supply holds its mint: confirmed, not minted again',
    );
  }
  let requeued = 0;
  for (const tx of split.lost) {
    const count = await requeue(ctx, tx, `dropped: nonce ${tx.nonce} was used by another transaction`, null);
    requeued += count;
    metrics.mintTransactions.inc({ result: 'dropped' });
    log.warn({ nonce: Number(tx.nonce), requeued: count }, 'mintBatch dropped; rewards re-queued');
  }
  return { confirmed, requeued };
}
