import type { MintingState } from '@pts/shared';
import type { Hex, TransactionReceipt } from 'viem';
import {
  type ChainTxRow,
  forgetMinedTxs,
  listOpenTxs,
  maxConfirmedNonce,
  recordMinedTxs,
} from '../chain-txs.repository.ts';
import { readFinalBlock } from '../finality.ts';
import { maxOf, shortError } from '../tx-sender.ts';
import { enqueueBroadcast } from './broadcast.ts';
import { confirmMined, requeue, settleDropped } from './confirm.ts';
import type { MinterContext } from './context.ts';
import { fillNonceGap } from './gap.ts';
import { replaceStuck } from './replace.ts';

// Receipt tracking: one pass at a time reads the chain, records what mined, re-queues what failed or was
// dropped, replaces what is stuck and re-sends what the node never took (docs/chain.md).

export interface TrackResult {
  confirmedTransactions: number;
  requeued: number;
  replaced: number;
}

/** What the tracker remembers between passes. */
interface TrackerState {
  /** The last head a pass saw. */
  lastHead?: bigint;
  /** The signer's nonce on chain at the last pass, and when (clock ms) it last moved: our last mined tx. */
  lastNonce?: bigint;
  lastMinedAt?: number;
  /** Since when (clock ms) transactions have waited with no mine of ours: the wedge timer. */
  progressAt?: number;
  /** Open transactions at the last pass. */
  openCount: number;
  tagWarned: boolean;
  wedgedLogged: boolean;
}

/** Chain facts of one tracking pass, read before the ledger so nothing mined meanwhile looks lost. */
interface ChainFacts {
  head: bigint;
  finalBlock: bigint;
  latestNonce: bigint;
  finalNonce: bigint;
  wentBack: boolean;
}

export interface Tracker {
  /** One tracking pass; a call while one runs joins it (two passes could both replace the same transaction). */
  track(): Promise<TrackResult>;
  /** Resolves when no pass runs. */
  idle(): Promise<void>;
  mintingState(): MintingState;
}

export function createTracker(ctx: MinterContext, options: { wedgedAfterSeconds?: number }): Tracker {
  const state: TrackerState = { openCount: 0, tagWarned: false, wedgedLogged: false };
  const wedgedMs = (options.wedgedAfterSeconds ?? 60) * 1000;
  let tracking: Promise<TrackResult> | undefined;
  return {
    track() {
      tracking ??= trackOnce(ctx, state).finally(() => {
        tracking = undefined;
      });
      return tracking;
    },
    async idle() {
      await tracking?.catch(() => undefined);
    },
    mintingState() {
      const now = ctx.clock.now().getTime();
      const { openCount, progressAt, lastMinedAt } = state;
      const wedged = openCount > 0 && progressAt !== undefined && now - progressAt >= wedgedMs;
      if (wedged && !state.wedgedLogged)
        ctx.log.error({ waiting: openCount }, 'minting is wedged: transactions wait and none mines');
      state.wedgedLogged = wedged;
      return {
        status: wedged ? 'wedged' : 'ok',
        signer: true,
        waitingTransactions: openCount,
        lastMinedAt: lastMinedAt === undefined ? null : new Date(lastMinedAt).toISOString(),
      };
    },
  };
}

async function readChainFacts(ctx: MinterContext, state: TrackerState): Promise<ChainFacts> {
  const { publicClient, account } = ctx;
  const head = await publicClient.getBlockNumber({ cacheTime: 0 });
  const wentBack = noteHead(ctx, state, head);
  const finalBlock = await readFinalBlock(publicClient, ctx.finality, head, (error) => {
    if (state.tagWarned) return;
    state.tagWarned = true;
    ctx.log.warn(
      { tag: ctx.finality.tag, error: shortError(error) },
      'the chain has no such block tag; finality by depth only',
    );
  });
  const [latestNonce, finalNonce] = await Promise.all([
    publicClient.getTransactionCount({ address: account.address, blockNumber: head }).then(BigInt),
    finalBlock < 0n
      ? Promise.resolve(0n)
      : finalBlock === head
        ? undefined
        : publicClient.getTransactionCount({ address: account.address, blockNumber: finalBlock }).then(BigInt),
  ]);
  return { head, finalBlock, latestNonce, finalNonce: finalNonce ?? latestNonce, wentBack };
}

