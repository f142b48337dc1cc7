import type { LedgerReconciliation } from '@pts/shared';
import { rewardTokenAbi } from '../artifacts/index.ts';
import { ledgerMintedAt } from '../supply-witness.ts';
import {
  amountsOf,
  type ChainTxRow,
  type LostAmounts,
  missingAmong,
  type ReconcileResult,
  type ReconcilerContext,
  receiptOf,
  reopen,
} from './context.ts';

// One reconciler pass (chain/reconciler.ts runs one at a time): read the chain at one block, find the
// confirmed transactions it lacks, weigh the ledger against the token's supply there, reopen what is lost
// (when allowed), and record the finding.

const PURPOSE = 'mintBatch';
/** Suspects (nonce at or above the chain's) read per page; a pass reads them all. */
const SUSPECT_PAGE = 1_000;
const DEEP_SCAN_PAGE = 100;

/** The chain at one block: its number, the signer's nonce there, and the token's supply there. */
interface ChainFacts {
  head: bigint;
  chainNonce: bigint;
  supply: bigint;
}

/** The lost transactions found so far, their amounts, and the ledger's confirmed total against the supply. */
interface Tally {
  lost: ChainTxRow[];
  lostIds: Set<string>;
  lostAmounts: LostAmounts;
  /** The ledger's tokens at the head, lost transactions' left out. */
  confirmed: bigint;
  /** What the ledger confirms beyond the supply and no lost transaction explains (yet). */
  deficit: bigint;
}

/** One pass: compare the ledger with the chain, reopen what it lacks when `repair` and allowed, record it. */
export async function reconcilePass(ctx: ReconcilerContext, repair: boolean): Promise<ReconcileResult> {
  const rollbacksAtStart = ctx.rollbacks;
  // Chain facts first, all pinned to one block, so rows the minter confirms meanwhile cannot look missing.
  const facts = await readChainFacts(ctx);
  const tally = await tallyAgainstSupply(ctx, facts, await missingAmong(ctx, await findSuspects(ctx, facts)));
  if (tally.deficit > 0n) await scanBelowNonce(ctx, facts, tally);
  const { lost, lostAmounts, deficit } = tally;
  const lostAmount = lost.reduce((sum, tx) => sum + (lostAmounts.get(String(tx.id))?.amount ?? 0n), 0n);
  const missingOnChain = lostAmount + (deficit > 0n ? deficit : 0n);
  const unexpected = facts.supply - tally.confirmed;
  const unexpectedOnChain = unexpected > 0n ? unexpected : 0n;
  const reopened = repair && ctx.deps.mayRepair() ? await reopenLost(ctx, lost, facts.head, missingOnChain) : 0;
  logUnexplained(ctx, deficit, unexpectedOnChain);
  // `drift` while something is missing that this pass did not put back (or cannot explain), or the chain
  // holds tokens the ledger never signed; `restoring` while reopened rewards wait for their confirmation.
  const unrepaired = reopened < lost.length || deficit > 0n || unexpectedOnChain > 0n;
  recordFinding(ctx, {
    head: facts.head,
    missingOnChain,
    unexpectedOnChain,
    unrepaired,
    restoringRewards: await countRestoring(ctx),
    rollbackMeanwhile: ctx.rollbacks !== rollbacksAtStart,
  });
  return {
    lost: lost.map((tx) => ({
      id: BigInt(tx.id),
      nonce: BigInt(tx.nonce),
      amount: lostAmounts.get(String(tx.id))?.amount ?? 0n,
      rewards: lostAmounts.get(String(tx.id))?.rewards ?? 0,
    })),
    reopened,
    report: ctx.last,
  };
}

async function readChainFacts(ctx: ReconcilerContext): Promise<ChainFacts> {
  const { publicClient } = ctx.deps;
  const head = await publicClient.getBlockNumber({ cacheTime: 0 });
  const [chainNonce, supply] = await Promise.all([
    publicClient.getTransactionCount({ address: ctx.deps.signer, blockNumber: head }).then(BigInt),
    publicClient.readContract({
      address: ctx.deps.tokenAddress,
      abi: rewardTokenAbi,
      functionName: 'totalSupply',
      blockNumber: head,
    }),
  ]);
  return { head, chainNonce, supply };
}

