import { type Address, encodeFunctionData, type Hex, isAddress } from 'viem';
import type { Database } from '../../db/database.ts';
import { rewardTokenAbi } from '../artifacts/index.ts';
import { insertSignedTx } from '../chain-txs.repository.ts';
import type { Fees } from '../tx-sender.ts';
import { MINT_PURPOSE, type MinterContext, mintBatchGasLimit, type SignedBatch } from './context.ts';
import { ensureResentBeforeSigning } from './resend.ts';

// Batch building and signing: pending reward rows → one signed `mintBatch`, recorded (`signed`) in the same
// database transaction that moves the rows to `submitted`. No RPC happens inside that transaction.

export type { SignedBatch } from './context.ts';

/** Which pending rows a claim may take: only `onlyIds`, or (`fresh`) only never-tried rows older than `before`. */
export interface ClaimFilter {
  onlyIds?: string[];
  fresh?: { before: Date };
}

interface MintRow {
  wallet_address: string;
  amount: bigint | string | number;
}

/** Signs one `mintBatch` for these rows with `nonce` and records it (`signed`) in `trx`. No RPC here. */
export async function signMintBatch(
  ctx: MinterContext,
  trx: Database,
  params: { rows: MintRow[]; nonce: bigint; fees: Fees; now: Date },
): Promise<{ chainTxId: bigint; hash: Hex; raw: Hex }> {
  const { rows, nonce, fees, now } = params;
  const data = encodeFunctionData({
    abi: rewardTokenAbi,
    functionName: 'mintBatch',
    args: [rows.map((row) => row.wallet_address as Address), rows.map((row) => BigInt(row.amount))],
  });
  const gas = mintBatchGasLimit(rows.length);
  const { raw, hash } = await ctx.sender.sign({ nonce, to: ctx.tokenAddress, data, gas, value: 0n, ...fees });
  const chainTxId = await insertSignedTx(trx, {
    chainId: ctx.chainId,
    signer: ctx.signer,
    nonce,
    purpose: MINT_PURPOSE,
    hash,
    raw,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    gasLimit: gas,
    at: now,
  });
  return { chainTxId, hash, raw };
}

/** Locks up to PTS_MINT_BATCH_MAX pending rows (oldest first), skipping rows another claim holds. */
function claimPendingRows(ctx: MinterContext, trx: Database, filter: ClaimFilter) {
  let query = trx.selectFrom('reward_mints').select(['id', 'wallet_address', 'amount']).where('status', '=', 'pending');
  if (filter.onlyIds) query = query.where('id', 'in', filter.onlyIds);
  if (filter.fresh) query = query.where('attempts', '=', 0).where('created_at', '<', filter.fresh.before);
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(ctx.config.PTS_MINT_BATCH_MAX)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** One bad address would make every batch it joins fail to encode; those rows fail alone instead. */
async function failInvalidAddresses(
  ctx: MinterContext,
  trx: Database,
  rows: { id: string; wallet_address: string }[],
  now: Date,
): Promise<void> {
  const invalid = rows.filter((row) => !isAddress(row.wallet_address, { strict: false }));
  if (invalid.length === 0) return;
  const ids = invalid.map((row) => row.id);
  await trx
    .updateTable('reward_mints')
    .set({ status: 'failed', last_error: 'invalid wallet address', updated_at: now })
    .where('id', 'in', ids)
    .execute();
  ctx.log.error({ mintIds: ids }, 'reward rows with invalid wallet addresses marked failed');
}

/**
 * Claims pending rows (see ClaimFilter: a sweep never races a request's own flush nor retries a reverted
 * batch early) and signs one `mintBatch` for them, recording both in one DB transaction. Nonce and fees are
 * read before it, the broadcast happens after the commit. Null when there was nothing to sign.
 */
export function claimAndSign(ctx: MinterContext, filter: ClaimFilter = {}): Promise<SignedBatch | null> {
  const { sender } = ctx;
  return sender.withSigningLock(async () => {
    if (filter.onlyIds && filter.onlyIds.length === 0) return null;
    const nonce = await sender.nextNonce();
    const fees = await sender.fees();
    await ensureResentBeforeSigning(ctx);
    const now = ctx.clock.now();
    let batch: SignedBatch | null;
    try {
      batch = await ctx.db.transaction().execute(async (trx) => {
        const rows = await claimPendingRows(ctx, trx, filter);
        await failInvalidAddresses(ctx, trx, rows, now);
        const valid = rows.filter((row) => isAddress(row.wallet_address, { strict: false }));
        if (valid.length === 0) return null;
        const { chainTxId, hash, raw } = await signMintBatch(ctx, trx, { rows: valid, nonce, fees, now });
        const mintIds = valid.map((row) => row.id);
        await trx
          .updateTable('reward_mints')
          .set({ status: 'submitted', chain_tx_id: chainTxId, last_error: null, updated_at: now })
          .where('id', 'in', mintIds)
          .execute();
        return { chainTxId, nonce, hash, raw, mintIds };
      });
    } catch (error) {
      // Another signer process took this nonce: the unique (chain, signer, nonce) key refused the double use.
      if ((error as { code?: string }).code === '23505') sender.forgetNonce();
      throw error;
    }
    if (batch) noteSigned(ctx, batch, 'mintBatch signed');
    return batch;
  });
}

/** The nonce is used and the batch counted; called once its commit succeeded. */
export function noteSigned(ctx: MinterContext, batch: SignedBatch, message: string): void {
  ctx.sender.nonceUsed(batch.nonce);
  ctx.metrics.mintBatchSize.observe(batch.mintIds.length);
  ctx.log.debug({ nonce: Number(batch.nonce), hash: batch.hash, rewards: batch.mintIds.length }, message);
}
