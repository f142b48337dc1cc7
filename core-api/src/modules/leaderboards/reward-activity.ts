import { parsePlatformIdentity } from '@pts/shared';
import { sql } from 'kysely';
import type { ConfirmedMint, MintConfirmation } from '../../chain/minter.ts';
import type { Database } from '../../db/database.ts';
import { resolveAccountKeys } from '../accounts/accounts.service.ts';
import { advanceAchievements } from '../achievements/achievements.service.ts';
import { type DisplayNameInput, displayNameOf, saveDisplayNames } from '../display-names/display-names.ts';
import { type ActivityInput, recordActivities } from './activity.repository.ts';

const PLATFORM_NAME = /^[a-z0-9_-]{1,32}$/;

/** The event type chat bots send for a rewarded good-morning message (counts towards `good_morning_count`). */
export const GOOD_MORNING_EVENT_TYPE = 'good_morning';

/**
 * Where an event happened: `metadata.platform` when the caller said so (bots and the plugin do), else the
 * platform of a synthetic identity (`discord_…@`), else `web`.
 */
export function eventPlatform(identityKey: string, metadata: Record<string, unknown> | null | undefined): string {
  const declared = metadata?.platform;
  if (typeof declared === 'string' && PLATFORM_NAME.test(declared.toLowerCase())) return declared.toLowerCase();
  return parsePlatformIdentity(identityKey)?.platform ?? 'web';
}

/**
 * Logs rewards earned by events as `earned` activity (tokens earned and activity boards) and advances the
 * achievements they count towards, in the transaction that records their mint as confirmed: a reward counts on the boards exactly when it exists on chain.
 * Token purchases (no event) are not earnings and are left out.
 */
export async function recordRewardActivity(
  trx: Database,
  mints: ConfirmedMint[],
  confirmation: MintConfirmation,
): Promise<void> {
  const eventIds = mints.flatMap((mint) => (mint.eventId ? [mint.eventId] : []));
  if (eventIds.length === 0) return;
  const events = await trx
    .selectFrom('events')
    .select(['id', 'event_type', 'user_email', 'metadata', 'created_at'])
    .where('id', 'in', eventIds)
    .execute();
  const byId = new Map(events.map((event) => [event.id, event]));
  // Linked identities share one board entry and one set of achievements: the account's.
  const accounts = await resolveAccountKeys(
    trx,
    events.map((event) => event.user_email),
  );
  const activities: ActivityInput[] = [];
  const names: DisplayNameInput[] = [];
  for (const mint of mints) {
    const event = mint.eventId ? byId.get(mint.eventId) : undefined;
    if (!event) continue;
    const displayName = displayNameOf(event.metadata);
    if (displayName) {
      names.push({
        brandId: mint.brandId,
        accountKey: accounts.get(event.user_email) ?? event.user_email,
        displayName,
      });
    }
    activities.push({
      brandId: mint.brandId,
      accountKey: accounts.get(event.user_email) ?? event.user_email,
      platform: eventPlatform(event.user_email, event.metadata),
      kind: 'earned',
      amount: mint.amount,
      ref: mint.id,
      detail: { eventId: event.id, eventType: event.event_type, transactionHash: mint.transactionHash },
      occurredAt: event.created_at,
    });
  }
  const counted = await recordActivities(trx, activities, confirmation.at);
  // The name the user earned under, for the boards they now appear on.
  await saveDisplayNames(trx, names, confirmation.at);
  // Achievements follow the same confirmed rewards, once each (replays were filtered out above).
  await advanceAchievements(
    trx,
    counted.flatMap((activity) => [
      { brandId: activity.brandId, accountKey: activity.accountKey, type: 'tokens_earned', increment: activity.amount },
      { brandId: activity.brandId, accountKey: activity.accountKey, type: 'events_claimed', increment: 1n },
      ...(activity.detail?.eventType === GOOD_MORNING_EVENT_TYPE
        ? [{ brandId: activity.brandId, accountKey: activity.accountKey, type: 'good_morning_count', increment: 1n }]
        : []),
    ]),
    confirmation.at,
  );
}

/**
 * A reversal settled on chain takes what it burned (`taken`) off the tokens-earned boards, in the period of the
 * event it reverses, and off the `tokens_earned` achievement progress (an achievement once unlocked stays so).
 * The part owed as debt is not taken off: the member's next rewards pay it without being minted, so they
 * never reach the boards (docs/shop-program.md, "Refunds and reversals").
 */
export async function recordReversalActivity(trx: Database, reversalIds: string[], at: Date): Promise<void> {
  if (reversalIds.length === 0) return;
  const rows = await trx
    .selectFrom('reward_reversals as r')
    // A deduction names no event: it counts in the period it was made, for the member it names.
    .leftJoin('events as e', 'e.id', 'r.event_id')
    .select(['r.id', 'r.brand_id', 'r.taken', 'r.transaction_hash', 'r.event_id', 'r.user_email', 'e.metadata'])
    .select((eb) => eb.fn.coalesce('e.created_at', 'r.created_at').as('created_at'))
    .where('r.id', 'in', reversalIds)
    .where('r.taken', '>', 0n)
    .execute();
  if (rows.length === 0) return;
  const accounts = await resolveAccountKeys(
    trx,
    rows.map((row) => row.user_email),
  );
  const activities: ActivityInput[] = rows.map((row) => ({
    brandId: row.brand_id,
    accountKey: accounts.get(row.user_email) ?? row.user_email,
    platform: eventPlatform(row.user_email, row.metadata),
    kind: 'reversed',
    amount: BigInt(row.taken as bigint),
    ref: row.id,
    detail: { eventId: row.event_id, transactionHash: row.transaction_hash },
    occurredAt: row.created_at,
  }));
  const counted = await recordActivities(trx, activities, at);
  for (const activity of counted) {
    await trx
      .updateTable('achievement_progress')
      .set({ value: sql`greatest(value - ${activity.amount.toString()}::numeric, 0)`, updated_at: at })
      .where('brand_id', '=', activity.brandId)
      .where('user_key', '=', activity.accountKey)
      .where('type', '=', 'tokens_earned')
      .execute();
  }
}
