import { type Hex, parseTransaction } from 'viem';
import { type ChainTxRow, recordReplacement } from '../chain-txs.repository.ts';
import { replacementFees } from '../tx-sender.ts';
import { enqueueBroadcast } from './broadcast.ts';
import type { MinterContext } from './context.ts';

// Replacement: a stuck transaction re-signed on the same nonce with +25% fees.

/** Re-signs the same nonce with +25% fees. The new hash is recorded before it is sent, so whichever mines is found. */
export async function replaceStuck(ctx: MinterContext, tx: ChainTxRow): Promise<void> {
  const { sender } = ctx;
  const previous = parseTransaction(tx.raw_tx as Hex);
  const fees = replacementFees(
    { maxFeePerGas: BigInt(tx.max_fee_per_gas), maxPriorityFeePerGas: BigInt(tx.max_priority_fee_per_gas) },
    await sender.fees(true),
  );
  if (!fees) return; // with no cap a +25% bump always passes; kept for the type
  const { maxFeePerGas, maxPriorityFeePerGas } = fees;
  const { raw, hash } = await sender.sign({
    nonce: BigInt(tx.nonce),
    to: previous.to ?? ctx.tokenAddress,
    data: previous.data ?? '0x',
    gas: previous.gas ?? BigInt(tx.gas_limit),
    value: 0n,
    ...fees,
  });
  const recorded = await recordReplacement(
    ctx.db,
    tx,
    { hash, raw, maxFeePerGas, maxPriorityFeePerGas },
    ctx.clock.now(),
  );
  if (!recorded) return;
  ctx.metrics.mintTransactions.inc({ result: 'replaced' });
  ctx.log.warn(
    { nonce: Number(tx.nonce), previous: tx.current_hash, hash, maxFeePerGas: maxFeePerGas.toString() },
    'replaced stuck mintBatch',
  );
  await enqueueBroadcast(ctx, { chainTxId: tx.id, hash, raw });
}
