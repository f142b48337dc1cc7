import type { Clock, LedgerReconciliation } from '@pts/shared';
import type { Selectable } from 'kysely';
import type { Logger } from 'pino';
import { type Address, type Hex, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import type { Database } from '../../db/database.ts';
import type { ChainTxsTable } from '../../db/schema.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { reopenConfirmedTx } from '../chain-txs.repository.ts';
import type { ChainPublicClient } from '../deploy.ts';
import { dbBigInt } from '../receipts.ts';

// What every step of the reconciler receives first (as chain/mint/context.ts is for the minter): its
// dependencies and the little state its passes share. chain/reconciler.ts composes the steps.

export interface ReconcilerDeps {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  /** The minter's address: the reconciler checks that signer's transactions. */
  signer: Address;
  tokenAddress: Address;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /**
   * Whether this process may reopen transactions: only the process holding the minter signer lock (another
   * replica's tracker would race the leader's). Others only report.
   */
  mayRepair: () => boolean;
  /** Seconds between periodic passes; 0 runs only when asked (at start). */
  intervalSeconds: number;
  /**
   * Confirmed transactions below the chain's nonce checked per pass when the supply shows a deficit; unset:
   * all of them, newest first, until the deficit is explained (a lost mint is never out of reach).
   */
  deepScanLimit?: number;
}

export interface ReconcileResult {
  /** Confirmed transactions the chain does not have. */
  lost: { id: bigint; nonce: bigint; amount: bigint; rewards: number }[];
  /** How many of them this pass reopened (0 when it may not repair). */
  reopened: number;
  report: LedgerReconciliation;
}

export type ChainTxRow = Selectable<ChainTxsTable>;

/** A lost transaction's confirmed rewards: their sum and count. */
export type LostAmounts = Map<string, { amount: bigint; rewards: number }>;

/** The reconciler's dependencies, its signer in lower case, its logger, and the state its passes share. */
export interface ReconcilerContext {
  deps: ReconcilerDeps;
  /** The signer as chain_txs stores it (lower case). */
  signer: string;
  log: Logger;
  deepScanLimit: number;
  /** Transactions reopened by every pass of this process. */
  reopenedTotal: number;
  /** The last pass's finding. */
  last: LedgerReconciliation;
  /** The pass under way: callers arriving meanwhile share it. */
  running: Promise<ReconcileResult> | undefined;
  /** Rollbacks the minter reported (rollbackSeen); a pass that saw one arrive meanwhile is not trusted. */
  rollbacks: number;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/** A reconciler that has not compared anything yet (`unknown`). */
export function createReconcilerContext(deps: ReconcilerDeps): ReconcilerContext {
  return {
    deps,
    signer: deps.signer.toLowerCase(),
    log: deps.logger.child({ component: 'reconciler' }),
    deepScanLimit: deps.deepScanLimit ?? Number.POSITIVE_INFINITY,
    reopenedTotal: 0,
    last: {
      status: 'unknown',
      checkedAt: null,
      blockNumber: null,
      missingOnChain: '0',
      unexpectedOnChain: '0',
      reopenedTransactions: 0,
      restoringRewards: 0,
    },
    running: undefined,
    rollbacks: 0,
    timer: undefined,
    stopped: false,
  };
}

export function shortError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}

/** The receipt of `hash`, or null when the node does not have it. */
export async function receiptOf(ctx: ReconcilerContext, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await ctx.deps.publicClient.getTransactionReceipt({ hash });
  } catch (error) {
    // Only "not found" means missing; any other failure aborts the pass (never reopen on an RPC hiccup).
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/**
 * The transactions among `txs` of which no recorded hash has a successful receipt. A receipt in a block
 * above the pass's head still counts: the transaction was mined after the head was read, not lost.
 */
export async function missingAmong(ctx: ReconcilerContext, txs: ChainTxRow[]): Promise<ChainTxRow[]> {
  const found = await Promise.all(
    txs.map(async (tx) => {
      const receipts = await Promise.all(tx.hashes.map((hash) => receiptOf(ctx, hash as Hex)));
      return receipts.some((receipt) => receipt?.status === 'success');
    }),
  );
  return txs.filter((_, index) => !found[index]);
}

/** The confirmed rewards of each transaction: their sum and count. */
export async function amountsOf(ctx: ReconcilerContext, ids: bigint[]): Promise<LostAmounts> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.deps.db
    .selectFrom('reward_mints')
    .select(['chain_tx_id', (eb) => eb.fn.sum<string>('amount').as('amount'), (eb) => eb.fn.countAll().as('count')])
    .where('chain_tx_id', 'in', ids)
    .where('status', '=', 'confirmed')
    .groupBy('chain_tx_id')
    .execute();
  return new Map(
    rows.map((row) => [String(row.chain_tx_id), { amount: dbBigInt(row.amount), rewards: Number(row.count) }]),
  );
}

/** Back to the outbox, once (chain-txs.repository.ts, reopenConfirmedTx). */
export function reopen(ctx: ReconcilerContext, tx: ChainTxRow, head: bigint): Promise<boolean> {
  const reason = `not on chain at block ${head}: reopened by the reconciler`;
  return reopenConfirmedTx(ctx.deps.db, tx, reason, ctx.deps.clock.now());
}