/**
 * Suspects: confirmed transactions whose nonce the chain has not reached (it cannot have mined them), or
 * recorded in a block above its head (it lost that block). A tail loss or a reorg shows up here. Every one of
 * them, page by page: a rollback thousands of transactions deep is checked whole.
 */
async function findSuspects(ctx: ReconcilerContext, { head, chainNonce }: ChainFacts): Promise<ChainTxRow[]> {
  const suspects: ChainTxRow[] = [];
  for (let afterNonce = -1n; ; ) {
    const page = await ctx.deps.db
      .selectFrom('chain_txs')
      .selectAll()
      .where('chain_id', '=', ctx.deps.chainId)
      .where('signer', '=', ctx.signer)
      .where('purpose', '=', PURPOSE)
      .where('status', '=', 'confirmed')
      .where('nonce', '>', afterNonce)
      .where((eb) => eb.or([eb('nonce', '>=', chainNonce), eb('block_number', '>', head)]))
      .orderBy('nonce')
      .limit(SUSPECT_PAGE)
      .execute();
    suspects.push(...page);
    if (page.length < SUSPECT_PAGE) return suspects;
    afterNonce = BigInt(page[page.length - 1]!.nonce);
  }
}

/**
 * The supply against the ledger at one block, like with like: mints there less burns there on both sides
 * (supply-witness.ts: confirmed rewards and open batches mined there, less reversals settled or in flight).
 * Rows of lost transactions are left out of the comparison (counted as missing).
 */
async function tallyAgainstSupply(ctx: ReconcilerContext, facts: ChainFacts, lost: ChainTxRow[]): Promise<Tally> {
  const { db, chainId, publicClient, tokenAddress } = ctx.deps;
  const receipt = (hash: `0x${string}`) => receiptOf(ctx, hash);
  const witness = { db, chainId, signer: ctx.signer, receipt, publicClient, tokenAddress };
  const ledgerAtHead = await ledgerMintedAt(witness, facts.head);
  const lostAmounts = await amountsOf(
    ctx,
    lost.map((tx) => tx.id),
  );
  const lostBelowHead = lost
    .filter((tx) => tx.block_number !== null && BigInt(tx.block_number) <= facts.head)
    .reduce((sum, tx) => sum + (lostAmounts.get(String(tx.id))?.amount ?? 0n), 0n);
  const confirmed = ledgerAtHead.amount - lostBelowHead;
  const lostIds = new Set(lost.map((tx) => String(tx.id)));
  return { lost, lostIds, lostAmounts, confirmed, deficit: confirmed - facts.supply };
}

/**
 * A deficit the suspects do not explain: a transaction whose nonce another transaction consumed (the tracker
 * burned a gap over it after a chain reset). Scans confirmed ones below the chain's nonce, newest first, until
 * the deficit is accounted for (or `deepScanLimit` rows were read); adds what it finds to the tally.
 */
async function scanBelowNonce(ctx: ReconcilerContext, { head, chainNonce }: ChainFacts, tally: Tally): Promise<void> {
  let scanned = 0;
  let beforeNonce = chainNonce;
  while (tally.deficit > 0n && scanned < ctx.deepScanLimit) {
    const page = await ctx.deps.db
      .selectFrom('chain_txs')
      .selectAll()
      .where('chain_id', '=', ctx.deps.chainId)
      .where('signer', '=', ctx.signer)
      .where('purpose', '=', PURPOSE)
      .where('status', '=', 'confirmed')
      .where('nonce', '<', beforeNonce)
      .orderBy('nonce', 'desc')
      .limit(DEEP_SCAN_PAGE)
      .execute();
    if (page.length === 0) return;
    scanned += page.length;
    beforeNonce = BigInt(page[page.length - 1]!.nonce);
    const missing = (await missingAmong(ctx, page)).filter((tx) => !tally.lostIds.has(String(tx.id)));
    const amounts = await amountsOf(
      ctx,
      missing.map((tx) => tx.id),
    );
    for (const tx of missing) {
      tally.lost.push(tx);
      tally.lostIds.add(String(tx.id));
      tally.lostAmounts.set(String(tx.id), amounts.get(String(tx.id)) ?? { amount: 0n, rewards: 0 });
      if (tx.block_number !== null && BigInt(tx.block_number) <= head) {
        tally.deficit -= amounts.get(String(tx.id))?.amount ?? 0n;
      }
    }
  }
}

