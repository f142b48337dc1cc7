import type { MintingState } from '@pts/shared';
import { type Hex, TransactionNotFoundError, type TransactionReceipt } from 'viem';
import {
  type ChainTxRow,
  forgetMinedTxs,
  listOpenTxs,
  maxConfirmedNonce,
  recordMinedTxs,
} from '../chain-txs.repository.ts';
import { readFinalBlock } from '../finality.ts';
import { maxOf, shortError } from '../tx-sender.ts';
import { confirmMined, requeue, settleDropped } from './confirm.ts';
import type { MinterContext } from './context.ts';
import { fillNonceGap } from './gap.ts';
import { prepareReplacement, type Sendable } from './replace.ts';
import { sendInNonceOrder } from './resend.ts';

// Receipt tracking: one pass at a time reads the chain, records what mined, re-queues what failed or was
// dropped, replaces what is stuck and re-sends what the node never took (docs/chain.md).

/** Open transactions one step of a pass reads receipts for and acts on, lowest nonce first. */
const TRACK_CHUNK = 50;

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
  /** When (clock ms) this process last saw the signer's nonce move; undefined until it has. */
  nonceMovedAt?: number;
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
  noteNonce(ctx, state, chainNonce);
  // Idle is not wedged: the timer restarts whenever nothing waits.
  if (openCount === 0) state.progressAt = ctx.clock.now().getTime();
  const nextNonce = ctx.sender.peekNonce();
  if (nextNonce !== undefined) ctx.metrics.nonceLag.set(Number(maxOf(nextNonce - chainNonce, 0n)));
  else ctx.metrics.nonceLag.set(openCount);
}