/**
 * The head going back is a rollback: whatever the ledger confirmed above it must be checked again, and
 * open transactions the node may have dropped with the lost blocks are sent again in this pass.
 */
function noteHead(ctx: MinterContext, state: TrackerState, head: bigint): boolean {
  const wentBack = state.lastHead !== undefined && head < state.lastHead;
  if (wentBack) ctx.onRollback?.(`the chain's head went back from block ${state.lastHead} to ${head}`);
  state.lastHead = head;
  state.progressAt ??= ctx.clock.now().getTime();
  return wentBack;
}

/** The wedge timer, the last-mined time and the nonce-lag gauge, from this pass's open count and chain nonce. */
function noteProgress(ctx: MinterContext, state: TrackerState, openCount: number, chainNonce: bigint): void {
  state.openCount = openCount;
  if (state.lastNonce !== undefined && chainNonce !== state.lastNonce) {
    state.lastMinedAt = ctx.clock.now().getTime();
    state.progressAt = state.lastMinedAt;
  }
  state.lastNonce = chainNonce;
  // Idle is not wedged: the timer restarts whenever nothing waits.
  if (openCount === 0) state.progressAt = ctx.clock.now().getTime();
  const nextNonce = ctx.sender.peekNonce();
  if (nextNonce !== undefined) ctx.metrics.nonceLag.set(Number(maxOf(nextNonce - chainNonce, 0n)));
  else ctx.metrics.nonceLag.set(openCount);
}

/** The ledger confirmed a nonce the chain has not reached: the chain went back. */
async function checkLedgerAhead(ctx: MinterContext, chainNonce: bigint): Promise<void> {
  const highestConfirmed = await maxConfirmedNonce(ctx.db, ctx.chainId, ctx.signer);
  if (highestConfirmed !== undefined && highestConfirmed >= chainNonce) {
    ctx.onRollback?.(`the ledger confirmed nonce ${highestConfirmed}; the chain's nonce is ${chainNonce}`);
  }
}

/** Per open transaction, the receipt of whichever of its hashes mined (undefined: none yet). */
function readReceipts(ctx: MinterContext, open: ChainTxRow[]): Promise<(TransactionReceipt | undefined)[]> {
  return Promise.all(
    open.map(async (tx) =>
      (await Promise.all(tx.hashes.map((hash) => ctx.sender.receipt(hash as Hex)))).find((r) => r !== null),
    ),
  );
}

/**
 * A receipt seen in an earlier pass that the chain no longer has: its block was rolled back. The batch was
 * never final (its rewards are still `submitted`); its signed bytes go out again (the rows become `signed`).
 */
async function forgetVanished(
  ctx: MinterContext,
  open: ChainTxRow[],
  receipts: (TransactionReceipt | undefined)[],
): Promise<void> {
  const vanished = open.filter((tx, index) => tx.block_number !== null && !receipts[index]);
  if (vanished.length === 0) return;
  const now = ctx.clock.now();
  await forgetMinedTxs(
    ctx.db,
    vanished.map((tx) => BigInt(tx.id)),
    'its block was rolled back',
    now,
  );
  for (const tx of vanished) Object.assign(tx, { status: 'signed', block_number: null, submitted_at: now });
  ctx.onRollback?.(`${vanished.length} mined mintBatch receipt(s) disappeared`);
}

/**
 * The highest final block for these receipts. Receipts are read after the head: one may sit in a block mined
 * since. By depth alone that block's successors count from it, so the final block moves up with the newest
 * receipt (not past a tag's block).
 */
function finalBlockFor(ctx: MinterContext, finalBlock: bigint, receipts: (TransactionReceipt | undefined)[]): bigint {
  const newestReceipt = receipts.reduce((max, r) => (r && r.blockNumber > max ? r.blockNumber : max), -1n);
  const byDepth = newestReceipt - BigInt(ctx.finality.depth);
  return ctx.finality.tag === 'latest' && byDepth > finalBlock ? byDepth : finalBlock;
}

