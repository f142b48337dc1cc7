import type { Hex } from 'viem';
import { errorReason } from '../tx-sender.ts';
import { FINAL, type RelayerContext } from './context.ts';

// Sending a relay transaction and failing one.

/** A row that will never mine → `failed` with `reason`; waiters are told. */
export async function markFailed(
  ctx: RelayerContext,
  id: string,
  reason: string,
  blockNumber: bigint | null = null,
): Promise<void> {
  await ctx.db
    .updateTable('relay_transactions')
    .set({ status: 'failed', error: reason, block_number: blockNumber, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .where('status', 'not in', FINAL)
    .execute();
  ctx.metrics.relayTransactions.inc({ status: 'failed' });
  ctx.notify(id);
}

/**
 * Sends one signed transaction, in nonce order with the others (TxSender.send: a node may drop a transaction
 * that arrives far ahead of its predecessor); failures are remembered so the tracker re-sends.
 */
export async function broadcast(ctx: RelayerContext, id: string, raw: Hex): Promise<void> {
  const result = await ctx.sender.send(raw);
  if (result.outcome === 'sent') ctx.metrics.relayTransactions.inc({ status: 'submitted' });
  // Known: the node has it. Nonce used: ours was mined (the tracker finds the receipt) or another key
  // user took the nonce (the sender re-reads it).
  if (result.outcome !== 'failed') {
    ctx.needsBroadcast.delete(id);
    return;
  }
  const text = errorReason(result.error);
  ctx.needsBroadcast.add(id);
  ctx.metrics.relayTransactions.inc({ status: 'send_failed' });
  ctx.log.warn({ id, error: text }, 'relay broadcast failed; will retry');
  await ctx.db
    .updateTable('relay_transactions')
    .set({ error: `broadcast failed: ${text}`, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .where('status', '=', 'submitted')
    .execute();
}