/** The signer's nonce on chain as just read: a move means one of ours mined. */
function noteNonce(ctx: MinterContext, state: TrackerState, chainNonce: bigint): void {
  if (state.lastNonce !== undefined && chainNonce !== state.lastNonce) {
    state.lastMinedAt = ctx.clock.now().getTime();
    state.progressAt = state.lastMinedAt;
    state.nonceMovedAt = state.lastMinedAt;
  }
  state.lastNonce = chainNonce;
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

/** What one pass carries from chunk to chunk. */
interface Pass {
  facts: ChainFacts;
  result: TrackResult;
  /** The lowest open transaction without a receipt was checked for a nonce gap below it (once a pass). */
  gapChecked: boolean;
  gapFilled: boolean;
  /** The final block, raised by the newest receipt seen so far (finalBlockFor). */
  finalAt: bigint;
  dropped: ChainTxRow[];
}

async function trackOnce(ctx: MinterContext, state: TrackerState): Promise<TrackResult> {
  const result: TrackResult = { confirmedTransactions: 0, requeued: 0, replaced: 0 };
  const facts = await readChainFacts(ctx, state);
  const open = await listOpenTxs(ctx.db, ctx.chainId, ctx.signer);
  noteProgress(ctx, state, open.length, facts.latestNonce);
  await checkLedgerAhead(ctx, facts.latestNonce);
  const pass: Pass = { facts, result, gapChecked: false, gapFilled: false, finalAt: facts.finalBlock, dropped: [] };
  // Lowest nonce first, a chunk at a time: each chunk's receipts are read just before it is acted on and
  // recorded at once, so what mined while earlier chunks were handled is recorded, not replaced.
  for (let start = 0; start < open.length && !ctx.stopped; start += TRACK_CHUNK) {
    await trackChunk(ctx, state, pass, open.slice(start, start + TRACK_CHUNK));
  }
  if (pass.dropped.length > 0) {
    const settled = await settleDropped(ctx, pass.dropped, facts.finalBlock);
    result.confirmedTransactions += settled.confirmed;
    result.requeued += settled.requeued;
  }
  return result;
}

async function trackChunk(ctx: MinterContext, state: TrackerState, pass: Pass, chunk: ChainTxRow[]): Promise<void> {
  const { result } = pass;
  const receipts = await readReceipts(ctx, chunk);
  await forgetVanished(ctx, chunk, receipts);
  const stuck = stuckRule(ctx);
  const lowestUnmined = chunk.find((_, index) => !receipts[index]);
  if (!pass.gapChecked && lowestUnmined) {
    pass.gapChecked = true;
    pass.gapFilled = await fillNonceGap(ctx, { lowest: lowestUnmined, stuck });
  }
  const finalAt = finalBlockFor(ctx, pass.finalAt, receipts);
  pass.finalAt = finalAt;
  const isFinal = (receipt: TransactionReceipt) => receipt.blockNumber <= finalAt;
  result.confirmedTransactions += await recordReceipts(ctx, chunk, receipts, isFinal);
  for (const [index, tx] of chunk.entries()) {
    const receipt = receipts[index];
    // Mined: confirmed above once final; until then nothing to send, and a revert is only acted on when final.
    if (!receipt || receipt.status === 'success' || !isFinal(receipt)) continue;
    result.requeued += await settleReverted(ctx, tx, receipt);
    result.confirmedTransactions++;
  }
  if (!lowestUnmined) return;
  // Read after the receipts: a transaction mined since the pass began is waited for, never replaced.
  const chainNonce = await readChainNonce(ctx, state);
  const unmined = chunk.filter((_, index) => !receipts[index]);
  const plan = await planUnmined(ctx, state, pass, { unmined, chainNonce, stuck });
  pass.dropped.push(...plan.dropped);
  result.replaced += await sendPlanned(ctx, plan);
}

/** `stuck(tx)`: sent (or replaced) PTS_MINT_STUCK_SECONDS ago or more. */
function stuckRule(ctx: MinterContext): (tx: ChainTxRow) => boolean {
  const stuckMs = ctx.config.PTS_MINT_STUCK_SECONDS * 1000;
  const now = ctx.clock.now().getTime();
  return (tx) => now - new Date(tx.submitted_at).getTime() >= stuckMs;
}

/** The signer's nonce on chain now (a move is progress: noteNonce). */
async function readChainNonce(ctx: MinterContext, state: TrackerState): Promise<bigint> {
  const { publicClient, account } = ctx;
  const nonce = BigInt(await publicClient.getTransactionCount({ address: account.address, blockTag: 'latest' }));
  noteNonce(ctx, state, nonce);
  return nonce;
}

/**
 * Whether the signer's transactions have stopped mining: its nonce has not moved for PTS_MINT_STUCK_SECONDS
 * (or not since this process began watching). While the chain mines the backlog, waiting beats replacing:
 * a replacement would race its own original into the next block (`nonce already used`).
 */
function stalled(ctx: MinterContext, state: TrackerState): boolean {
  if (state.nonceMovedAt === undefined) return true;
  return ctx.clock.now().getTime() - state.nonceMovedAt >= ctx.config.PTS_MINT_STUCK_SECONDS * 1000;
}

interface Plan {
  dropped: ChainTxRow[];
  replace: ChainTxRow[];
  resend: Sendable[];
}

/** What to do with a chunk's transactions that have no receipt. */
async function planUnmined(
  ctx: MinterContext,
  state: TrackerState,
  pass: Pass,
  params: { unmined: ChainTxRow[]; chainNonce: bigint; stuck: (tx: ChainTxRow) => boolean },
): Promise<Plan> {
  const { unmined, chainNonce, stuck } = params;
  const { finalNonce, wentBack } = pass.facts;
  const plan: Plan = { dropped: [], replace: [], resend: [] };
  const replacing = !pass.gapFilled && stalled(ctx, state);
  const maybeLost: ChainTxRow[] = [];
  for (const tx of unmined) {
    if (tx.nonce < finalNonce && stuck(tx)) {
      // The nonce was used (in a final block) by a transaction none of our recorded hashes match: settled below.
      plan.dropped.push(tx);
    } else if (tx.nonce < chainNonce) {
      // Its nonce is used in a block that is not final yet (or since the pass began): wait for the receipt.
    } else if (stuck(tx) && replacing) {
      plan.replace.push(tx);
    } else if (pass.gapFilled || wentBack || tx.status === 'signed') {
      // A reset chain never had these (now that the gap is closed they can mine as signed); after the head
      // went back the node may have lost them with its blocks; `signed` ones were never accepted by the
      // node, or their block was rolled back.
      plan.resend.push(sendableOf(tx));
    } else if (stuck(tx)) {
      maybeLost.push(tx);
    }
  }
  // The chain mines, but the node may have lost some (a restart emptied its pool): those go again as signed.
  const known = await Promise.all(maybeLost.map((tx) => nodeHas(ctx, tx.current_hash as Hex)));
  plan.resend.push(...maybeLost.filter((_, index) => !known[index]).map(sendableOf));
  return plan;
}

function sendableOf(tx: ChainTxRow): Sendable {
  return { chainTxId: BigInt(tx.id), nonce: BigInt(tx.nonce), hash: tx.current_hash as Hex, raw: tx.raw_tx as Hex };
}

/** Whether the node knows the transaction (in its pool or mined). */
async function nodeHas(ctx: MinterContext, hash: Hex): Promise<boolean> {
  try {
    await ctx.publicClient.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

/**
 * Signs and records the replacements (one fee read for all), then sends them with the re-sends, lowest nonce
 * first, together: a backlog goes out at the node's pace, not one marked send after another. How many were
 * replaced.
 */
async function sendPlanned(ctx: MinterContext, plan: Plan): Promise<number> {
  const replacements: Sendable[] = [];
  if (plan.replace.length > 0) {
    const network = await ctx.sender.fees(true);
    for (const tx of plan.replace) {
      const prepared = await prepareReplacement(ctx, tx, network);
      if (prepared) replacements.push(prepared);
    }
  }
  await sendInNonceOrder(ctx, [...replacements, ...plan.resend]);
  return plan.replace.length;
}
