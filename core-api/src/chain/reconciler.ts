import type { LedgerReconciliation } from '@pts/shared';
import {
  createReconcilerContext,
  type ReconcileResult,
  type ReconcilerContext,
  type ReconcilerDeps,
  shortError,
} from './reconcile/context.ts';
import { reconcilePass } from './reconcile/pass.ts';

// The chain and the ledger agree: every reward the ledger calls `confirmed` is in a mined transaction the
// chain still has. They can part when the chain forgets blocks the ledger saw — a local anvil restarted from
// a state file older than the database, an L2 reorganizing a shallow confirmation away. The reconciler finds
// such transactions and puts them back in the minter's outbox (`chain_txs` → `signed`, their rewards →
// `submitted`), where the receipt tracker's rules take over: the same signed bytes are sent again (one
// nonce, so they can mine once at most), and only when another transaction consumed that nonce are the
// rewards re-queued into a new batch. So nothing is minted twice, and nothing confirmed stays missing.
// Each step is a function of chain/reconcile/ (context.ts: the shared state; pass.ts: one pass); this composes them.

export type { ReconcileResult, ReconcilerDeps } from './reconcile/context.ts';

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

/** Creates the reconciler for one minter signer on one chain. */
export function createChainReconciler(deps: ReconcilerDeps): ChainReconciler {
  const ctx = createReconcilerContext(deps);
  return {
    reconcile: (options) => reconcile(ctx, options),
    report: () => ctx.last,
    rollbackSeen: (reason) => rollbackSeen(ctx, reason),
    start() {
      if (ctx.timer || ctx.stopped || deps.intervalSeconds <= 0) return;
      ctx.timer = setInterval(() => {
        reconcile(ctx).catch((error: unknown) => ctx.log.warn({ error: shortError(error) }, 'reconciler pass failed'));
      }, deps.intervalSeconds * 1000);
      ctx.timer.unref();
    },
    async stop() {
      ctx.stopped = true;
      if (ctx.timer) clearInterval(ctx.timer);
      ctx.timer = undefined;
      await ctx.running?.catch(() => undefined);
    },
  };
}

/** One pass at a time; a caller arriving meanwhile shares it. A failed pass leaves the report `unknown`. */
function reconcile(ctx: ReconcilerContext, options: { repair?: boolean } = {}): Promise<ReconcileResult> {
  ctx.running ??= reconcilePass(ctx, options.repair ?? true)
    .catch((error: unknown) => {
      ctx.deps.metrics.reconcilerRuns.inc({ result: 'error' });
      ctx.last = { ...ctx.last, status: 'unknown', error: shortError(error) };
      throw error;
    })
    .finally(() => {
      ctx.running = undefined;
    });
  return ctx.running;
}

/** The chain went back: `drift` until a pass that starts after this one has compared them again. */
function rollbackSeen(ctx: ReconcilerContext, reason: string): void {
  if (ctx.stopped) return;
  ctx.rollbacks++;
  ctx.last = { ...ctx.last, status: 'drift', error: `the chain went back (${reason}); checking the ledger against it` };
  // A pass already running read the chain before the rollback: the next one must start after it.
  void (ctx.running ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => reconcile(ctx))
    .catch((error: unknown) => ctx.log.warn({ error: shortError(error) }, 'reconciler pass failed'));
}
