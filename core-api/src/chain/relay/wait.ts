import { AppError } from '@pts/shared';
import type { RelayTransaction } from '../relayer.types.ts';
import { errorReason } from '../tx-sender.ts';
import { FINAL, loadRelayRow, type RelayerContext, type RelayRow, toTransaction, UUID } from './context.ts';

// Waiting for a relay transaction to settle, without a database round trip per poll.

export interface WaitDeps {
  /** Subscribes to "this row settled" notices (no id: everyone); returns the unsubscribe. */
  listen(listener: (id?: string) => void): () => void;
  /** A tracking pass, throttled to one per PTS_RECEIPT_POLL_MS however many wait. */
  trackThrottled(): Promise<void>;
}

/** Sleeps up to `ms`, or until `wake` is called. */
function nap(ms: number, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      setWake(undefined);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    setWake(finish);
  });
}

/**
 * The row once final (or still queued), or as it stands at the deadline. The row is read again only when this
 * process settled it (told through `listen`) or, every tenth poll, in case another process did.
 */
export async function waitForRelay(
  ctx: RelayerContext,
  deps: WaitDeps,
  id: string,
  timeoutMs: number,
): Promise<RelayTransaction> {
  if (!UUID.test(id)) throw new AppError('NOT_FOUND', `No relay transaction ${id}`);
  const deadline = performance.now() + timeoutMs;
  let dirty = true;
  let polls = 0;
  let wake: (() => void) | undefined;
  const unlisten = deps.listen((changedId) => {
    if (changedId !== undefined && changedId !== id) return;
    dirty = true;
    wake?.();
  });
  try {
    let row: RelayRow | undefined;
    for (;;) {
      if (dirty || !row || performance.now() >= deadline) {
        dirty = false;
        row = await loadRelayRow(ctx, id);
        if (!row) throw new AppError('NOT_FOUND', `No relay transaction ${id}`);
      }
      if (FINAL.includes(row.status) || row.status === 'queued' || performance.now() >= deadline || ctx.stopped) {
        return toTransaction(row, ctx.account.address);
      }
      const remaining = deadline - performance.now();
      await nap(Math.min(ctx.config.PTS_RECEIPT_POLL_MS, Math.max(remaining, 0)), (next) => {
        wake = next;
      });
      if (dirty) continue;
      await deps
        .trackThrottled()
        .catch((error: unknown) => ctx.log.warn({ error: errorReason(error) }, 'receipt tracking failed'));
      if (++polls % 10 === 0) dirty = true;
    }
  } finally {
    unlisten();
  }
}
