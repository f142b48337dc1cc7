import { AppError } from '@pts/shared';
import type { Logger } from 'pino';
import type { SignerLock } from './minter.ts';
import type { Minter } from './minter.types.ts';

export interface ElectedMinter extends Minter {
  /** Whether this process currently holds the signer lock and so signs. */
  isLeader(): boolean;
}

/**
 * Exactly one process signs with a minter key (ARCHITECTURE §3). The process that holds the signer lock
 * is the leader: it signs its own requests' rewards at once (group commit) and sweeps rows other replicas
 * committed. A follower commits reward rows and answers `pending`; it asks for the lock again every
 * `retryMs`, so when the leader goes away another replica takes over.
 */
export function createElectedMinter(options: {
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
}): ElectedMinter & { elect(): Promise<boolean> } {
  const { minter, logger } = options;
  let lock: SignerLock | null = null;
  let retryTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const elect = async (): Promise<boolean> => {
    if (lock || stopped) return lock !== null;
    const acquired = await options.acquireLock();
    if (acquired && options.beforeSigning) {
      try {
        lock = acquired;
        await options.beforeSigning();
      } catch (error) {
        logger.warn({ err: error }, 'reconciling before signing failed; the periodic pass will retry');
      }
    }
    lock = acquired;
    if (lock) {
      logger.info('this process holds the minter signer lock: it signs reward mints');
      if (retryTimer) clearInterval(retryTimer);
      retryTimer = undefined;
      minter.start();
    }
    return lock !== null;
  };

  return {
    elect,
    isLeader: () => lock !== null,
    async submit(mintId, submitOptions) {
      if (!lock) return { status: 'pending' };
      return minter.submit(mintId, submitOptions);
    },
    beginInline: async () => (lock ? minter.beginInline() : undefined),
    // A follower's reversals wait, committed `pending`, for the leader's pass (its poll or process-pending).
    reverse: async (ids, reverseOptions) => (lock ? minter.reverse(ids, reverseOptions) : undefined),
    async processPending() {
      if (!lock) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'This replica does not hold the minter signer lock; call process-pending on the replica that does',
          { reason: 'not_minter_leader' },
          { retryAfter: 15 },
        );
      }
      return minter.processPending();
    },
    queueStatus: () => minter.queueStatus(),
    mintingState: () => ({ ...minter.mintingState(), signer: lock !== null }),
    start() {
      if (stopped) return;
      void elect().then((leader) => {
        if (leader || stopped) return;
        logger.warn('another process holds the minter signer lock: this replica hands rewards to it');
        retryTimer = setInterval(() => {
          elect().catch((error: unknown) => logger.warn({ err: error }, 'minter election failed'));
        }, options.retryMs ?? 15_000);
        retryTimer.unref();
      });
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearInterval(retryTimer);
      await minter.stop();
      await lock?.release();
      lock = null;
    },
  };
}
