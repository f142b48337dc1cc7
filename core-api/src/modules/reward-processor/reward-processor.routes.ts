import type { Clock } from '@pts/shared';
import { Router } from 'express';
import type { Logger } from 'pino';
import type { Minter } from '../../chain/minter.types.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';

export interface RewardProcessorRouterDeps {
  minter: Minter;
  logger: Logger;
  clock: Clock;
  /** Guards the manual trigger: it signs transactions, so only operators may pull it (docs/decisions.md). */
  adminToken: string;
}

/** The reward processor's host (spec 4.12): health, a manual re-drive of pending rewards, and the queue. */
export function createRewardProcessorRouter(deps: RewardProcessorRouterDeps): Router {
  const router = Router();

  router.get('/health', (_req, res) => {
    res.json({ status: 'healthy', worker: 'reward-processor', timestamp: deps.clock.now().toISOString() });
  });

  router.post('/process-pending', requireAdminToken(deps.adminToken), async (_req, res) => {
    const result = await deps.minter.processPending();
    if (result.claimed > 0 || result.requeued > 0 || result.replaced > 0) {
      deps.logger.info({ ...result }, 'process-pending triggered over HTTP');
    }
    res.json({ success: true, ...result });
  });

  router.get('/queue', async (_req, res) => {
    res.json({ success: true, ...(await deps.minter.queueStatus()) });
  });

  return router;
}
