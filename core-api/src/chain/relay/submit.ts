import { randomUUID } from 'node:crypto';
import { AppError } from '@pts/shared';
import type { Hex } from 'viem';
import type { RelayTransaction, RelayTxRequest } from '../relayer.types.ts';
import { errorReason, type Fees, minOf } from '../tx-sender.ts';
import { broadcast, markFailed } from './broadcast.ts';
import { loadRelayRow, type RelayerContext, toTransaction } from './context.ts';
import { cappedFees, checkGasLimit, simulate } from './limits.ts';

// Submitting a relay transaction: recorded `queued`, gas and fees settled, signed with the next nonce and
// recorded `submitted` under the signing lock, then sent.

/** Estimates are raised by 20% before signing: state can change between estimate and inclusion. */
const GAS_MARGIN_PERCENT = 120n;

async function insertQueued(ctx: RelayerContext, id: string, request: RelayTxRequest): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('relay_transactions')
    .values({
      id,
      chain_id: ctx.chainId,
      signer: ctx.signer,
      nonce: null,
      status: 'queued',
      hashes: '[]',
      to_address: request.to.toLowerCase(),
      data: request.data,
      value: (request.value ?? 0n).toString(),
      brand_id: request.brandId?.toLowerCase() ?? null,
      user_address: request.userAddress?.toLowerCase() ?? null,
      purpose: request.purpose,
      collection_id: request.collectionId === undefined ? null : request.collectionId.toString(),
      created_at: now,
      updated_at: now,
    })
    .execute();
  ctx.metrics.relayTransactions.inc({ status: 'queued' });
}

/** The gas limit to sign with: the caller's, its estimate + 20%, or a simulation's; a revert's reason instead. */
async function gasLimitFor(ctx: RelayerContext, request: RelayTxRequest): Promise<bigint | { reverted: string }> {
  if (request.gasLimit !== undefined) return request.gasLimit;
  if (request.gasEstimate !== undefined) {
    return minOf((request.gasEstimate * GAS_MARGIN_PERCENT) / 100n, ctx.maxGasLimit);
  }
  const simulation = await simulate(ctx, request);
  if (!simulation.ok) return { reverted: simulation.reason };
  return minOf((simulation.gasEstimate * GAS_MARGIN_PERCENT) / 100n, ctx.maxGasLimit);
}

/** Signs with the next nonce and records the row `submitted` with its raw bytes, under the signing lock. */
function signAndRecord(
  ctx: RelayerContext,
  id: string,
  request: RelayTxRequest,
  params: { gasLimit: bigint; fees: Fees },
): Promise<{ raw: Hex; hash: Hex; nonce: bigint }> {
  const { sender } = ctx;
  const { gasLimit, fees } = params;
  return sender.withSigningLock(async () => {
    const nonce = await sender.nextNonce();
    const { raw, hash } = await sender.sign({
      nonce,
      to: request.to,
      data: request.data,
      value: request.value ?? 0n,
      gas: gasLimit,
      ...fees,
    });
    const at = ctx.clock.now();
    await ctx.db
      .updateTable('relay_transactions')
      .set({
        status: 'submitted',
        nonce,
        current_hash: hash,
        hashes: JSON.stringify([hash]),
        raw_tx: raw,
        max_fee_per_gas: fees.maxFeePerGas.toString(),
        max_priority_fee_per_gas: fees.maxPriorityFeePerGas.toString(),
        gas_limit: gasLimit.toString(),
        submitted_at: at,
        updated_at: at,
      })
      .where('id', '=', id)
      .execute();
    sender.nonceUsed(nonce);
    return { raw, hash, nonce };
  });
}

export async function submitRelay(
  ctx: RelayerContext,
  request: RelayTxRequest,
  ensureElected: () => Promise<void>,
): Promise<RelayTransaction> {
  if (ctx.stopped) throw new AppError('SERVICE_UNAVAILABLE', 'The relayer is shutting down; retry');
  checkGasLimit(ctx, request.gasLimit);
  const id = randomUUID();
  await insertQueued(ctx, id, request);
  const answer = async () => toTransaction((await loadRelayRow(ctx, id))!, ctx.account.address);

  let gasLimit: bigint;
  let fees: Fees;
  try {
    await ensureElected();
    fees = await cappedFees(ctx);
    const limit = await gasLimitFor(ctx, request);
    if (typeof limit !== 'bigint') {
      await markFailed(ctx, id, limit.reverted);
      return answer();
    }
    gasLimit = limit;
  } catch (error) {
    await markFailed(ctx, id, errorReason(error));
    throw error;
  }

  const signed = await signAndRecord(ctx, id, request, { gasLimit, fees }).catch(async (error: unknown) => {
    // Nothing signed was committed; the nonce is re-read from chain and database next time.
    ctx.sender.forgetNonce();
    await markFailed(ctx, id, errorReason(error));
    throw error;
  });
  ctx.log.debug({ id, nonce: Number(signed.nonce), hash: signed.hash, purpose: request.purpose }, 'relay signed');
  await broadcast(ctx, id, signed.raw);
  return answer();
}
