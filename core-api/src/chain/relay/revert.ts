import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { businessEscrowAbi, perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../artifacts/index.ts';
import { errorReason } from '../tx-sender.ts';
import type { RelayerContext, RelayRow } from './context.ts';

// Revert reasons: a revert turned into something a caller can read.

/** Every contract the relayer may call: their custom errors decode a revert into a readable reason. */
const KNOWN_ABIS: Abi[] = [rewardTokenAbi, perkNFTAbi, pointsSaleAbi, businessEscrowAbi] as Abi[];

function formatArg(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_key, inner) => (typeof inner === 'bigint' ? inner.toString() : inner));
}

function isRevertData(value: unknown): value is Hex {
  return typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value) && value.length >= 10;
}

/** Finds revert data anywhere in a viem error chain. */
function revertData(error: unknown): Hex | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    const entry = current as { data?: unknown; cause?: unknown };
    if (isRevertData(entry.data)) return entry.data;
    if (entry.data && typeof entry.data === 'object' && 'data' in entry.data) {
      const inner = (entry.data as { data?: unknown }).data;
      if (isRevertData(inner)) return inner;
    }
    current = entry.cause;
  }
  return undefined;
}

/** Revert data decoded against the platform's ABIs, then the standard `Error`/`Panic`. */
function decodeRevertData(data: Hex): { reason: string; errorName?: string } {
  for (const abi of KNOWN_ABIS) {
    try {
      const decoded = decodeErrorResult({ abi, data });
      const args = (decoded.args ?? []).map(formatArg).join(', ');
      if (decoded.errorName === 'Error') return { reason: String(decoded.args?.[0] ?? 'reverted') };
      return { reason: `${decoded.errorName}(${args})`, errorName: decoded.errorName };
    } catch {
      // not this ABI's error
    }
  }
  try {
    const decoded = decodeErrorResult({ abi: [], data });
    if (decoded.errorName === 'Error') return { reason: String(decoded.args?.[0] ?? 'reverted') };
    if (decoded.errorName === 'Panic') return { reason: `Panic(${formatArg(decoded.args?.[0])})`, errorName: 'Panic' };
  } catch {
    // unknown selector
  }
  return { reason: `reverted with unknown error data ${data.slice(0, 10)}` };
}

/**
 * Turns a revert into `{reason, errorName}`: custom errors decode against the platform's ABIs
 * (`InsufficientAllowance(0xab…, 0, 50)`), `Error(string)` gives its message, anything else its text.
 */
export function decodeRevert(error: unknown): { reason: string; errorName?: string } {
  if (error instanceof BaseError) {
    const reverted = error.walk((inner) => inner instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map(formatArg).join(', ');
      return { reason: `${reverted.data.errorName}(${args})`, errorName: reverted.data.errorName };
    }
  }
  const data = revertData(error);
  if (data) return decodeRevertData(data);
  return { reason: errorReason(error) };
}

/** Best effort: replays a reverted call on the state before its block to learn the reason. */
export async function revertReason(ctx: RelayerContext, row: RelayRow, receipt: TransactionReceipt): Promise<string> {
  try {
    await ctx.publicClient.call({
      account: ctx.account.address,
      to: row.to_address as Address,
      data: row.data as Hex,
      value: BigInt(row.value),
      gas: row.gas_limit ? BigInt(row.gas_limit) : undefined,
      blockNumber: receipt.blockNumber - 1n,
    });
    return `reverted in block ${receipt.blockNumber}`;
  } catch (error) {
    return decodeRevert(error).reason;
  }
}
