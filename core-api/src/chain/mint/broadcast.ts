import type { Hex } from 'viem';
import { recordTxError } from '../chain-txs.repository.ts';
import type { MintSubmission } from '../minter.types.ts';
import { type SendOutcome, type SendResult, shortError } from '../tx-sender.ts';
import type { MinterContext, SignedBatch } from './context.ts';

// Broadcast: sends a recorded transaction and writes what the send found. Sends go out in the order they are
// queued (TxSender.send), which the callers keep in nonce order.

/** One send of a recorded transaction, classified; never throws. */
async function sendOnce(ctx: MinterContext, hash: Hex, raw: Hex): Promise<SendResult> {
  const result = await ctx.sender.send(raw);
  if (result.outcome === 'sent') ctx.metrics.mintTransactions.inc({ result: 'sent' });
  if (result.outcome === 'nonce_consumed') {
    // Either this transaction already mined (its receipt settles it) or another sender used the nonce
    // (the tracker sees the nonce passed with no receipt and re-queues); the sender re-reads the nonce.
    ctx.log.warn({ hash, error: shortError(result.error) }, 'broadcast: nonce already used');
  }
  if (result.outcome === 'failed') {
    ctx.metrics.mintTransactions.inc({ result: 'send_failed' });
    ctx.log.warn({ hash, error: shortError(result.error) }, 'broadcast failed; the tracker will resend');
  }
  return result;
}

/** Writes what a send found. Failures leave the transaction `signed`: the tracker sends `raw_tx` again. */
async function recordSend(ctx: MinterContext, chainTxId: bigint, hash: Hex, result: SendResult): Promise<void> {
  if (result.outcome === 'failed') {
    await recordTxError(ctx.db, chainTxId, shortError(result.error), ctx.clock.now());
    return;
  }
  await ctx.marker.mark(chainTxId, hash, result.error === undefined ? null : shortError(result.error));
}

/**
 * Queues the send of a recorded transaction (sends leave in queue order, so callers queue in nonce order),
 * overlapping with whatever the caller does next. The transaction is in `broadcasting` from the moment it is
 * queued, so the tracker never sends it again while it waits for its turn (a second send would fail as a used
 * nonce and reset the nonce counter). `onSent` runs right after the send, before its outcome is recorded.
 */
export function enqueueBroadcast(
  ctx: MinterContext,
  tx: { chainTxId: bigint; hash: Hex; raw: Hex },
  onSent?: (result: SendResult) => void,
): Promise<SendOutcome> {
  ctx.broadcasting.add(tx.chainTxId);
  return sendOnce(ctx, tx.hash, tx.raw)
    .then(async (result) => {
      onSent?.(result);
      await recordSend(ctx, tx.chainTxId, tx.hash, result);
      return result.outcome;
    })
    .finally(() => ctx.broadcasting.delete(tx.chainTxId));
}

/**
 * What a request is told after its batch's send: `submitted` with the hash only when the node took the
 * transaction (or already had it); a failed broadcast is `pending` with no hash — the tracker sends it later.
 */
export function submissionAfterSend(batch: SignedBatch, result: SendResult): MintSubmission {
  return result.outcome === 'failed' ? { status: 'pending' } : { status: 'submitted', transactionHash: batch.hash };
}
