import { AppError } from '@pts/shared';
import { formatGwei } from 'viem';
import type { RelayTxRequest, SimulationResult } from '../relayer.types.ts';
import { type Fees, minOf } from '../tx-sender.ts';
import type { RelayerContext } from './context.ts';
import { decodeRevert } from './revert.ts';

// The relayer's limits (gas per transaction, gas price) and the dry run that checks a call before it is signed.

/** Fees to sign with, never above the cap; refuses (503) when the network itself is above the cap. */
export async function cappedFees(ctx: RelayerContext): Promise<Fees> {
  const fees = await ctx.sender.fees();
  const networkGasPrice = fees.networkGasPrice ?? fees.maxFeePerGas;
  const capGwei = String(ctx.config.PTS_RELAYER_MAX_GAS_PRICE_GWEI);
  if (networkGasPrice > ctx.maxGasPrice) {
    ctx.metrics.relayTransactions.inc({ status: 'refused_gas_price' });
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `Network gas price ${formatGwei(networkGasPrice)} gwei is above the relayer's cap of ${capGwei} gwei; retry later`,
      { reason: 'gas_price_above_cap', networkGasPriceGwei: formatGwei(networkGasPrice), maxGasPriceGwei: capGwei },
      { retryAfter: 60 },
    );
  }
  const maxFeePerGas = minOf(fees.maxFeePerGas, ctx.maxGasPrice);
  return { maxFeePerGas, maxPriorityFeePerGas: minOf(fees.maxPriorityFeePerGas, maxFeePerGas) };
}

export function checkGasLimit(ctx: RelayerContext, gasLimit: bigint | undefined): void {
  if (gasLimit === undefined) return;
  const { maxGasLimit } = ctx;
  if (gasLimit > maxGasLimit || gasLimit <= 0n) {
    throw new AppError(
      'VALIDATION_ERROR',
      `gasLimit must be between 1 and ${maxGasLimit} (the relayer's per-transaction maximum)`,
      { field: 'gasLimit', value: gasLimit.toString(), errors: [`gasLimit must be at most ${maxGasLimit}`] },
    );
  }
}

/** Runs the call on the latest state: its gas estimate, or why it would revert. */
export async function simulate(
  ctx: RelayerContext,
  request: Pick<RelayTxRequest, 'to' | 'data' | 'value' | 'gasLimit'>,
): Promise<SimulationResult> {
  checkGasLimit(ctx, request.gasLimit);
  const call = {
    account: ctx.account.address,
    to: request.to,
    data: request.data,
    value: request.value ?? 0n,
    ...(request.gasLimit ? { gas: request.gasLimit } : {}),
  };
  try {
    await ctx.publicClient.call(call);
    const gasEstimate = await ctx.publicClient.estimateGas(call);
    return { ok: true, gasEstimate };
  } catch (error) {
    const decoded = decodeRevert(error);
    return { ok: false, ...decoded };
  }
}
