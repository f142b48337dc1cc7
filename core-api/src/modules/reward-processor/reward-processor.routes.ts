import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Minter } from '../../chain/minter.types.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';

export interface RewardProcessorRouterDeps {
  minter: Minter;
  logger: Logger;
  clock: Clock;
  /** Guards the manual trigger: it signs transactions, so only operators may pull it (docs/decisions.md). */
  adminToken: string;
}

const txHash = z.string().regex(/^0x[0-9a-f]{64}$/);

/** `GET /health` of the reward processor's host. */
const workerHealthSchema = z.object({
  status: z.literal('healthy'),
  worker: z.literal('reward-processor'),
  timestamp: z.iso.datetime(),
});

/** `POST /process-pending`: what one pass of the minter did (minter.types.ts ProcessPendingResult). */
const processPendingResponseSchema = z.object({
  success: z.literal(true),
  claimed: z.number().int().describe('Reward rows picked up from `pending`'),
  batches: z.number().int().describe('`mintBatch` transactions sent'),
  transactionHashes: z.array(txHash),
  confirmedTransactions: z.number().int().describe('Transactions whose receipts were recorded in this pass'),
  requeued: z.number().int().describe('Reward rows put back to `pending` after a failed or reverted transaction'),
  replaced: z.number().int().describe('Stuck transactions re-signed with higher fees'),
});

/** `GET /queue`: the reward table by status and the minter's signer and nonces (minter.types.ts QueueStatus). */
const queueStatusResponseSchema = z.object({
  success: z.literal(true),
  pending: z.number().int(),
  submitted: z.number().int(),
  confirmed: z.number().int(),
  failed: z.number().int(),
  oldestPendingAt: z.iso.datetime().nullable(),
  openTransactions: z.number().int(),
  signer: z.string(),
  nextNonce: z.number().int().nullable().describe('Next nonce the minter will use'),
  confirmedNonce: z.number().int().nullable().describe("The chain's latest confirmed nonce"),
});

/** The reward processor's host (spec 4.12): health, a manual re-drive of pending rewards, and the queue. */
export function rewardProcessorRoutes(deps: RewardProcessorRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      summary: "The reward processor's own health",
      tags: ['reward-processor'],
      responses: { 200: { description: 'Healthy', schema: workerHealthSchema } },
      handle: () => ({ status: 'healthy', worker: 'reward-processor', timestamp: deps.clock.now().toISOString() }),
    }),
    defineRoute({
      method: 'post',
      path: '/process-pending',
      summary: 'Mint the pending rewards now (one pass of the scheduled job)',
      description: 'Signs transactions, so it needs the operator token.',
      tags: ['reward-processor'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      responses: {
        200: { description: 'What the pass did', schema: processPendingResponseSchema },
        401: failure('Missing or wrong admin token'),
      },
      handle: async () => {
        const result = await deps.minter.processPending();
        if (result.claimed > 0 || result.requeued > 0 || result.replaced > 0) {
          deps.logger.info({ ...result }, 'process-pending triggered over HTTP');
        }
        return { success: true, ...result };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/queue',
      summary: 'Rewards by status, the oldest pending one, open transactions and the signer nonces',
      tags: ['reward-processor'],
      responses: { 200: { description: 'Queue status', schema: queueStatusResponseSchema } },
      handle: async () => ({ success: true, ...(await deps.minter.queueStatus()) }),
    }),
  ];
}
