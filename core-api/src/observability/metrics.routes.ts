import { Router } from 'express';
import type { Logger } from 'pino';
import type { MintStatus } from '../db/schema.ts';
import type { Metrics } from './metrics.ts';

/** Every reward status, so a status that drops to zero is reported as 0 rather than disappearing. */
const MINT_STATUSES: MintStatus[] = ['pending', 'submitted', 'confirmed', 'failed'];

/** How long a scrape waits for the database sample before serving the other metrics without it. */
const SAMPLE_TIMEOUT_MS = 2_000;

export interface MetricsRouterOptions {
  metrics: Metrics;
  /** Reward counts by status, read at every scrape. */
  sampleRewards: () => Promise<Record<string, number>>;
  logger?: Logger;
  sampleTimeoutMs?: number;
}

/** `GET /metrics` in the Prometheus text format. Refreshes the sampled gauges first. */
export function createMetricsRouter(options: MetricsRouterOptions): Router {
  const { metrics } = options;
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    await refreshRewardGauge(options);
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  return router;
}

async function refreshRewardGauge({ metrics, sampleRewards, logger, sampleTimeoutMs }: MetricsRouterOptions) {
  let timer: NodeJS.Timeout | undefined;
  try {
    const counts = await Promise.race([
      sampleRewards(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('sampling reward_mints timed out')),
          sampleTimeoutMs ?? SAMPLE_TIMEOUT_MS,
        );
      }),
    ]);
    metrics.rewardsByStatus.reset();
    for (const status of new Set([...MINT_STATUSES, ...Object.keys(counts)])) {
      metrics.rewardsByStatus.set({ status }, counts[status] ?? 0);
    }
  } catch (error) {
    // A database outage must not take the process metrics down with it: serve the rest, without stale counts.
    metrics.rewardsByStatus.reset();
    metrics.scrapeSampleFailures.inc();
    logger?.warn({ err: error }, 'could not sample reward_mints for /metrics');
  } finally {
    clearTimeout(timer);
  }
}
