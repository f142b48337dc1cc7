/** What the event path and the reward processor need from the minter (implementation: chain/minter.ts). */
export interface MintSubmission {
  /** `submitted`: a signed transaction carrying this reward was sent; `pending`: not yet within the wait. */
  status: 'pending' | 'submitted' | 'confirmed';
  transactionHash?: `0x${string}`;
}

export interface ProcessPendingResult {
  /** Reward rows picked up from `pending`. */
  claimed: number;
  /** `mintBatch` transactions sent. */
  batches: number;
  transactionHashes: `0x${string}`[];
  /** Transactions whose receipts were recorded in this pass. */
  confirmedTransactions: number;
  /** Reward rows put back to `pending` after a failed or reverted transaction. */
  requeued: number;
  /** Stuck transactions re-signed with higher fees. */
  replaced: number;
}

export interface QueueStatus {
  pending: number;
  submitted: number;
  confirmed: number;
  failed: number;
  oldestPendingAt: string | null;
  openTransactions: number;
  signer: string;
  /** Next nonce the minter will use, and the chain's latest confirmed nonce. */
  nextNonce: number | null;
  confirmedNonce: number | null;
}

export interface Minter {
  /**
   * Hands an accepted reward row (already committed as `pending`) to the batcher. Resolves once the
   * transaction that carries it is signed, recorded and sent, or with `pending` after `waitMs`.
   */
  submit(mintId: string, options?: { waitMs?: number }): Promise<MintSubmission>;
  /** Re-drives everything pending, tracks receipts and replaces stuck transactions (reward processor). */
  processPending(): Promise<ProcessPendingResult>;
  queueStatus(): Promise<QueueStatus>;
  /** Starts background receipt tracking. */
  start(): void;
  /** Stops timers and waits for in-flight batches. */
  stop(): Promise<void>;
}
