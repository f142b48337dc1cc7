import type { Member } from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/**
 * The member ledger (docs/ledger.md): what one member (every identity of their account) earned, has in
 * flight and redeemed at a brand. Each figure has ONE definition, read here and nowhere else:
 *
 * - `earned`: the rewards of the member's accepted events at the brand, whatever their mint state, less what
 *   reversals took back (`reversed`: refunds and corrections of events, and manual deductions naming no event,
 *   modules/reversals — burned or owed as debt); each type's amount is net of its events' reversals only;
 * - `pending`: the part of `earned` whose mint is queued or sent but not yet recorded as confirmed;
 * - `unminted`: the part of `earned` whose mint failed for good (an operator's matter, shown so the sums close);
 * - `confirmed`: `earned − pending − unminted`, the rewards recorded as minted — what the `pts_earned`
 *   leaderboards rank (they record a reward in the transaction that confirms its mint);
 * - `redeemed`: pts spent on confirmed perk redemptions at the brand; `redeeming`: redemptions sent, not mined.
 *
 * The spendable balance is the wallet's, not a brand's (one token): readWalletBalance (wallet-balance.ts).
 */
export interface MemberLedger {
  /** Any event (accepted or refused) or redemption at the brand: the member is known to it. */
  known: boolean;
  acceptedEvents: number;
  earned: bigint;
  /**
   * Pts reversals of the member's events and manual deductions took back (already off `earned`; a reversal also
   * off its event type's amount, a deduction off no type).
   */
  reversed: bigint;
  pending: bigint;
  unminted: bigint;
  confirmed: bigint;
  lastEarnedAt: Date | null;
  byEventType: { eventType: string; count: number; amount: bigint }[];
  /** Confirmed redemptions at the brand, and the pts they spent. */
  redemptions: number;
  redeemed: bigint;
  /** Redemptions sent but not yet mined (their cost is reserved in the wallet). */
  pendingRedemptions: number;
  redeeming: bigint;
}

/** The ledger of `member` (every identity of their account: modules/accounts resolveMember) at `brandId`. */
export async function readMemberLedger(db: Database, brandId: string, member: Member): Promise<MemberLedger> {
  return (await readMemberLedgers(db, [brandId], member)).get(brandId) as MemberLedger;
}

type LedgerRow = {
  part: 'accepted' | 'other' | 'redeemed' | 'minting' | 'reversed';
  brand_id: string;
  label: string | null;
  n: string | number;
  amount: string | number | null;
  last_at: Date | string | null;
};

/**
 * readMemberLedger at each of `brandIds` in ONE statement, over the member indexes: a portfolio or a route
 * across ten brands costs one round trip, not thirty. Mints not yet confirmed are found from the member's
 * wallets through the index of unconfirmed mints, so a busy member's confirmed history is never visited.
 * Every brand gets an entry (`known: false` where the member never came).
 */