/** Mined but not final: the block is noted; final and successful: confirmed. How many were confirmed. */
async function recordReceipts(
  ctx: MinterContext,
  open: ChainTxRow[],
  receipts: (TransactionReceipt | undefined)[],
  isFinal: (receipt: TransactionReceipt) => boolean,
): Promise<number> {
  const notFinal = open.flatMap((tx, index) => {
    const receipt = receipts[index];
    return receipt && !isFinal(receipt) ? [{ chainTxId: BigInt(tx.id), blockNumber: receipt.blockNumber }] : [];
  });
  const mined = open.flatMap((tx, index) => {
    const receipt = receipts[index];
    return receipt?.status === 'success' && isFinal(receipt) ? [{ tx, receipt }] : [];
  });
  await recordMinedTxs(ctx.db, notFinal, ctx.clock.now());
  const confirmed = await confirmMined(ctx, mined);
  if (confirmed > 0) ctx.metrics.mintTransactions.inc({ result: 'confirmed' }, confirmed);
  return confirmed;
}

/** A final reverted receipt: the transaction failed and its rewards go back to the queue. */
async function settleReverted(ctx: MinterContext, tx: ChainTxRow, receipt: TransactionReceipt): Promise<number> {
  const requeued = await requeue(ctx, tx, `transaction ${receipt.transactionHash} reverted`, receipt.blockNumber);
  ctx.metrics.mintTransactions.inc({ result: 'reverted' });
  ctx.log.warn({ hash: receipt.transactionHash, requeued }, 'mintBatch reverted; rewards re-queued');
  return requeued;
}

async function trackOnce(ctx: MinterContext, state: TrackerState): Promise<TrackResult> {
  const result: TrackResult = { confirmedTransactions: 0, requeued: 0, replaced: 0 };
  const facts = await readChainFacts(ctx, state);
  const { finalBlock, latestNonce: confirmedNonce, finalNonce, wentBack } = facts;
  const open = await listOpenTxs(ctx.db, ctx.chainId, ctx.signer);
  noteProgress(ctx, state, open.length, confirmedNonce);
  await checkLedgerAhead(ctx, confirmedNonce);
  if (open.length === 0) return result;

  const receipts = await readReceipts(ctx, open);
  await forgetVanished(ctx, open, receipts);
  const stuckMs = ctx.config.PTS_MINT_STUCK_SECONDS * 1000;
  const ageOf = (tx: ChainTxRow) => ctx.clock.now().getTime() - new Date(tx.submitted_at).getTime();
  const stuck = (tx: ChainTxRow) => ageOf(tx) >= stuckMs;
  const gapFilled = await fillNonceGap(ctx, { lowest: open.find((_, index) => !receipts[index]), stuck });
  const finalAt = finalBlockFor(ctx, finalBlock, receipts);
  const isFinal = (receipt: TransactionReceipt) => receipt.blockNumber <= finalAt;
  result.confirmedTransactions += await recordReceipts(ctx, open, receipts, isFinal);
  const dropped: ChainTxRow[] = [];
  for (const [index, tx] of open.entries()) {
    const receipt = receipts[index];
    if (receipt) {
      // Mined: confirmed above once final; until then nothing to send, and a revert is only acted on when final.
      if (receipt.status === 'success' || !isFinal(receipt)) continue;
      result.requeued += await settleReverted(ctx, tx, receipt);
      result.confirmedTransactions++;
    } else if (tx.nonce < finalNonce && stuck(tx)) {
      // The nonce was used (in a final block) by a transaction none of our recorded hashes match: settled below.
      dropped.push(tx);
    } else if (tx.nonce < confirmedNonce) {
      // Its nonce is used in a block that is not final yet: wait, a rollback could still bring ours back.
    } else if (stuck(tx) && !gapFilled) {
      await replaceStuck(ctx, tx);
      result.replaced++;
    } else if ((gapFilled || wentBack || tx.status === 'signed') && !ctx.broadcasting.has(tx.id)) {
      // A reset chain never had these (now that the gap is closed they can mine as signed); after the head
      // went back the node may have lost them with its blocks; `signed` ones were never accepted by the
      // node, or their block was rolled back.
      await enqueueBroadcast(ctx, { chainTxId: tx.id, hash: tx.current_hash as Hex, raw: tx.raw_tx as Hex });
    }
  }
  if (dropped.length > 0) {
    const settled = await settleDropped(ctx, dropped, finalBlock);
    result.confirmedTransactions += settled.confirmed;
    result.requeued += settled.requeued;
  }
  return result;
}
