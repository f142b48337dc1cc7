import { AppError } from '@pts/shared';
import type { SignerLock } from '../minter.ts';
import { errorReason } from '../tx-sender.ts';
import type { RelayerContext, RelayerSenderDeps } from './context.ts';
import { recoverRelay, trackRelayOnce } from './track.ts';
import type { WaitDeps } from './wait.ts';

// The relayer sender's process state (its lock, its election, its tracking pass and poll timer) and the steps
// that share it; createRelayerSender (chain/relayer-sender.ts) hands one RelayerRun to each.

/** What one relayer sender holds across calls. */
export interface RelayerRun {
  /** Waiters of `waitFor`: told the id of each row that reached a final state (no id: everyone, at stop). */
  listeners: Set<(id?: string) => void>;
  /** The signer lock once held (without `acquireLock`, a lock that is always held). */
  lock: SignerLock | null | undefined;
  /** The election under way: concurrent first submits share it. */
  electing: Promise<SignerLock | null> | undefined;
  /** The tracking pass under way. */
  tracking: Promise<void> | undefined;
  pollTimer: NodeJS.Timeout | undefined;
  /** When the last tracking pass began (performance.now()). */
  lastTrackAt: number;
}

/** A fresh run: no lock yet unless the sender elects none. */
export function createRelayerRun(deps: Pick<RelayerSenderDeps, 'acquireLock'>): RelayerRun {
  return {
    listeners: new Set(),
    lock: deps.acquireLock ? undefined : { release: async () => {} },
    electing: undefined,
    tracking: undefined,
    pollTimer: undefined,
    lastTrackAt: Number.NEGATIVE_INFINITY,
  };
}

/** Tells every waiter that row `id` settled (no id: everyone). */
export function notifyRelayWaiters(run: RelayerRun, id?: string): void {
  for (const listener of [...run.listeners]) listener(id);
}

/** One election at a time: concurrent first submits share it (a second lock attempt would fail against our own). */
export async function ensureRelayerElected(
  deps: Pick<RelayerSenderDeps, 'acquireLock' | 'account'>,
  ctx: Pick<RelayerContext, 'log'>,
  run: RelayerRun,
): Promise<void> {
  if (run.lock) return;
  run.electing ??= deps.acquireLock!().finally(() => {
    run.electing = undefined;
  });
  const acquired = await run.electing;
  if (acquired && !run.lock) {
    run.lock = acquired;
    ctx.log.info('holding the relayer signer lock');
  }
  if (!run.lock) {
    throw new AppError('SERVICE_UNAVAILABLE', 'Another process signs with the relayer key; retry on that instance', {
      signer: deps.account.address,
    });
  }
}

/** One tracking pass at a time. */
export function trackRelay(ctx: RelayerContext, run: RelayerRun): Promise<void> {
  if (run.tracking) return run.tracking;
  run.lastTrackAt = performance.now();
  run.tracking = trackRelayOnce(ctx).finally(() => {
    run.tracking = undefined;
  });
  return run.tracking;
}

/** What `waitForRelay` needs of the run: its notices, and a tracking pass at most once per PTS_RECEIPT_POLL_MS. */
export function relayWaitDeps(ctx: RelayerContext, run: RelayerRun): WaitDeps {
  return {
    listen(listener) {
      run.listeners.add(listener);
      return () => run.listeners.delete(listener);
    },
    trackThrottled() {
      if (run.tracking) return run.tracking;
      if (performance.now() - run.lastTrackAt < ctx.config.PTS_RECEIPT_POLL_MS) return Promise.resolve();
      return trackRelay(ctx, run);
    },
  };
}

/** Finishes what a previous process left open, then tracks receipts every PTS_RECEIPT_POLL_MS. */
export function startRelayer(ctx: RelayerContext, run: RelayerRun): void {
  if (run.pollTimer || ctx.stopped) return;
  recoverRelay(ctx).catch((error: unknown) => ctx.log.warn({ error: errorReason(error) }, 'relay recovery failed'));
  run.pollTimer = setInterval(() => {
    trackRelay(ctx, run).catch((error: unknown) =>
      ctx.log.warn({ error: errorReason(error) }, 'receipt tracking failed'),
    );
  }, ctx.config.PTS_RECEIPT_POLL_MS);
  run.pollTimer.unref();
}

/** Stops polling, wakes every waiter, lets the pass and the sender drain, then releases the lock. */
export async function stopRelayer(ctx: RelayerContext, run: RelayerRun): Promise<void> {
  ctx.stopped = true;
  if (run.pollTimer) clearInterval(run.pollTimer);
  run.pollTimer = undefined;
  ctx.notify();
  await run.tracking?.catch(() => undefined);
  await ctx.sender.drained();
  await run.lock?.release();
}
