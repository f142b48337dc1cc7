import type { Clock, LedgerReconciliation } from '@pts/shared';
import { type Selectable, sql } from 'kysely';
import type { Logger } from 'pino';
import { type Address, type Hex, keccak256, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import type { Database } from '../db/database.ts';
import type { ChainTxsTable } from '../db/schema.ts';
import type { Metrics } from '../observability/metrics.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import type { ChainPublicClient } from './deploy.ts';
import { dbBigInt } from './receipts.ts';

// The chain and the ledger agree: every reward the ledger calls `confirmed` is in a mined transaction the
// chain still has. They can part when the chain forgets blocks the ledger saw — a local anvil restarted from
// a state file older than the database, an L2 reorganizing a shallow confirmation away. The reconciler finds
// such transactions and puts them back in the minter's outbox (`chain_txs` → `signed`, their rewards →
// `submitted`), where the receipt tracker's rules take over: the same signed bytes are sent again (one
// nonce, so they can mine once at most), and only when another transaction consumed that nonce are the
// rewards re-queued into a new batch. So nothing is minted twice, and nothing confirmed stays missing.

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
  /** Confirmed transactions below the chain's nonce checked per pass when the supply shows a deficit. */
  deepScanLimit?: number;
}

export interface ReconcileResult {
  /** Confirmed transactions the chain does not have. */
  lost: { id: bigint; nonce: bigint; amount: bigint; rewards: number }[];
  /** How many of them this pass reopened (0 when it may not repair). */
  reopened: number;
  report: LedgerReconciliation;
}

export interface ChainReconciler {
  /** One pass: compare, and reopen what the chain lacks (when `repair` and this process may). */
  reconcile(options?: { repair?: boolean }): Promise<ReconcileResult>;
  /** The last pass's finding (`unknown` before the first). */
  report(): LedgerReconciliation;
  /** Periodic passes every `intervalSeconds`. */
  start(): void;
  stop(): Promise<void>;
}

type ChainTxRow = Selectable<ChainTxsTable>;

const PURPOSE = 'mintBatch';
/** Suspects (nonce at or above the chain's) looked at per pass; more wait for the next pass. */
const SUSPECT_LIMIT = 1_000;
const DEEP_SCAN_PAGE = 100;

function shortError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}

