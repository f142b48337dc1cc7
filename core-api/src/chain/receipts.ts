import type { Hex, TransactionReceipt } from 'viem';

/** A sum or count read from the database as a bigint; null (no rows) is 0. */
export const dbBigInt = (value: unknown): bigint =>
  value === null || value === undefined ? 0n : BigInt(String(value));

/** Whether one of `hashes` (every signing of one transaction) has a successful receipt at or below `block`. */
export async function minedAtOrBelow(
  receipt: (hash: Hex) => Promise<TransactionReceipt | null>,
  hashes: readonly string[],
  block: bigint,
): Promise<boolean> {
  const receipts = await Promise.all(hashes.map((hash) => receipt(hash as Hex)));
  return receipts.some((r) => r?.status === 'success' && r.blockNumber <= block);
}
