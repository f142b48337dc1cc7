import { AppError } from '@pts/shared';
import type { Logger } from 'pino';
import type { SignerLock } from './minter.ts';
import type { Minter } from './minter.types.ts';

export interface ElectedMinter extends Minter {
  /** Whether this process currently holds the signer lock and so signs. */
  isLeader(): boolean;
}

/** What an elected minter is built from (createElectedMinter). */
export interface ElectedMinterOptions {
  minter: Minter;
  acquireLock: () => Promise<SignerLock | null>;
  logger: Logger;
  retryMs?: number;
  /**
   * Runs once this process holds the lock, before its minter starts tracking: the chain reconciler puts
   * confirmed transactions the chain lost back in the outbox first, so the tracker re-sends them instead of
   * burning their nonces as a gap. A failure is logged and does not stop the minter.
   */
  beforeSigning?: () => Promise<void>;
}

/** The election's shared state: the lock once held, the retry timer while a follower, and whether stopped. */
interface ElectionState {
  lock: SignerLock | null;
  retryTimer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/**
 * Exactly one process signs with a minter key (ARCHITECTURE §3). The process that holds the signer lock
 * is the leader: it signs its own requests' rewards at once (group commit) and sweeps rows other replicas
 * committed. A follower commits reward rows and answers `pending`; it asks for the lock again every
 * `retryMs`, so when the leader goes away another replica takes over.
 */
export function createElectedMinter(options: ElectedMinterOptions): ElectedMinter & { elect(): Promise<boolean> } {
  const { minter } = options;
  const state: ElectionState = { lock: null, retryTimer: undefined, stopped: false };
  return {
    elect: () => electSigner(options, state),
    isLeader: () => state.lock !== null,
    submit: async (mintId, submitOptions) =>
      state.lock ? minter.submit(mintId, submitOptions) : { status: 'pending' },
    beginInline: async () => (state.lock ? minter.beginInline() : undefined),
    // A follower's reversals wait, committed `pending`, for the leader's pass (its poll or process-pending).
    reverse: async (ids, reverseOptions) => (state.lock ? minter.reverse(ids, reverseOptions) : undefined),
    async processPending() {
      if (!state.lock) throw notMinterLeader();
      return minter.processPending();
    },
    queueStatus: () => minter.queueStatus(),
    mintingState: () => ({ ...minter.mintingState(), signer: state.lock !== null }),
    start: () => startElection(options, state),
    stop: () => stopElection(options, state),
  };
}

/** Asks for the signer lock once; on winning it, reconciles first (beforeSigning) and starts the minter. */
async function electSigner(options: ElectedMinterOptions, state: ElectionState): Promise<boolean> {
  if (state.lock || state.stopped) return state.lock !== null;
  const acquired = await options.acquireLock();
  if (acquired && options.beforeSigning) {
    try {
      state.lock = acquired;
      await options.beforeSigning();
    } catch (error) {
      options.logger.warn({ err: error }, 'reconciling before signing failed; the periodic pass will retry');
    }
  }
  state.lock = acquired;
  if (state.lock) {
    options.logger.info('this process holds the minter signer lock: it signs reward mints');
    if (state.retryTimer) clearInterval(state.retryTimer);
    state.retryTimer = undefined;
    options.minter.start();
  }
  return state.lock !== null;
}

/** Elects once; a follower asks again every `retryMs` until it leads or stops. */
function startElection(options: ElectedMinterOptions, state: ElectionState): void {
  if (state.stopped) return;
  const { logger } = options;
  void electSigner(options, state).then((leader) => {
    if (leader || state.stopped) return;
    logger.warn('another process holds the minter signer lock: this replica hands rewards to it');
    state.retryTimer = setInterval(() => {
      electSigner(options, state).catch((error: unknown) => logger.warn({ err: error }, 'minter election failed'));
    }, options.retryMs ?? 15_000);
    state.retryTimer.unref();
  });
}

/** Stops retrying, stops the minter and releases the lock. */
async function stopElection(options: ElectedMinterOptions, state: ElectionState): Promise<void> {
  state.stopped = true;
  if (state.retryTimer) clearInterval(state.retryTimer);
  await options.minter.stop();
  await state.lock?.release();
  state.lock = null;
}

/** A follower refuses process-pending: only the leader signs. */
function notMinterLeader(): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'This replica does not hold the minter signer lock; call process-pending on the replica that does',
    { reason: 'not_minter_leader' },
    { retryAfter: 15 },
  );
}
