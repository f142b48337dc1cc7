import { type Hex, parseTransaction } from 'viem';
import { type ChainTxRow, recordReplacement } from '../chain-txs.repository.ts';
import { type Fees, replacementFees } from '../tx-sender.ts';
import type { MinterContext } from './context.ts';

// Replacement: a stuck transaction re-signed on the same nonce with +25% fees. Only the signing and the
// record happen here; the tracker sends what this returns with the others, in nonce order.

/** A recorded transaction ready to send: its row id and the signed bytes to send. */
export interface Sendable {
  chainTxId: bigint;
  nonce: bigint;
  hash: Hex;
  raw: Hex;
}

/**
 * Re-signs the same nonce with +25% fees (at least `network`'s) and records the new hash before anything is
 * sent, so whichever mines is found. Undefined when the row moved on meanwhile (mined, failed, replaced).
 */
export async function prepareReplacement(
  ctx: MinterContext,
  tx: ChainTxRow,
  network: Fees,
): Promise<Sendable | undefined> {
  const previous = parseTransaction(tx.raw_tx as Hex);
  const fees = replacementFees(
    { maxFeePerGas: BigInt(tx.max_fee_per_gas), maxPriorityFeePerGas: BigInt(tx.max_priority_fee_per_gas) },
    network,
  );
  if (!fees) return undefined; // with no cap a +25% bump always passes; kept for the type
  const { maxFeePerGas, maxPriorityFeePerGas } = fees;
  const nonce = BigInt(tx.nonce);
  const { raw, hash } = await ctx.sender.sign({
    nonce,
    to: previous.to ?? ctx.tokenAddress,
    data: previous.data ?? '0x',
    gas: previous.gas ?? BigInt(tx.gas_limit),
    value: 0n,
    ...fees,
  });
  const replacement = { hash, raw, maxFeePerGas, maxPriorityFeePerGas };
  if (!(await recordReplacement(ctx.db, tx, replacement, ctx.clock.now()))) return undefined;
  ctx.metrics.mintTransactions.inc({ result: 'replaced' });
  ctx.log.warn(
    { nonce: Number(nonce), previous: tx.current_hash, hash, maxFeePerGas: maxFeePerGas.toString() },
    'replaced stuck mintBatch',
  );
  return { chainTxId: BigInt(tx.id), nonce, hash, raw };
}