/** Creates the reconciler for one minter signer on one chain. */
export function createChainReconciler(deps: ReconcilerDeps): ChainReconciler {
  const { db, chainId, publicClient, clock, metrics } = deps;
  const signer = deps.signer.toLowerCase();
  const log = deps.logger.child({ component: 'reconciler' });
  const deepScanLimit = deps.deepScanLimit ?? 2_000;
  let reopenedTotal = 0;
  let last: LedgerReconciliation = {
    status: 'unknown',
    checkedAt: null,
    blockNumber: null,
    missingOnChain: '0',
    unexpectedOnChain: '0',
    reopenedTransactions: 0,
    restoringRewards: 0,
  };
  let running: Promise<ReconcileResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function receiptOf(hash: Hex): Promise<TransactionReceipt | null> {
    try {
      return await publicClient.getTransactionReceipt({ hash });
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
  async function missingAmong(txs: ChainTxRow[]): Promise<ChainTxRow[]> {
    const found = await Promise.all(
      txs.map(async (tx) => {
        const receipts = await Promise.all(tx.hashes.map((hash) => receiptOf(hash as Hex)));
        return receipts.some((receipt) => receipt?.status === 'success');
      }),
    );
    return txs.filter((_, index) => !found[index]);
  }

  async function amountsOf(ids: bigint[]): Promise<Map<string, { amount: bigint; rewards: number }>> {
    if (ids.length === 0) return new Map();
    const rows = await db
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

  /**
   * Back to the outbox, once: only a transaction still `confirmed` moves (a concurrent pass finds it moved).
   * `signed` makes the tracker send `raw_tx` again at once; `submitted_at` restarts its stuck timer.
   */
  async function reopen(tx: ChainTxRow, head: bigint): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const now = clock.now();
      const updated = await trx
        .updateTable('chain_txs')
        .set({
          status: 'signed',
          current_hash: keccak256(tx.raw_tx as Hex),
          block_number: null,
          gas_used: null,
          last_error: `not on chain at block ${head}: reopened by the reconciler`,
          submitted_at: now,
          updated_at: now,
        })
        .where('id', '=', tx.id)
        .where('status', '=', 'confirmed')
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return false;
      await trx
        .updateTable('reward_mints')
        .set({ status: 'submitted', reconciled_at: now, updated_at: now })
        .where('chain_tx_id', '=', tx.id)
        .where('status', '=', 'confirmed')
        .execute();
      return true;
    });
  }

  async function pass(repair: boolean): Promise<ReconcileResult> {
    // Chain facts first, all pinned to one block, so rows the minter confirms meanwhile cannot look missing.
    const head = await publicClient.getBlockNumber({ cacheTime: 0 });
    const [chainNonce, supply] = await Promise.all([
      publicClient.getTransactionCount({ address: deps.signer, blockNumber: head }).then(BigInt),
      publicClient.readContract({
        address: deps.tokenAddress,
        abi: rewardTokenAbi,
        functionName: 'totalSupply',
        blockNumber: head,
      }),
    ]);

    // Suspects: confirmed transactions whose nonce the chain has not reached (it cannot have mined them),
    // or recorded in a block above its head (it lost that block). A tail loss or a reorg shows up here.
    const suspects = await db
      .selectFrom('chain_txs')
      .selectAll()
      .where('chain_id', '=', chainId)
      .where('signer', '=', signer)
      .where('purpose', '=', PURPOSE)
      .where('status', '=', 'confirmed')
      .where((eb) => eb.or([eb('nonce', '>=', chainNonce), eb('block_number', '>', head)]))
      .orderBy('nonce')
      .limit(SUSPECT_LIMIT)
      .execute();
    const lost = await missingAmong(suspects);
    const lostIds = new Set(lost.map((tx) => String(tx.id)));

    // The token's supply against the ledger at the same block. No token is ever burned, so the supply is the
    // sum of every mint: what the ledger confirmed up to `head`, plus what it has in flight (mined but not yet
    // recorded). Rows of lost transactions are left out of the comparison (counted as missing above).
    const ledgerRow = await db
      .selectFrom('reward_mints')
      .innerJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
      .select([
        sql<string>`coalesce(sum(reward_mints.amount) FILTER (WHERE reward_mints.status = 'confirmed' AND chain_txs.block_number <= ${head}), 0)`.as(
          'confirmed',
        ),
        sql<string>`coalesce(sum(reward_mints.amount) FILTER (WHERE reward_mints.status = 'submitted' OR (reward_mints.status = 'confirmed' AND chain_txs.block_number > ${head})), 0)`.as(
          'in_flight',
        ),
      ])
      .where('chain_txs.chain_id', '=', chainId)
      .executeTakeFirstOrThrow();
    const lostAmounts = await amountsOf(lost.map((tx) => tx.id));
    const lostBelowHead = lost
      .filter((tx) => tx.block_number !== null && BigInt(tx.block_number) <= head)
      .reduce((sum, tx) => sum + (lostAmounts.get(String(tx.id))?.amount ?? 0n), 0n);
    const confirmed = dbBigInt(ledgerRow.confirmed) - lostBelowHead;
    const inFlight = dbBigInt(ledgerRow.in_flight);
    let deficit = confirmed - supply;

    // A deficit the suspects do not explain: a transaction whose nonce another transaction consumed (the
    // tracker burned a gap over it after a chain reset). Scan confirmed ones below the chain's nonce, newest
    // first, until the deficit is accounted for.
    if (deficit > 0n) {
      let scanned = 0;
      let beforeNonce = chainNonce;
      while (deficit > 0n && scanned < deepScanLimit) {
        const page = await db
          .selectFrom('chain_txs')
          .selectAll()
          .where('chain_id', '=', chainId)
          .where('signer', '=', signer)
          .where('purpose', '=', PURPOSE)
          .where('status', '=', 'confirmed')
          .where('nonce', '<', beforeNonce)
          .orderBy('nonce', 'desc')
          .limit(DEEP_SCAN_PAGE)
          .execute();
        if (page.length === 0) break;
        scanned += page.length;
        beforeNonce = BigInt(page[page.length - 1]!.nonce);
        const missing = (await missingAmong(page)).filter((tx) => !lostIds.has(String(tx.id)));
        const amounts = await amountsOf(missing.map((tx) => tx.id));
        for (const tx of missing) {
          lost.push(tx);
          lostIds.add(String(tx.id));
          lostAmounts.set(String(tx.id), amounts.get(String(tx.id)) ?? { amount: 0n, rewards: 0 });
          if (tx.block_number !== null && BigInt(tx.block_number) <= head) {
            deficit -= amounts.get(String(tx.id))?.amount ?? 0n;
          }
        }
      }
    }

    const lostAmount = lost.reduce((sum, tx) => sum + (lostAmounts.get(String(tx.id))?.amount ?? 0n), 0n);
    const missingOnChain = lostAmount + (deficit > 0n ? deficit : 0n);
    const unexpected = supply - (confirmed + inFlight);
    const unexpectedOnChain = unexpected > 0n ? unexpected : 0n;

    let reopened = 0;
    if (repair && deps.mayRepair()) {
      for (const tx of [...lost].sort((a, b) => (BigInt(a.nonce) < BigInt(b.nonce) ? -1 : 1))) {
        if (await reopen(tx, head)) reopened++;
      }
      if (reopened > 0) {
        reopenedTotal += reopened;
        metrics.reconcilerReopened.inc(reopened);
        log.warn(
          { reopened, missingOnChain: missingOnChain.toString(), blockNumber: head.toString() },
          'confirmed mint transactions missing on chain were put back in the outbox',
        );
      }
    }
    if (deficit > 0n) {
      log.error({ deficit: deficit.toString() }, 'the ledger confirms more tokens than the chain holds, unexplained');
    }
    if (unexpectedOnChain > 0n) {
      log.error(
        { unexpected: unexpectedOnChain.toString() },
        'the chain holds more reward tokens than the ledger ever signed',
      );
    }

    const restoring = await db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('reconciled_at', 'is not', null)
      .where('status', 'in', ['pending', 'submitted'])
      .executeTakeFirstOrThrow();
    const restoringRewards = Number(restoring.count);
    const drift = missingOnChain > 0n || unexpectedOnChain > 0n;
    // `drift` while something is missing that this pass did not put back (or cannot explain), or the chain
    // holds tokens the ledger never signed; `restoring` while reopened rewards wait for their confirmation.
    const unrepaired = reopened < lost.length || deficit > 0n || unexpectedOnChain > 0n;
    const status: LedgerReconciliation['status'] = unrepaired ? 'drift' : restoringRewards > 0 ? 'restoring' : 'ok';
    metrics.ledgerDrift.set({ kind: 'missing' }, Number(missingOnChain));
    metrics.ledgerDrift.set({ kind: 'unexpected' }, Number(unexpectedOnChain));
    metrics.reconcilerRestoring.set(restoringRewards);
    metrics.reconcilerRuns.inc({ result: drift ? 'drift' : 'ok' });
    last = {
      status,
      checkedAt: clock.now().toISOString(),
      blockNumber: head.toString(),
      missingOnChain: missingOnChain.toString(),
      unexpectedOnChain: unexpectedOnChain.toString(),
      reopenedTransactions: reopenedTotal,
      restoringRewards,
    };
    return {
      lost: lost.map((tx) => ({
        id: BigInt(tx.id),
        nonce: BigInt(tx.nonce),
        amount: lostAmounts.get(String(tx.id))?.amount ?? 0n,
        rewards: lostAmounts.get(String(tx.id))?.rewards ?? 0,
      })),
      reopened,
      report: last,
    };
  }

  function reconcile(options: { repair?: boolean } = {}): Promise<ReconcileResult> {
    // One pass at a time; a caller arriving meanwhile shares it.
    running ??= pass(options.repair ?? true)
      .catch((error: unknown) => {
        metrics.reconcilerRuns.inc({ result: 'error' });
        last = { ...last, status: 'unknown', error: shortError(error) };
        throw error;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    reconcile,
    report: () => last,
    start() {
      if (timer || stopped || deps.intervalSeconds <= 0) return;
      timer = setInterval(() => {
        reconcile().catch((error: unknown) => log.warn({ error: shortError(error) }, 'reconciler pass failed'));
      }, deps.intervalSeconds * 1000);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
