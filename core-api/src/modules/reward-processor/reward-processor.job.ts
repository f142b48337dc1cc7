import cron from 'node-cron';
import type { Logger } from 'pino';
import type { Minter } from '../../chain/minter.types.ts';

export interface RewardProcessorJobOptions {
  minter: Minter;
  /** node-cron expression; the spec's processor runs every minute (`* * * * *`). */
  cronExpression: string;
  logger: Logger;
}

export interface RewardProcessorJob {
  stop(): Promise<void>;
}

/** Schedules `minter.processPending()`; a run still going when the next is due is skipped, not stacked. */
export function startRewardProcessorJob(options: RewardProcessorJobOptions): RewardProcessorJob {
  const { minter, cronExpression, logger } = options;
  if (!cron.validate(cronExpression))
    throw new Error(`PTS_REWARD_PROCESSOR_CRON is not a valid cron expression: ${cronExpression}`);
  const log = logger.child({ component: 'reward-processor' });
  let running: Promise<void> | undefined;

  const task = cron.schedule(
    cronExpression,
    async () => {
      running = (async () => {
        try {
          const result = await minter.processPending();
          const busy =
            result.claimed > 0 || result.requeued > 0 || result.replaced > 0 || result.confirmedTransactions > 0;
          if (busy) log.info({ ...result }, 'reward processor pass');
          else log.debug('reward processor pass: nothing to do');
        } catch (error) {
          // A replica that does not sign (another holds the minter lock) has nothing to process: not an error.
          if ((error as { details?: { reason?: string } }).details?.reason === 'not_minter_leader') {
            log.debug('reward processor pass skipped: another process signs');
          } else {
            log.error({ err: error }, 'reward processor pass failed');
          }
        }
      })();
      await running;
    },
    {
      name: 'reward-processor',
      noOverlap: true,
      unref: true,
      // node-cron prints coloured console warnings (missed runs, overlaps) unless given a logger.
      logger: {
        info: (message) => log.debug(message),
        warn: (message) => log.warn(message),
        error: (message, err) => log.error({ err: err ?? message }, 'node-cron error'),
        debug: (message) => log.trace(typeof message === 'string' ? message : message.message),
      },
    },
  );

  return {
    stop: async () => {
      await task.destroy();
      await running;
    },
  };
}
