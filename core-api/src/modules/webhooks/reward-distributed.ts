import type { ConfirmedMint, MintConfirmation } from '../../chain/minter.ts';
import type { Database } from '../../db/database.ts';
import { type EnqueueWebhookInput, enqueueWebhooks } from './webhooks.outbox.ts';

/**
 * Queues the brand's `reward.distributed` notification (spec §6 `pts_distributed` fields) for rewards earned
 * by events, in the transaction that records their mint as confirmed: the notice carries the real
 * transaction hash, and exists exactly when the confirmation does. Purchases notify `payment.completed`.
 */
export async function notifyRewardsDistributed(
  trx: Database,
  mints: ConfirmedMint[],
  confirmation: MintConfirmation,
): Promise<void> {
  const eventIds = mints.flatMap((mint) => (mint.eventId ? [mint.eventId] : []));
  if (eventIds.length === 0) return;
  const rows = await trx
    .selectFrom('events')
    .innerJoin('users', 'users.email', 'events.user_email')
    .select(['events.id', 'events.event_type', 'events.user_email', 'events.created_at', 'users.id as user_id'])
    .where('events.id', 'in', eventIds)
    .execute();
  const byEvent = new Map(rows.map((row) => [row.id, row]));
  const inputs: EnqueueWebhookInput[] = [];
  for (const mint of mints) {
    const event = mint.eventId ? byEvent.get(mint.eventId) : undefined;
    if (!event) continue;
    inputs.push({
      brandId: mint.brandId,
      type: 'reward.distributed',
      data: {
        event: 'pts_distributed',
        brandId: mint.brandId,
        userId: String(event.user_id),
        email: event.user_email,
        walletAddress: mint.walletAddress,
        ptsAmount: Number(mint.amount),
        transactionHash: mint.transactionHash,
        confirmedBy: mint.confirmedBy,
        timestamp: event.created_at.getTime(),
        eventId: event.id,
        eventType: event.event_type,
      },
      at: confirmation.at,
    });
  }
  await enqueueWebhooks(trx, inputs);
}
