import type { MintingState } from '@pts/shared';
import type { Database } from '../db/database.ts';

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

/** A reward row the caller is inserting in its own transaction, to be minted by the batch signed there. */
export interface InlineMintRow {
  id: string;
  walletAddress: string;
}

/** Given to `mintInline`'s work: signs one `mintBatch` inside the caller's transaction. */
export interface InlineMintSigner {
  /**
   * Signs one `mintBatch` for these rows (amounts included) and inserts its `chain_txs` row in `trx`; the
   * caller then inserts the reward rows as `submitted` with `chain_tx_id`. `undefined` when nothing was
   * signed (an invalid address among the rows): the caller inserts them `pending` for the minter's own path.
   */
  sign(
    trx: Database,
    rows: (InlineMintRow & { amount: bigint })[],
  ): Promise<{ chainTxId: bigint; transactionHash: `0x${string}` } | undefined>;
}

export interface Minter {
  /**
   * Hands an accepted reward row (already committed as `pending`) to the batcher. Resolves once the
   * transaction that carries it is signed, recorded and sent, or with `pending` after `waitMs`.
   */
  submit(mintId: string, options?: { waitMs?: number }): Promise<MintSubmission>;
  /**
   * Runs `work` — which opens, fills and commits one database transaction — holding this minter's signing
   * lock, so a batch signed there takes the next nonce and is broadcast (in nonce order) right after the
   * commit. `signer` is `undefined` when this process may not sign (a follower replica, a stopped minter):
   * the rows then go in `pending` as usual. `sent` resolves once the signed batch was sent, or with `pending`
   * after `waitMs`; it is `undefined` when nothing was signed. A throw from `work` gives the nonce back.
   */
  mintInline<T>(
    work: (signer: InlineMintSigner | undefined) => Promise<T>,
    options?: { waitMs?: number },
  ): Promise<{ value: T; sent: Promise<MintSubmission> | undefined }>;
  /** Re-drives everything pending, tracks receipts and replaces stuck transactions (reward processor). */
  processPending(): Promise<ProcessPendingResult>;
  queueStatus(): Promise<QueueStatus>;
  /** What the minter's tracker last saw: waiting transactions, last mined, wedged (health, docs/operations.md). */
  mintingState(): MintingState;
  /** Starts background receipt tracking. */
  start(): void;
  /** Stops timers and waits for in-flight batches. */
  stop(): Promise<void>;
}
