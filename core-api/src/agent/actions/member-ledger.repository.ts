import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/** What one user (all identities of their account) did at one brand, from events and perk redemptions. */
export interface MemberLedger {
  /** Any event (accepted or rejected) or redemption at the brand: the user is known to it. */
  known: boolean;
  acceptedEvents: number;
  /** Sum of accepted events' rewards at this brand, in pts (minted or still queued). */
  totalEarned: bigint;
  lastEarnedAt: Date | null;
  byEventType: { eventType: string; count: number; amount: bigint }[];
  /** Confirmed redemptions at this brand. */
  redemptions: number;
  totalRedeemed: bigint;
  /** Redemptions sent but not yet mined (their cost is reserved). */
  pendingRedemptions: number;
  pendingRedeemed: bigint;
}

/**
 * Reads the ledger of `userKeys` (an account's identities) at `brandId`. Earnings are accepted events
 * (`events.reward_amount`), redemptions are `perk_redemptions` rows — both recorded by the real pipelines.
 */
export async function readMemberLedger(db: Database, brandId: string, userKeys: string[]): Promise<MemberLedger> {
  const [byType, rejectedEvent, redemptions] = await Promise.all([
    db
      .selectFrom('events')
      .select((eb) => [
        'event_type',
        eb.fn.countAll<string>().as('n'),
        eb.fn.sum<string>('reward_amount').as('amount'),
        eb.fn.max('created_at').as('last_at'),
      ])
      .where('brand_id', '=', brandId)
      .where('user_email', 'in', userKeys)
      .where('status', '=', 'accepted')
      .groupBy('event_type')
      .orderBy('event_type')
      .execute(),
    // Known by a rejected event alone (accepted ones are counted above): `events_user_brand_other_idx`.
    db
      .selectFrom('events')
      .select('id')
      .where('user_email', 'in', userKeys)
      .where('brand_id', '=', brandId)
      .where('status', '<>', 'accepted')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('perk_redemptions')
      .select((eb) => ['status', eb.fn.countAll<string>().as('n'), eb.fn.sum<string>('cost').as('amount')])
      .where('brand_id', '=', brandId)
      .where('user_key', 'in', userKeys)
      .where('status', 'in', ['confirmed', 'pending'])
      .groupBy('status')
      .execute(),
  ]);
  const types = byType.map((row) => ({
    eventType: row.event_type,
    count: Number(row.n),
    amount: BigInt(row.amount ?? 0),
    lastAt: row.last_at ? new Date(row.last_at) : null,
  }));
  const lastAt = types.reduce<Date | null>((max, t) => (t.lastAt && (!max || t.lastAt > max) ? t.lastAt : max), null);
  const confirmed = redemptions.find((row) => row.status === 'confirmed');
  const pending = redemptions.find((row) => row.status === 'pending');
  return {
    known: types.length > 0 || rejectedEvent !== undefined || redemptions.length > 0,
    acceptedEvents: types.reduce((sum, t) => sum + t.count, 0),
    totalEarned: types.reduce((sum, t) => sum + t.amount, 0n),
    lastEarnedAt: lastAt,
    byEventType: types.map(({ eventType, count, amount }) => ({ eventType, count, amount })),
    redemptions: Number(confirmed?.n ?? 0),
    totalRedeemed: BigInt(confirmed?.amount ?? 0),
    pendingRedemptions: Number(pending?.n ?? 0),
    pendingRedeemed: BigInt(pending?.amount ?? 0),
  };
}

/** Cost of the wallet's redemptions still pending: reserved, so not spendable (the redemption service's rule). */
export async function reservedByPendingRedemptions(db: Database, wallet: string): Promise<bigint> {
  const row = await db
    .selectFrom('perk_redemptions')
    .select((eb) => eb.fn.sum<string>('cost').as('amount'))
    .where('wallet_address', '=', wallet.toLowerCase())
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return BigInt(row?.amount ?? 0);
}

/**
 * The most expensive active, on-chain perk of the brand costing at most `budget` pts (ties: the oldest) that
 * the member (`userKeys`, their identities) may still redeem: not one they already hold the per-user maximum
 * of (pending or confirmed redemptions; `max_per_user` 0 = unlimited), which redeem_perk would refuse.
 */
export async function bestAffordablePerk(db: Database, brandId: string, budget: bigint, userKeys: string[]) {
  return db
    .selectFrom('perks')
    .select(['id', 'public_id', 'name', 'category', 'cost'])
    .where('brand_id', '=', brandId)
    .where('active', '=', true)
    .where('chain_status', '=', 'synced')
    .where('cost', '<=', budget)
    .where(
      sql<boolean>`(perks.max_per_user = 0 OR (
        SELECT count(*) FROM perk_redemptions r
         WHERE r.perk_id = perks.id AND r.user_key IN (${sql.join(userKeys)}) AND r.status IN ('pending', 'confirmed')
      ) < perks.max_per_user)`,
    )
    .orderBy('cost', 'desc')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Which of `brandIds` know any of `userKeys` (an event of any status, or a redemption): one round trip over
 * the member indexes, so a portfolio reads the ledgers of those brands only, not of every brand of a key.
 */
export async function brandsKnowing(db: Database, userKeys: string[], brandIds: string[]): Promise<Set<string>> {
  if (userKeys.length === 0 || brandIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('events')
    .select('brand_id')
    .where('user_email', 'in', userKeys)
    .where('status', '=', 'accepted')
    .where('brand_id', 'in', brandIds)
    .union(
      db
        .selectFrom('events')
        .select('brand_id')
        .where('user_email', 'in', userKeys)
        .where('status', '<>', 'accepted')
        .where('brand_id', 'in', brandIds),
    )
    .union(
      db
        .selectFrom('perk_redemptions')
        .select('brand_id')
        .where('user_key', 'in', userKeys)
        .where('brand_id', 'in', brandIds),
    )
    .execute();
  return new Set(rows.map((row) => row.brand_id));
}