export async function readMemberLedgers(
  db: Database,
  brandIds: string[],
  member: Member,
): Promise<Map<string, MemberLedger>> {
  const { identityKeys } = member;
  const ledgers = new Map<string, MemberLedger>();
  if (brandIds.length === 0) return ledgers;
  const rows = identityKeys.length === 0 ? [] : (await ledgerStatement(brandIds, identityKeys).execute(db)).rows;
  const known = new Set<string>();
  const types = new Map<string, { eventType: string; count: number; amount: bigint; lastAt: Date | null }[]>();
  const byStatus = new Map<string, Map<string, { n: number; amount: bigint }>>();
  const reversedOf = new Map<string, bigint>();
  for (const row of rows) {
    if (row.part !== 'reversed') continue;
    const key = `${row.brand_id}\u0000${row.label ?? ''}`;
    reversedOf.set(key, (reversedOf.get(key) ?? 0n) + BigInt(row.amount ?? 0));
  }
  for (const row of rows) {
    if (row.part === 'reversed') continue;
    if (row.part !== 'minting') known.add(row.brand_id);
    if (row.part === 'accepted') {
      const list = types.get(row.brand_id) ?? [];
      list.push({
        eventType: row.label ?? '',
        count: Number(row.n),
        amount: BigInt(row.amount ?? 0) - (reversedOf.get(`${row.brand_id}\u0000${row.label ?? ''}`) ?? 0n),
        lastAt: row.last_at ? new Date(row.last_at) : null,
      });
      types.set(row.brand_id, list);
    } else if (row.part === 'redeemed' || row.part === 'minting') {
      const statuses = byStatus.get(`${row.part}:${row.brand_id}`) ?? new Map();
      statuses.set(row.label ?? '', { n: Number(row.n), amount: BigInt(row.amount ?? 0) });
      byStatus.set(`${row.part}:${row.brand_id}`, statuses);
    }
  }
  for (const brandId of brandIds) {
    const list = (types.get(brandId) ?? []).sort((a, b) =>
      a.eventType < b.eventType ? -1 : a.eventType > b.eventType ? 1 : 0,
    );
    const lastAt = list.reduce<Date | null>((max, t) => (t.lastAt && (!max || t.lastAt > max) ? t.lastAt : max), null);
    const redeemed = byStatus.get(`redeemed:${brandId}`);
    const minting = byStatus.get(`minting:${brandId}`);
    const amountOf = (status: string) => minting?.get(status)?.amount ?? 0n;
    // A deduction names no event (its label is empty): it comes off `earned` but off no event type.
    const deducted = reversedOf.get(`${brandId}\u0000`) ?? 0n;
    const earned = list.reduce((sum, t) => sum + t.amount, 0n) - deducted;
    const reversed = [...reversedOf.entries()]
      .filter(([key]) => key.startsWith(`${brandId}\u0000`))
      .reduce((sum, [, amount]) => sum + amount, 0n);
    const pending = amountOf('pending') + amountOf('submitted');
    const unminted = amountOf('failed');
    ledgers.set(brandId, {
      known: known.has(brandId),
      acceptedEvents: list.reduce((sum, t) => sum + t.count, 0),
      earned,
      reversed,
      pending,
      unminted,
      confirmed: earned - pending - unminted,
      lastEarnedAt: lastAt,
      byEventType: list.map(({ eventType, count, amount }) => ({ eventType, count, amount })),
      redemptions: redeemed?.get('confirmed')?.n ?? 0,
      redeemed: redeemed?.get('confirmed')?.amount ?? 0n,
      pendingRedemptions: redeemed?.get('pending')?.n ?? 0,
      redeeming: redeemed?.get('pending')?.amount ?? 0n,
    });
  }
  return ledgers;
}

/**
 * Accepted events per brand and type; whether a refused event alone makes the member known; redemptions
 * per brand and status; the member's unconfirmed reward mints per brand and status (an event's mint is
 * created with it, for its reward, so these amounts are parts of `earned`).
 */
function ledgerStatement(brandIds: string[], identityKeys: readonly string[]) {
  const keys = sql.join(identityKeys);
  const brands = sql.join(brandIds);
  // Each type's amount is read net of what reversals of its events took back.
  return sql<LedgerRow>`
    SELECT 'reversed' AS part, r.brand_id, e.event_type AS label, count(*) AS n, sum(r.pts) AS amount, NULL AS last_at
      FROM reward_reversals r LEFT JOIN events e ON e.id = r.event_id
     WHERE r.user_email IN (${keys}) AND r.brand_id IN (${brands})
     GROUP BY r.brand_id, e.event_type
    UNION ALL
    SELECT 'accepted', brand_id, event_type, count(*), sum(reward_amount), max(created_at)
      FROM events
     WHERE user_email IN (${keys}) AND brand_id IN (${brands}) AND status = 'accepted'
     GROUP BY brand_id, event_type
    UNION ALL
    SELECT 'other', brand_id, NULL, 0, NULL, NULL
      FROM (SELECT DISTINCT brand_id FROM events
             WHERE user_email IN (${keys}) AND brand_id IN (${brands}) AND status <> 'accepted') o
    UNION ALL
    SELECT 'redeemed', brand_id, status, count(*), sum(cost), NULL
      FROM perk_redemptions
     WHERE user_key IN (${keys}) AND brand_id IN (${brands}) AND status IN ('confirmed', 'pending')
     GROUP BY brand_id, status
    UNION ALL
    SELECT 'minting', m.brand_id, m.status, count(*), sum(m.amount), NULL
      FROM reward_mints m JOIN events e ON e.id = m.event_id
     WHERE m.wallet_address IN (SELECT wallet_address FROM users
                                 WHERE email IN (${keys}) AND wallet_address IS NOT NULL)
       AND m.status IN ('pending', 'submitted', 'failed') AND m.brand_id IN (${brands})
       AND e.user_email IN (${keys})
     GROUP BY m.brand_id, m.status`;
}
