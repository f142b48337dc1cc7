import cron from 'node-cron';
import type { Logger } from 'pino';
import type { TierService } from './tiers.service.ts';

export interface TierTurnJob {
  stop(): Promise<void>;
}

/**
 * The period's turn for VIP tiers (docs/tiers.md), on a node-cron schedule (`PTS_TIER_TURN_CRON`, daily at
 * 00:05 UTC by default) on every worker: each brand's run is claimed once across replicas in the database
 * (a lease), so however many workers tick, one judges each brand's members. A run still going is not stacked.
 */
export function startTierTurnJob(options: {
  tiers: Pick<TierService, 'runTurn'>;
  cronExpression: string;
  logger: Logger;
}): TierTurnJob {
  if (!cron.validate(options.cronExpression)) {
    throw new Error(`PTS_TIER_TURN_CRON is not a valid cron expression: ${options.cronExpression}`);
  }
  const log = options.logger.child({ component: 'tier-turn' });
  let running: Promise<void> | undefined;
  const task = cron.schedule(
    options.cronExpression,
    async () => {
      running = (async () => {
        try {
          const result = await options.tiers.runTurn();
          if (result.brands > 0) log.info(result, 'tier turn pass');
        } catch (error) {
          log.error({ err: error }, 'tier turn pass failed; the next tick retries (claims lapse after 15 minutes)');
        }
      })();
      await running;
    },
    {
      name: 'tier-turn',
      noOverlap: true,
      unref: true,
      timezone: 'Etc/UTC',
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