/** Puts the lost transactions back in the outbox, lowest nonce first; how many it reopened. */
async function reopenLost(
  ctx: ReconcilerContext,
  lost: ChainTxRow[],
  head: bigint,
  missingOnChain: bigint,
): Promise<number> {
  let reopened = 0;
  for (const tx of [...lost].sort((a, b) => (BigInt(a.nonce) < BigInt(b.nonce) ? -1 : 1))) {
    if (await reopen(ctx, tx, head)) reopened++;
  }
  if (reopened > 0) {
    ctx.reopenedTotal += reopened;
    ctx.deps.metrics.reconcilerReopened.inc(reopened);
    ctx.log.warn(
      { reopened, missingOnChain: missingOnChain.toString(), blockNumber: head.toString() },
      'confirmed mint transactions missing on chain were put back in the outbox',
    );
  }
  return reopened;
}

function logUnexplained(ctx: ReconcilerContext, deficit: bigint, unexpectedOnChain: bigint): void {
  if (deficit > 0n) {
    ctx.log.error({ deficit: deficit.toString() }, 'the ledger confirms more tokens than the chain holds, unexplained');
  }
  if (unexpectedOnChain > 0n) {
    ctx.log.error(
      { unexpected: unexpectedOnChain.toString() },
      'the chain holds more reward tokens than the ledger ever signed',
    );
  }
}

/** Reopened rewards not confirmed again yet. */
async function countRestoring(ctx: ReconcilerContext): Promise<number> {
  const restoring = await ctx.deps.db
    .selectFrom('reward_mints')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('reconciled_at', 'is not', null)
    .where('status', 'in', ['pending', 'submitted'])
    .executeTakeFirstOrThrow();
  return Number(restoring.count);
}

/** The pass's metrics, and its report as the reconciler's last finding. */
function recordFinding(
  ctx: ReconcilerContext,
  finding: {
    head: bigint;
    missingOnChain: bigint;
    unexpectedOnChain: bigint;
    unrepaired: boolean;
    restoringRewards: number;
    rollbackMeanwhile: boolean;
  },
): void {
  const { metrics } = ctx.deps;
  const { missingOnChain, unexpectedOnChain, restoringRewards } = finding;
  const drift = missingOnChain > 0n || unexpectedOnChain > 0n;
  const status: LedgerReconciliation['status'] = finding.unrepaired
    ? 'drift'
    : restoringRewards > 0
      ? 'restoring'
      : 'ok';
  metrics.ledgerDrift.set({ kind: 'missing' }, Number(missingOnChain));
  metrics.ledgerDrift.set({ kind: 'unexpected' }, Number(unexpectedOnChain));
  metrics.reconcilerRestoring.set(restoringRewards);
  metrics.reconcilerRuns.inc({ result: drift ? 'drift' : 'ok' });
  // A rollback seen while this pass ran may postdate its chain reads: it cannot vouch for agreement.
  const stale = finding.rollbackMeanwhile && status === 'ok';
  ctx.last = {
    ...(stale ? { error: ctx.last.error } : {}),
    status: stale ? 'drift' : status,
    checkedAt: ctx.deps.clock.now().toISOString(),
    blockNumber: finding.head.toString(),
    missingOnChain: missingOnChain.toString(),
    unexpectedOnChain: unexpectedOnChain.toString(),
    reopenedTransactions: ctx.reopenedTotal,
    restoringRewards,
  };
}
