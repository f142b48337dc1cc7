import type { Database } from '../../db/database.ts';
import { findReversalsByIds } from '../reversals/reversals.repository.ts';
import { toReversalResponse } from '../reversals/reversals.service.ts';
import { type EnqueueWebhookInput, enqueueWebhooks } from './webhooks.outbox.ts';

/**
 * Queues the brand's `reward.reversed` notification for reversals settled on chain (taken and debt known), in
 * the transaction that records them: the notice exists exactly when the settlement does.
 */
export async function notifyRewardsReversed(trx: Database, reversalIds: string[], at: Date): Promise<void> {
  const rows = await findReversalsByIds(trx, reversalIds);
  const inputs: EnqueueWebhookInput[] = rows.map((row) => {
    const answer = toReversalResponse(row);
    return {
      brandId: row.brand_id,
      type: 'reward.reversed',
      data: {
        brandId: row.brand_id,
        reversalId: row.reversal_id,
        // `deduction`: pts taken back by hand (no event, a reason); `reversal`: of the event named.
        kind: row.kind,
        eventId: row.event_id,
        eventType: row.event_type,
        ...(row.kind === 'deduction' ? { reason: row.reason } : {}),
        email: row.user_email,
        walletAddress: row.wallet_address,
        requested: answer.requested,
        taken: answer.taken ?? 0,
        debt: answer.debt ?? 0,
        refunded: answer.refunded,
        transactionHash: row.transaction_hash,
        timestamp: new Date(row.created_at).getTime(),
      },
      at,
    };
  });
  await enqueueWebhooks(trx, inputs);
}
