import type { Address, Hex, TransactionReceipt } from 'viem';
import type { RelayTxStatus } from '../relayer.types.ts';
import { replacementFees } from '../tx-sender.ts';
import { broadcast, markFailed } from './broadcast.ts';
import { OPEN, type RelayerContext, type RelayRow } from './context.ts';
import { revertReason } from './revert.ts';

// Receipt tracking for relay transactions: receipts settle rows, a used nonce fails them, stuck ones are
// replaced, failed sends are retried; and crash recovery at start.

/** A receipt settles the row: `confirmed` (depth 1) or `failed` with the revert's reason, gas recorded either way. */
async function settleReceipt(ctx: RelayerContext, row: RelayRow, receipt: TransactionReceipt): Promise<void> {
  const status: RelayTxStatus = receipt.status === 'success' ? 'confirmed' : 'failed';
  const error = status === 'failed' ? await revertReason(ctx, row, receipt) : null;
  const updated = await ctx.db
    .updateTable('relay_transactions')
    .set({
      current_hash: receipt.transactionHash,
      gas_used: receipt.gasUsed.toString(),
      effective_gas_price: receipt.effectiveGasPrice.toString(),
      block_number: receipt.blockNumber,
      updated_at: ctx.clock.now(),
      status,
      error,
    })
    .where('id', '=', row.id)
    .where('status', 'in', OPEN)
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) return;
  ctx.needsBroadcast.delete(row.id);
  ctx.metrics.relayTransactions.inc({ status });
  ctx.metrics.relayGasUsed.inc({ brand: row.brand_id ?? 'none' }, Number(receipt.gasUsed));
  if (status === 'failed')
    ctx.log.warn({ id: row.id, hash: receipt.transactionHash, error }, 'relayed transaction reverted');
  ctx.notify(row.id);
}

/** Re-signs the same nonce with +25% on both fees (at least the network's), never above the cap. */
async function replaceStuck(ctx: RelayerContext, row: RelayRow): Promise<void> {
  const { sender, maxGasPrice } = ctx;
  const fees = replacementFees(
    {
      maxFeePerGas: BigInt(row.max_fee_per_gas ?? '0'),
      maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas ?? '0'),
    },
    await sender.fees(true),
    maxGasPrice,
  );
  // Nodes refuse a replacement under +12.5% on both fields (geth 10%, others 12.5%).
  if (!fees) {
    ctx.log.warn(
      { id: row.id, nonce: Number(row.nonce), maxGasPrice: maxGasPrice.toString() },
      'stuck relay transaction cannot be bumped further: the gas price cap is reached',
    );
    return;
  }
  const { maxFeePerGas, maxPriorityFeePerGas } = fees;
  const { raw, hash } = await sender.sign({
    nonce: BigInt(row.nonce ?? 0),
    to: row.to_address as Address,
    data: row.data as Hex,
    value: BigInt(row.value),
    gas: BigInt(row.gas_limit ?? ctx.maxGasLimit),
    ...fees,
  });
  const now = ctx.clock.now();
  const updated = await ctx.db
    .updateTable('relay_transactions')
    .set({
      hashes: JSON.stringify([...(row.hashes ?? []), hash]),
      current_hash: hash,
      raw_tx: raw,
      max_fee_per_gas: maxFeePerGas.toString(),
      max_priority_fee_per_gas: maxPriorityFeePerGas.toString(),
      submitted_at: now,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .where('current_hash', '=', row.current_hash)
    .where('status', 'in', OPEN)
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) return;
  ctx.metrics.relayTransactions.inc({ status: 'replaced' });
  ctx.log.warn(
    { id: row.id, nonce: Number(row.nonce), previous: row.current_hash, hash, maxFeePerGas: maxFeePerGas.toString() },
    'replaced stuck relay transaction',
  );
  await broadcast(ctx, row.id, raw);
}

function listOpenRows(ctx: RelayerContext): Promise<RelayRow[]> {
  return ctx.db
    .selectFrom('relay_transactions')
    .selectAll()
    .where('chain_id', '=', ctx.chainId)
    .where('signer', '=', ctx.signer)
    .where('status', 'in', OPEN)
    .orderBy('nonce')
    .execute();
}

/** One tracking pass over the signer's open rows, lowest nonce first. */
export async function trackRelayOnce(ctx: RelayerContext): Promise<void> {
  const open = await listOpenRows(ctx);
  if (open.length === 0) return;
  // Read before the receipts: a transaction mined in between then shows a receipt instead of looking dropped.
  const confirmedNonce = BigInt(
    await ctx.publicClient.getTransactionCount({ address: ctx.account.address, blockTag: 'latest' }),
  );
  const receipts = await Promise.all(
    open.map(async (row) =>
      (await Promise.all((row.hashes ?? []).map((hash) => ctx.sender.receipt(hash as Hex)))).find((r) => r !== null),
    ),
  );
  for (const [index, row] of open.entries()) {
    const receipt = receipts[index];
    const submittedAt = row.submitted_at ? new Date(row.submitted_at).getTime() : 0;
    const age = ctx.clock.now().getTime() - submittedAt;
    if (receipt) {
      await settleReceipt(ctx, row, receipt);
    } else if (row.nonce !== null && BigInt(row.nonce) < confirmedNonce && age >= ctx.stuckMs) {
      await markFailed(ctx, row.id, `dropped: nonce ${row.nonce} was used by another transaction`);
    } else if (age >= ctx.stuckMs) {
      await replaceStuck(ctx, row);
    } else if (ctx.needsBroadcast.has(row.id) && row.raw_tx) {
      await broadcast(ctx, row.id, row.raw_tx as Hex);
    }
  }
}

/** Crash recovery: rows a previous run recorded are sent again (a no-op for those the node already has). */
export async function recoverRelay(ctx: RelayerContext): Promise<void> {
  const now = ctx.clock.now();
  // A queued row never got a nonce: its caller is gone, and nothing was signed for it.
  await ctx.db
    .updateTable('relay_transactions')
    .set({ status: 'failed', error: 'interrupted before signing (process restarted)', updated_at: now })
    .where('chain_id', '=', ctx.chainId)
    .where('signer', '=', ctx.signer)
    .where('status', '=', 'queued')
    .where('created_at', '<', now)
    .execute();
  const open = await ctx.db
    .selectFrom('relay_transactions')
    .select(['id', 'raw_tx'])
    .where('chain_id', '=', ctx.chainId)
    .where('signer', '=', ctx.signer)
    .where('status', 'in', OPEN)
    .orderBy('nonce')
    .execute();
  for (const row of open) if (row.raw_tx) await broadcast(ctx, row.id, row.raw_tx as Hex);
  if (open.length > 0) ctx.log.info({ transactions: open.length }, 'open relay transactions re-broadcast after start');
}
