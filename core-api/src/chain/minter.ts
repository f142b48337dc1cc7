import { sql } from 'kysely';
import type { Address } from 'viem';
import type { Database, DatabaseKind } from '../db/database.ts';
import { countOpenTxs } from './chain-txs.repository.ts';
import { createBatcher } from './mint/batcher.ts';
import { enqueueBroadcast, submissionAfterSend } from './mint/broadcast.ts';
import { createMinterContext, type MinterContext, type MinterDeps } from './mint/context.ts';
import { beginInline } from './mint/inline.ts';
import { ensureResentBeforeSigning } from './mint/resend.ts';
import { driveReversals, reverseAndWait } from './mint/reverse.ts';
import { claimAndSign, type SignedBatch } from './mint/sign.ts';
import { createTracker } from './mint/track.ts';
import type { Minter, MintSubmission, ProcessPendingResult, QueueStatus } from './minter.types.ts';
import { shortError } from './tx-sender.ts';

export type { ConfirmedMint, MintConfirmation, MinterConfig, MinterDeps } from './mint/context.ts';
export { mintBatchGasLimit } from './mint/context.ts';

/** Bounds one processPending pass so a flood of pending rows cannot keep the reward processor busy forever. */
const MAX_BATCHES_PER_PASS = 50;
/** Pending rows younger than this belong to a request that is about to flush them itself. */
const SWEEP_AFTER_MS = 2_000;

/**
 * Signs and sends up to MAX_BATCHES_PER_PASS batches of pending rows (only never-tried rows older than
 * `fresh.before` when given), telling waiters of their rows how the send went. The batches signed.
 */
async function mintPendingRows(
  ctx: MinterContext,
  settle: (id: string, submission: MintSubmission) => void,
  fresh?: { before: Date },
): Promise<SignedBatch[]> {
  const batches: SignedBatch[] = [];
  for (let pass = 0; pass < MAX_BATCHES_PER_PASS && !ctx.stopped; pass++) {
    const batch = await claimAndSign(ctx, fresh ? { fresh } : {});
    if (!batch) break;
    batches.push(batch);
    await enqueueBroadcast(ctx, batch, (sent) => {
      for (const id of batch.mintIds) settle(id, submissionAfterSend(batch, sent));
    });
  }
  return batches;
}

/**
 * The reversal outbox's own step (mint/reverse.ts), after the mint pass: open rows settled or put back,
 * pending ones signed and sent. With no reversal pending it signs nothing and takes no nonce; a failure is
 * logged and never changes the mint pass's result.
 */
function driveReversalsStep(ctx: MinterContext): Promise<void> {
  return driveReversals(ctx).catch((error: unknown) => ctx.log.warn({ error: shortError(error) }, 'reversals failed'));
}

/**
 * One full pass: receipts tracked (confirmed, re-queued, replaced), pending rows minted, then the reversal
 * outbox as a step of its own. The result counts the mint pass and the tracking only.
 */
async function processPending(
  ctx: MinterContext,
  tracker: ReturnType<typeof createTracker>,
  settle: (id: string, submission: MintSubmission) => void,
): Promise<ProcessPendingResult> {
  const tracked = await tracker.track();
  const batches = await mintPendingRows(ctx, settle);
  await driveReversalsStep(ctx);
  await countByStatus(ctx);
  return {
    claimed: batches.reduce((sum, batch) => sum + batch.mintIds.length, 0),
    batches: batches.length,
    transactionHashes: batches.map((batch) => batch.hash),
    confirmedTransactions: tracked.confirmedTransactions,
    requeued: tracked.requeued,
    replaced: tracked.replaced,
  };
}

async function countByStatus(
  ctx: MinterContext,
): Promise<Pick<QueueStatus, 'pending' | 'submitted' | 'confirmed' | 'failed'>> {
  const rows = await ctx.db
    .selectFrom('reward_mints')
    .select(['status', (eb) => eb.fn.countAll().as('count')])
    .groupBy('status')
    .execute();
  const counts = { pending: 0, submitted: 0, confirmed: 0, failed: 0 };
  for (const row of rows) counts[row.status] = Number(row.count);
  for (const [status, count] of Object.entries(counts)) ctx.metrics.rewardsByStatus.set({ status }, count);
  return counts;
}

