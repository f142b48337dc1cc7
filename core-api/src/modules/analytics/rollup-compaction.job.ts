import type { Logger } from 'pino';
import type { compactBrandRollups } from './brand-rollups.ts';

export interface RollupCompactionJob {
  stop(): Promise<void>;
}

/**
 * Folds the brand rollups' fresh rows every `intervalSeconds` (docs/ledger.md, "Brand rollups"). A pass still
 * running when the next is due is not stacked; the stop waits for it. A failed pass is logged and retried at
 * the next tick: readers stay exact without it.
 */
export function startRollupCompactionJob(options: {
  /** One compaction pass (`compactBrandRollups` over the process's database). */
  compact: () => ReturnType<typeof compactBrandRollups>;
  intervalSeconds: number;
  logger: Logger;
}): RollupCompactionJob {
  const log = options.logger.child({ component: 'rollup-compaction' });
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = (async () => {
      try {
        const folded = await options.compact();
        if (Object.values(folded).some((rows) => rows > 0)) log.debug(folded, 'brand rollups compacted');
      } catch (error) {
        log.warn({ err: error }, 'brand rollup compaction failed; the next pass retries');
      } finally {
        running = undefined;
      }
    })();
  }, options.intervalSeconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
