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

/** An inline signing's signer (`beginInline`): signs one `mintBatch` inside the caller's transaction. */
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

/**
 * One inline signing begun by `Minter.beginInline`: the signing lock and a nonce, held until the caller's
 * transaction ended. Exactly one of `committed` and `rolledBack` must be called, after the transaction.
 */
export interface InlineMinting {
  /** Signs the batch inside the caller's transaction (at most one batch). */
  signer: InlineMintSigner;
  /**
   * The transaction committed: the signed batch (if any) is sent in nonce order and the lock released.
   * Resolves once it was sent, or with `pending` after `waitMs`; `undefined` when nothing was signed.
   */
  committed(options?: { waitMs?: number }): Promise<MintSubmission> | undefined;
  /** The transaction rolled back: the nonce is given back (forgotten on a unique-key refusal), the lock released. */
  rolledBack(error: unknown): void;
  /** Resolves once the signing lock is free again (after `committed` or `rolledBack`). */
  released(): Promise<void>;
}

export interface Minter {
  /**
   * Hands an accepted reward row (already committed as `pending`) to the batcher. Resolves once the
   * transaction that carries it is signed, recorded and sent, or with `pending` after `waitMs`.
   */
  submit(mintId: string, options?: { waitMs?: number }): Promise<MintSubmission>;
  /**
   * Begins an inline signing for the caller's next transaction: takes this minter's signing lock and the next
   * nonce, so a batch signed in that transaction is broadcast (in nonce order) right after its commit.
   * `undefined` when this process may not sign now (a follower replica, a stopped minter, an unreachable
   * chain): the rows then go in `pending` as usual. The caller drives every step (issue 34 §3): it signs with
   * `signer` in its transaction, then calls `committed` or `rolledBack`.
   */
  beginInline(): Promise<InlineMinting | undefined>;
  /**
   * Sends the pending reversals (`reward_reversals`, modules/reversals) in `reverseBatch` transactions on this
   * minter's signer, then tracks receipts until each of `ids` is settled (taken and debt known) or `waitMs`
   * passed. Their rows say where they are either way.
   */
  reverse(ids: string[], options?: { waitMs?: number }): Promise<void>;
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
