import type { Clock, LedgerReconciliation } from '@pts/shared';
import type { Selectable } from 'kysely';
import type { Logger } from 'pino';
import { type Address, type Hex, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import type { Database } from '../db/database.ts';
import type { ChainTxsTable } from '../db/schema.ts';
import type { Metrics } from '../observability/metrics.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { reopenConfirmedTx } from './chain-txs.repository.ts';
import type { ChainPublicClient } from './deploy.ts';
import { dbBigInt } from './receipts.ts';
import { ledgerMintedAt } from './supply-witness.ts';

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

export interface ChainReconciler {
  /** One pass: compare, and reopen what the chain lacks (when `repair` and this process may). */
  reconcile(options?: { repair?: boolean }): Promise<ReconcileResult>;
  /** The last pass's finding (`unknown` before the first). */
  report(): LedgerReconciliation;
  /**
   * The minter saw the chain go back: until a pass has compared them again, the report says `drift` (the
   * ledger may confirm mints the chain no longer has), and a pass starts at once.
   */
  rollbackSeen(reason: string): void;
  /** Periodic passes every `intervalSeconds`. */
  start(): void;
  stop(): Promise<void>;
}

type ChainTxRow = Selectable<ChainTxsTable>;

const PURPOSE = 'mintBatch';
/** Suspects (nonce at or above the chain's) read per page; a pass reads them all. */
const SUSPECT_PAGE = 1_000;
const DEEP_SCAN_PAGE = 100;

function shortError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}

/** Creates the reconciler for one minter signer on one chain. */
export function createChainReconciler(deps: ReconcilerDeps): ChainReconciler {
  const { db, chainId, publicClient, clock, metrics } = deps;
  const signer = deps.signer.toLowerCase();
  const log = deps.logger.child({ component: 'reconciler' });
  const deepScanLimit = deps.deepScanLimit ?? Number.POSITIVE_INFINITY;
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
  /** Rollbacks the minter reported (rollbackSeen); a pass that saw one arrive meanwhile is not trusted. */
  let rollbacks = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const witness = { db, chainId, signer, receipt: receiptOf, publicClient, tokenAddress: deps.tokenAddress };
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

  /** Back to the outbox, once (chain-txs.repository.ts, reopenConfirmedTx). */
  function reopen(tx: ChainTxRow, head: bigint): Promise<boolean> {
    return reopenConfirmedTx(db, tx, `not on chain at block ${head}: reopened by the reconciler`, clock.now());
  }

  async function pass(repair: boolean): Promise<ReconcileResult> {
    const rollbacksAtStart = rollbacks;
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
    // Every one of them, page by page: a rollback thousands of transactions deep is checked whole.
    const suspects: ChainTxRow[] = [];
    for (let afterNonce = -1n; ; ) {
      const page = await db
        .selectFrom('chain_txs')
        .selectAll()
        .where('chain_id', '=', chainId)
        .where('signer', '=', signer)
        .where('purpose', '=', PURPOSE)
        .where('status', '=', 'confirmed')
        .where('nonce', '>', afterNonce)
        .where((eb) => eb.or([eb('nonce', '>=', chainNonce), eb('block_number', '>', head)]))
        .orderBy('nonce')
        .limit(SUSPECT_PAGE)
        .execute();
      suspects.push(...page);
      if (page.length < SUSPECT_PAGE) break;
      afterNonce = BigInt(page[page.length - 1]!.nonce);
    }
    const lost = await missingAmong(suspects);
    const lostIds = new Set(lost.map((tx) => String(tx.id)));

    // The supply against the ledger at one block, like with like: mints there less burns there on both sides
    // (supply-witness.ts: confirmed rewards and open batches mined there, less reversals settled or in flight).
    // Rows of lost transactions are left out of the comparison (counted as missing above).
    const ledgerAtHead = await ledgerMintedAt(witness, head);
    const lostAmounts = await amountsOf(lost.map((tx) => tx.id));
    const lostBelowHead = lost
      .filter((tx) => tx.block_number !== null && BigInt(tx.block_number) <= head)
      .reduce((sum, tx) => sum + (lostAmounts.get(String(tx.id))?.amount ?? 0n), 0n);
    const confirmed = ledgerAtHead.amount - lostBelowHead;
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
    const unexpected = supply - confirmed;
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
    // A rollback seen while this pass ran may postdate its chain reads: it cannot vouch for agreement.
    const stale = rollbacks !== rollbacksAtStart && status === 'ok';
    last = {
      ...(stale ? { error: last.error } : {}),
      status: stale ? 'drift' : status,
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
    rollbackSeen(reason) {
      if (stopped) return;
      rollbacks++;
      last = { ...last, status: 'drift', error: `the chain went back (${reason}); checking the ledger against it` };
      // A pass already running read the chain before the rollback: the next one must start after it.
      void (running ?? Promise.resolve())
        .catch(() => undefined)
        .then(() => reconcile())
        .catch((error: unknown) => log.warn({ error: shortError(error) }, 'reconciler pass failed'));
    },
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
