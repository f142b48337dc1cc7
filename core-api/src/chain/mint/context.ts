import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import type { Address, Hex, LocalAccount } from 'viem';
import type { Config, MintFinality } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { ChainPublicClient } from '../deploy.ts';
import { IMMEDIATE_FINALITY } from '../finality.ts';
import { createTxSender, type TxSender } from '../tx-sender.ts';
import { createSubmitMarker, type SubmitMarker } from './submit-marker.ts';

// What every minter action receives first, the way a viem action receives its client: the dependencies, the
// signer's TxSender and the little state the actions share. Each action lives in its own file of this folder
// (sign, broadcast, confirm, replace, gap, track, inline, batcher); chain/minter.ts composes them.

export type MinterConfig = Pick<
  Config,
  | 'PTS_MINT_BATCH_MAX'
  | 'PTS_MINT_BATCH_WAIT_MS'
  | 'PTS_MINT_STUCK_SECONDS'
  | 'PTS_MINT_MAX_ATTEMPTS'
  | 'PTS_RECEIPT_POLL_MS'
> &
  Partial<Pick<Config, 'PTS_MINT_WAIT_MS'>>;

export interface MinterDeps {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  /** The minter key. This process must be the only one signing with it (see acquireSignerLock). */
  account: LocalAccount;
  tokenAddress: Address;
  config: MinterConfig;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Broadcasts a signed transaction; injectable so tests can fail it the way a crash or outage would. */
  sendRawTransaction?: (serializedTransaction: Hex) => Promise<Hex>;
  /**
   * Runs inside the transaction that marks rewards confirmed, so whatever it writes (the brand's
   * `reward.distributed` notifications) commits exactly when the confirmation does.
   */
  onMintsConfirmed?: (trx: Database, mints: ConfirmedMint[], confirmation: MintConfirmation) => Promise<void>;
  /**
   * Runs inside the transaction that settles reversals from their receipt (taken and debt recorded), so what it
   * writes (the brand's `reward.reversed` notifications) commits with them.
   */
  onReversalsSettled?: (trx: Database, reversalIds: string[]) => Promise<void>;
  /** When a mint counts as final (default: at its first receipt, for a local anvil). */
  finality?: MintFinality;
  /**
   * Called when the tracker sees the chain go back (head lower than before, a receipt gone, the ledger's
   * confirmed nonce above the chain's): the reconciler then re-checks every confirmed mint at once.
   */
  onRollback?: (reason: string) => void;
  /** Transactions waiting with the signer's nonce unmoved this long: `wedged` (PTS_CHAIN_WEDGED_SECONDS). */
  wedgedAfterSeconds?: number;
}

/** A reward row whose mint transaction was mined. */
export interface ConfirmedMint {
  id: string;
  eventId: string | null;
  brandId: string;
  walletAddress: string;
  amount: bigint;
  /** The mined `mintBatch` that carried it. */
  transactionHash: Hex;
  blockNumber: bigint;
  /**
   * `receipt`: `transactionHash` has a receipt at `blockNumber`. `supply`: the batch's nonce was used and the
   * token supply holds its mint, but no receipt exists under any hash the minter recorded (a chain restored
   * from a state dump taken mid-block): `transactionHash` is the one it sent, with no receipt to show.
   */
  confirmedBy: 'receipt' | 'supply';
}

/** About the confirmation itself (one may cover several mined transactions). */
export interface MintConfirmation {
  /** When it was recorded. */
  at: Date;
}

export interface MinterContext {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  account: LocalAccount;
  /** The signer's address, lower case (as chain_txs stores it). */
  signer: string;
  tokenAddress: Address;
  config: MinterConfig;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  sender: TxSender;
  finality: MintFinality;
  onMintsConfirmed: MinterDeps['onMintsConfirmed'];
  onReversalsSettled: MinterDeps['onReversalsSettled'];
  onRollback: MinterDeps['onRollback'];
  /** Transactions queued for a send or on their way: the tracker never sends one of these again meanwhile. */
  broadcasting: Set<bigint>;
  /** Marks sent transactions `submitted`, several per statement. */
  marker: SubmitMarker;
  /** Set by `stop()`: loops end early and gathers stop waiting. */
  stopped: boolean;
  /** The open transactions found when this minter began signing were sent again first (resend.ts). */
  resentOpen: boolean;
}

export const MINT_PURPOSE = 'mintBatch';

/**
 * Gas limit of a `mintBatch`. A block takes transactions by their gas limit, not by what they use, so a loose
 * limit leaves blocks part empty: this is what the costliest batch uses, with a few per cent to spare. Measured
 * on the token (mint/gas-limit.test.ts): ~29,300 fixed (21,000 of it the transaction's own) plus ~25,500 per
 * new holder with every calldata byte non-zero (~8,300 for a holder who already has points); the token's
 * first mint adds ~17,000 (its supply leaves zero). Was 60,000 + 35,000 per recipient: 72 % used, so a
 * geth-based sequencer (which takes a transaction only while its declared limit fits what is left) would put
 * 13 batches of 128 in a 60M block instead of 17, and a batch of 1,000 (PTS_MINT_BATCH_MAX's maximum) asked
 * for more gas than a 30M block holds.
 */
export function mintBatchGasLimit(recipients: number): bigint {
  return 50_000n + 26_500n * BigInt(recipients);
}

export function createMinterContext(deps: MinterDeps): MinterContext {
  const { db, chainId, publicClient, account } = deps;
  const ctx: MinterContext = {
    db,
    chainId,
    publicClient,
    account,
    signer: account.address.toLowerCase(),
    tokenAddress: deps.tokenAddress,
    config: deps.config,
    clock: deps.clock,
    log: deps.logger.child({ component: 'minter', signer: account.address }),
    metrics: deps.metrics,
    sender: createTxSender({
      db,
      publicClient,
      account,
      chainId,
      table: 'chain_txs',
      sendRawTransaction: deps.sendRawTransaction,
    }),
    finality: deps.finality ?? IMMEDIATE_FINALITY,
    onMintsConfirmed: deps.onMintsConfirmed,
    onReversalsSettled: deps.onReversalsSettled,
    onRollback: deps.onRollback,
    broadcasting: new Set(),
    marker: createSubmitMarker(db, deps.clock, () => ctx.stopped),
    stopped: false,
    resentOpen: false,
  };
  return ctx;
}

/** A mint batch signed and recorded (`chain_txs`), ready to send. */
export interface SignedBatch {
  chainTxId: bigint;
  nonce: bigint;
  hash: Hex;
  raw: Hex;
  mintIds: string[];
}
