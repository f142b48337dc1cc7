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
  return (await readMemberLedgers(db, [brandId], userKeys)).get(brandId) as MemberLedger;
}

/**
 * readMemberLedger at each of `brandIds` in ONE statement (accepted events per brand and type, whether a
 * rejected event alone makes the member known, redemptions per brand and status), over the member indexes:
 * a portfolio or a route across ten brands costs one round trip, not thirty. Every brand gets an entry
 * (`known: false` where the member never came).
 */
export async function readMemberLedgers(
  db: Database,
  brandIds: string[],
  userKeys: string[],
): Promise<Map<string, MemberLedger>> {
  const ledgers = new Map<string, MemberLedger>();
  if (brandIds.length === 0) return ledgers;
  const known = new Set<string>();
  const types = new Map<string, { eventType: string; count: number; amount: bigint; lastAt: Date | null }[]>();
  const redemptions = new Map<string, Map<string, { n: number; amount: bigint }>>();
  if (userKeys.length > 0) {
    const result = await sql<{
      part: 'accepted' | 'other' | 'redeemed';
      brand_id: string;
      label: string | null;
      n: string | number;
      amount: string | number | null;
      last_at: Date | string | null;
    }>`
      SELECT 'accepted' AS part, brand_id, event_type AS label, count(*) AS n, sum(reward_amount) AS amount,
             max(created_at) AS last_at
        FROM events
       WHERE user_email IN (${sql.join(userKeys)}) AND brand_id IN (${sql.join(brandIds)}) AND status = 'accepted'
       GROUP BY brand_id, event_type
      UNION ALL
      SELECT 'other', brand_id, NULL, 0, NULL, NULL
        FROM (SELECT DISTINCT brand_id FROM events
               WHERE user_email IN (${sql.join(userKeys)}) AND brand_id IN (${sql.join(brandIds)})
                 AND status <> 'accepted') o
      UNION ALL
      SELECT 'redeemed', brand_id, status, count(*), sum(cost), NULL
        FROM perk_redemptions
       WHERE user_key IN (${sql.join(userKeys)}) AND brand_id IN (${sql.join(brandIds)})
         AND status IN ('confirmed', 'pending')
       GROUP BY brand_id, status`.execute(db);
    for (const row of result.rows) {
      known.add(row.brand_id);
      if (row.part === 'accepted') {
        const list = types.get(row.brand_id) ?? [];
        list.push({
          eventType: row.label ?? '',
          count: Number(row.n),
          amount: BigInt(row.amount ?? 0),
          lastAt: row.last_at ? new Date(row.last_at) : null,
        });
        types.set(row.brand_id, list);
      } else if (row.part === 'redeemed') {
        const byStatus = redemptions.get(row.brand_id) ?? new Map();
        byStatus.set(row.label ?? '', { n: Number(row.n), amount: BigInt(row.amount ?? 0) });
        redemptions.set(row.brand_id, byStatus);
      }
    }
  }
  for (const brandId of brandIds) {
    const list = (types.get(brandId) ?? []).sort((a, b) =>
      a.eventType < b.eventType ? -1 : a.eventType > b.eventType ? 1 : 0,
    );
    const lastAt = list.reduce<Date | null>((max, t) => (t.lastAt && (!max || t.lastAt > max) ? t.lastAt : max), null);
    const confirmed = redemptions.get(brandId)?.get('confirmed');
    const pending = redemptions.get(brandId)?.get('pending');
    ledgers.set(brandId, {
      known: known.has(brandId),
      acceptedEvents: list.reduce((sum, t) => sum + t.count, 0),
      totalEarned: list.reduce((sum, t) => sum + t.amount, 0n),
      lastEarnedAt: lastAt,
      byEventType: list.map(({ eventType, count, amount }) => ({ eventType, count, amount })),
      redemptions: confirmed?.n ?? 0,
      totalRedeemed: confirmed?.amount ?? 0n,
      pendingRedemptions: pending?.n ?? 0,
      pendingRedeemed: pending?.amount ?? 0n,
    });
  }
  return ledgers;
}

/**
 * At each of `brandIds`, the most expensive active, on-chain perk costing at most `budget` pts (ties: the
 * oldest) that the member (`userKeys`, their identities) may still redeem: not one they already hold the
 * per-user maximum of (pending or confirmed redemptions; `max_per_user` 0 = unlimited), which redeem_perk
 * would refuse. One statement for every brand; brands where none fits are absent.
 */
export async function bestAffordablePerks(db: Database, brandIds: string[], budget: bigint, userKeys: string[]) {
  const best = new Map<string, { id: bigint; public_id: string; name: string; category: string; cost: bigint }>();
  if (brandIds.length === 0 || userKeys.length === 0) return best;
  const rows = await db
    .selectFrom('perks')
    .distinctOn('brand_id')
    .select(['brand_id', 'id', 'public_id', 'name', 'category', 'cost'])
    .where('brand_id', 'in', brandIds)
    .where('active', '=', true)
    .where('chain_status', '=', 'synced')
    .where('cost', '<=', budget)
    .where(
      sql<boolean>`(perks.max_per_user = 0 OR (
        SELECT count(*) FROM perk_redemptions r
         WHERE r.perk_id = perks.id AND r.user_key IN (${sql.join(userKeys)}) AND r.status IN ('pending', 'confirmed')
      ) < perks.max_per_user)`,
    )
    .orderBy('brand_id')
    .orderBy('cost', 'desc')
    .orderBy('id')
    .execute();
  for (const row of rows) best.set(row.brand_id, row);
  return best;
}
