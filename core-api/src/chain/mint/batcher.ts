import type { Hex } from 'viem';
import type { MintSubmission } from '../minter.types.ts';
import { shortError } from '../tx-sender.ts';
import { enqueueBroadcast, submissionAfterSend } from './broadcast.ts';
import type { MinterContext } from './context.ts';
import { claimAndSign } from './sign.ts';

// Group commit for `submit`: rewards handed over by requests wait briefly for company, then one batch signs
// them all and each waiter hears how its reward went.

type Waiter = (submission: MintSubmission | Error) => void;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Batcher {
  submit(mintId: string, waitMs: number): Promise<MintSubmission>;
  /** Answers whoever waits for this reward (and forgets them). */
  settle(id: string, result: MintSubmission | Error): void;
  /** Wakes the gather and waits for the flush under way. */
  stop(): Promise<void>;
  /** Answers everyone still waiting `pending` (their rows are committed; the next start re-drives them). */
  dismiss(): void;
}

/** The batcher's shared state: who waits for which reward, the flush under way and how to cut a gather short. */
interface BatchState {
  waiting: Map<string, Waiter[]>;
  flushLoop: Promise<void> | undefined;
  wakeGather: (() => void) | undefined;
}

export function createBatcher(ctx: MinterContext): Batcher {
  const state: BatchState = { waiting: new Map(), flushLoop: undefined, wakeGather: undefined };
  return {
    settle: (id, result) => settleWaiters(state, id, result),
    submit: (mintId, waitMs) => submitToBatch(ctx, state, mintId, waitMs),
    async stop() {
      state.wakeGather?.();
      await state.flushLoop;
    },
    dismiss() {
      for (const id of [...state.waiting.keys()]) settleWaiters(state, id, { status: 'pending' });
    },
  };
}

/** Answers whoever waits for this reward (and forgets them). */
function settleWaiters(state: BatchState, id: string, result: MintSubmission | Error): void {
  const waiters = state.waiting.get(id);
  state.waiting.delete(id);
  for (const waiter of waiters ?? []) waiter(result);
}

/** Waits, at most `waitMs`, for the group that signs this reward; `pending` when that takes longer. */
function submitToBatch(ctx: MinterContext, state: BatchState, mintId: string, waitMs: number): Promise<MintSubmission> {
  // reward_mints.id is a uuid: a malformed id would fail the whole group's query, not just its own.
  if (!UUID.test(mintId)) return Promise.reject(new Error(`not a reward id: ${mintId}`));
  if (ctx.stopped) return Promise.resolve({ status: 'pending' });
  return new Promise<MintSubmission>((resolve, reject) => {
    const timer = setTimeout(() => resolve({ status: 'pending' }), waitMs);
    const waiters = state.waiting.get(mintId) ?? [];
    waiters.push((result) => {
      clearTimeout(timer);
      if (result instanceof Error) reject(result);
      else resolve(result);
    });
    state.waiting.set(mintId, waiters);
    scheduleFlush(ctx, state);
  });
}

/**
 * The first reward waits at most PTS_MINT_BATCH_WAIT_MS for company; rewards arriving while a group is
 * being signed and committed form the next group, which goes as soon as that one is done.
 */
function scheduleFlush(ctx: MinterContext, state: BatchState): void {
  const batchMax = ctx.config.PTS_MINT_BATCH_MAX;
  if (state.waiting.size >= batchMax) state.wakeGather?.();
  if (state.flushLoop || ctx.stopped) return;
  state.flushLoop = (async () => {
    if (state.waiting.size < batchMax) {
      if (ctx.config.PTS_MINT_BATCH_WAIT_MS > 0) await gather(state, ctx.config.PTS_MINT_BATCH_WAIT_MS);
      else await new Promise((resolve) => setImmediate(resolve));
    }
    while (state.waiting.size > 0 && !ctx.stopped) {
      await flushGroup(ctx, state, [...state.waiting.keys()].slice(0, batchMax));
    }
  })().finally(() => {
    state.flushLoop = undefined;
    if (state.waiting.size > 0 && !ctx.stopped) scheduleFlush(ctx, state);
  });
}

/** Sleeps `ms`, or until woken (a full group, or stop). */
function gather(state: BatchState, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      state.wakeGather = undefined;
      resolve();
    }
    state.wakeGather = done;
  });
}

/** Signs one group; its waiters hear the send's outcome, or what became of rows another claim took. */
async function flushGroup(ctx: MinterContext, state: BatchState, ids: string[]): Promise<void> {
  const groupWaiters = new Map<string, Waiter[]>();
  for (const id of ids) {
    groupWaiters.set(id, state.waiting.get(id) ?? []);
    state.waiting.delete(id);
  }
  try {
    const batch = await claimAndSign(ctx, { onlyIds: ids });
    const claimed = new Set(batch?.mintIds ?? []);
    if (batch) {
      void enqueueBroadcast(ctx, batch, (result) => {
        const answer = submissionAfterSend(batch, result);
        for (const id of batch.mintIds) {
          for (const waiter of groupWaiters.get(id) ?? []) waiter(answer);
        }
      }).catch((error: unknown) => ctx.log.warn({ error: shortError(error) }, 'recording a broadcast failed'));
    }
    await settleUnclaimed(
      ctx,
      ids.filter((id) => !claimed.has(id)),
      groupWaiters,
    );
  } catch (error) {
    // Nothing was committed: the rows are still `pending` and the reward processor re-drives them.
    ctx.log.error({ error: shortError(error), rewards: ids.length }, 'mint batch failed before commit');
    for (const waiters of groupWaiters.values()) for (const waiter of waiters) waiter({ status: 'pending' });
  }
}

/** Answers waiters whose rows this batcher did not claim (another pass or process took them). */
async function settleUnclaimed(ctx: MinterContext, ids: string[], waiters: Map<string, Waiter[]>): Promise<void> {
  if (ids.length === 0) return;
  const rows = await ctx.db
    .selectFrom('reward_mints')
    .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .select([
      'reward_mints.id',
      'reward_mints.status',
      'reward_mints.last_error',
      'chain_txs.current_hash',
      'chain_txs.status as tx_status',
    ])
    .where('reward_mints.id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const id of ids) {
    const row = byId.get(id);
    let result: MintSubmission | Error;
    if (!row) result = new Error(`no reward_mints row ${id}`);
    else if (row.status === 'failed') result = new Error(`reward ${id} failed: ${row.last_error ?? 'unknown error'}`);
    // A batch still `signed` was never taken by the node: no hash to show yet.
    else if (row.status === 'pending' || !row.current_hash || row.tx_status === 'signed')
      result = { status: 'pending' };
    else result = { status: row.status, transactionHash: row.current_hash as Hex };
    for (const waiter of waiters.get(id) ?? []) waiter(result);
  }
}