async function readQueueStatus(ctx: MinterContext): Promise<QueueStatus> {
  const { db, publicClient, account, sender } = ctx;
  const [counts, oldest, open, confirmedNonce, next] = await Promise.all([
    countByStatus(ctx),
    db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.min('created_at').as('oldest'))
      .where('status', '=', 'pending')
      .executeTakeFirst(),
    countOpenTxs(db, ctx.chainId, ctx.signer),
    publicClient.getTransactionCount({ address: account.address, blockTag: 'latest' }).catch(() => null),
    sender.peekNonce() === undefined ? sender.readNonce().catch(() => null) : Promise.resolve(sender.peekNonce()!),
  ]);
  if (confirmedNonce !== null && next !== null) ctx.metrics.nonceLag.set(Math.max(Number(next) - confirmedNonce, 0));
  return {
    ...counts,
    oldestPendingAt: oldest?.oldest ? new Date(oldest.oldest).toISOString() : null,
    openTransactions: open,
    signer: account.address,
    nextNonce: next === null ? null : Number(next),
    confirmedNonce,
  };
}

/**
 * The reward minter: an outbox of `reward_mints` rows turned into `mintBatch` transactions by one batcher
 * per signer (see docs/chain.md for the states and the crash-safety argument). Each step is an action of
 * its own in chain/mint/ (sign, broadcast, track, replace, gap, confirm, inline, batcher); this composes them.
 */
export function createMinter(deps: MinterDeps): Minter {
  const ctx = createMinterContext(deps);
  const { config, log } = ctx;
  const defaultWaitMs = config.PTS_MINT_WAIT_MS ?? 10_000;
  const batcher = createBatcher(ctx);
  const tracker = createTracker(ctx, { wedgedAfterSeconds: deps.wedgedAfterSeconds });
  let pollTimer: NodeJS.Timeout | undefined;

  let sweeping: Promise<void> | undefined;
  /**
   * Mints rows other processes committed (replicas that do not hold the signer lock hand their rewards over
   * this way), a few seconds after they were written; then the reversal outbox.
   */
  function sweepFresh(): Promise<void> {
    sweeping ??= mintPendingRows(ctx, batcher.settle, {
      before: new Date(ctx.clock.now().getTime() - SWEEP_AFTER_MS),
    })
      .then(() => driveReversalsStep(ctx))
      .finally(() => {
        sweeping = undefined;
      });
    return sweeping;
  }

  return {
    submit: (mintId, options) => batcher.submit(mintId, options?.waitMs ?? defaultWaitMs),
    reverse: (ids, options) => reverseAndWait(ctx, tracker, ids, options?.waitMs ?? defaultWaitMs),
    beginInline: () => beginInline(ctx, defaultWaitMs),
    processPending: () => processPending(ctx, tracker, batcher.settle),

    mintingState: () => tracker.mintingState(),
    queueStatus: () => readQueueStatus(ctx),

    start() {
      if (pollTimer || ctx.stopped) return;
      // A new leader first sends what the previous one left open, in nonce order, before any batch of its own.
      ctx.sender
        .withSigningLock(() => ensureResentBeforeSigning(ctx))
        .catch((error: unknown) => log.warn({ error: shortError(error) }, 'sending open transactions failed'));
      pollTimer = setInterval(() => {
        tracker.track().catch((error: unknown) => log.warn({ error: shortError(error) }, 'receipt tracking failed'));
        sweepFresh().catch((error: unknown) => log.warn({ error: shortError(error) }, 'pending sweep failed'));
      }, config.PTS_RECEIPT_POLL_MS);
      pollTimer.unref();
    },

    async stop() {
      ctx.stopped = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      await batcher.stop();
      await tracker.idle();
      await sweeping?.catch(() => undefined);
      await ctx.sender.drained();
      await ctx.marker.drained();
      // Rows still waiting are committed `pending`; the next start re-drives them.
      batcher.dismiss();
    },
  };
}

export interface SignerLock {
  release(): Promise<void>;
}

/**
 * Elects the one process allowed to sign with `signer` on `chainId`: on PostgreSQL a session advisory lock
 * held on a dedicated pooled connection until `release()`; resolves `null` when another process holds it.
 * PGlite is embedded in a single process, so there it always succeeds. The unique (chain_id, signer, nonce)
 * key on chain_txs stays as the second line of defence if the lock's connection is lost.
 */
export function acquireSignerLock(options: {
  db: Database;
  kind: DatabaseKind;
  chainId: number;
  signer: Address;
}): Promise<SignerLock | null> {
  if (options.kind === 'pglite') return Promise.resolve({ release: async () => {} });
  const key = `pts-minter:${options.chainId}:${options.signer.toLowerCase()}`;
  return new Promise((resolve, reject) => {
    let releaseConnection: () => void = () => {};
    const released = new Promise<void>((done) => {
      releaseConnection = done;
    });
    const session = options.db.connection().execute(async (connection) => {
      const { rows } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS locked`.execute(connection);
      if (!rows[0]?.locked) {
        resolve(null);
        return;
      }
      resolve({
        release: async () => {
          releaseConnection();
          await session;
        },
      });
      await released;
      await sql`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(connection);
    });
    session.catch(reject);
  });
}
