import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

// The reversal entries (`reward_reversals`, migration 2026_12_07_w01_reversals): the ledger's record of what
// was taken back from an event's reward. Queries take a Kysely handle so they run inside the service's
// transaction.

export interface ReversalRow {
  id: string;
  brand_id: string;
  reversal_id: string;
  kind: 'reversal' | 'deduction';
  /** Null for a deduction (it names no event). */
  event_id: string | null;
  reason: string | null;
  actor: string | null;
  user_email: string;
  wallet_address: string | null;
  pts: bigint;
  refunded_minor: bigint | null;
  currency: string | null;
  status: 'pending' | 'submitted' | 'confirmed';
  taken: bigint | null;
  debt: bigint | null;
  transaction_hash: string | null;
  created_at: Date;
  /** The reversed event's type; null for a deduction. */
  event_type: string | null;
}

/** The reversal the brand named `reversalId`, with its event's type; undefined when none. */
export async function findReversal(
  db: Database,
  brandId: string,
  reversalId: string,
): Promise<ReversalRow | undefined> {
  const row = await db
    .selectFrom('reward_reversals as r')
    .leftJoin('events as e', 'e.id', 'r.event_id')
    .selectAll('r')
    .select('e.event_type')
    .where('r.brand_id', '=', brandId)
    .where('r.reversal_id', '=', reversalId)
    .executeTakeFirst();
  return row as ReversalRow | undefined;
}

/** Reversals by row id (the minter settles them by these). */
export async function findReversalsByIds(db: Database, ids: string[]): Promise<ReversalRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('reward_reversals as r')
    .leftJoin('events as e', 'e.id', 'r.event_id')
    .selectAll('r')
    .select('e.event_type')
    .where('r.id', 'in', ids)
    .execute();
  return rows as ReversalRow[];
}

/** The event a reversal names, locked for the reversal's transaction (reversals of one event go one at a time). */
export async function lockEvent(db: Database, eventId: string) {
  const { rows } = await sql<{
    id: string;
    brand_id: string;
    event_type: string;
    user_email: string;
    status: string;
    reward_amount: string | bigint;
    value_minor: string | bigint | null;
    value_currency: string | null;
  }>`SELECT id, brand_id, event_type, user_email, status, reward_amount, value_minor, value_currency
       FROM events WHERE id = ${eventId} FOR UPDATE`.execute(db);
  return rows[0];
}

/** The event id behind a brand's (eventType, externalId); undefined when it sent none. */
export async function eventIdForExternalId(
  db: Database,
  brandId: string,
  eventType: string,
  externalId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('event_external_ids')
    .select('event_id')
    .where('brand_id', '=', brandId)
    .where('event_type', '=', eventType)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.event_id;
}

/** What earlier reversals of the event took and refunded. */
export async function readEventReversals(db: Database, eventId: string): Promise<{ pts: bigint; refunded: bigint }> {
  const row = await db
    .selectFrom('reward_reversals')
    .select([
      (eb) => eb.fn.coalesce(eb.fn.sum<string>('pts'), sql<string>`0`).as('pts'),
      (eb) => eb.fn.coalesce(eb.fn.sum<string>('refunded_minor'), sql<string>`0`).as('refunded'),
    ])
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return { pts: BigInt(row?.pts ?? 0), refunded: BigInt(row?.refunded ?? 0) };
}

/** The wallet the event's reward was minted to, and whether that mint failed for good. */
export async function readEventMint(
  db: Database,
  eventId: string,
): Promise<{ wallet_address: string; status: string } | undefined> {
  return db
    .selectFrom('reward_mints')
    .select(['wallet_address', 'status'])
    .where('event_id', '=', eventId)
    .executeTakeFirst();
}

/** A reward about to be written: its mint amount is what is left after paying the member's debt. */
export interface DebtPayingMint {
  id: string;
  brandId: string;
  walletAddress: string;
  amount: bigint;
  debtPaid?: bigint;
}

/**
 * The member's debt at a brand is paid first from their next rewards (payDebtFirst, issue 35 §2): in the
 * transaction that writes the rewards, each mint's amount is lowered by what it pays (recorded as
 * `debtPaid`) and the debts lowered by the same. Debts are locked, so two batches never both pay one debt.
 * Returns the ids of rewards that went wholly to debt (nothing is minted for them).
 */
export async function payDebtsFirst(trx: Database, mints: DebtPayingMint[]): Promise<Set<string>> {
  const paidInFull = new Set<string>();
  if (mints.length === 0) return paidInFull;
  const key = (brandId: string, wallet: string) => `${brandId}\u0000${wallet.toLowerCase()}`;
  const { rows } = await sql<{ brand_id: string; wallet_address: string; debt: string | bigint }>`
    SELECT brand_id, wallet_address, debt FROM member_debts
     WHERE debt > 0 AND (brand_id, wallet_address) IN (
       SELECT * FROM unnest(${mints.map((m) => m.brandId)}::text[], ${mints.map((m) => m.walletAddress.toLowerCase())}::text[]))
     ORDER BY brand_id, wallet_address
     FOR UPDATE`.execute(trx);
  if (rows.length === 0) return paidInFull;
  const debts = new Map(rows.map((row) => [key(row.brand_id, row.wallet_address), BigInt(row.debt)]));
  for (const mint of mints) {
    const owed = debts.get(key(mint.brandId, mint.walletAddress)) ?? 0n;
    if (owed === 0n) continue;
    const pays = owed < mint.amount ? owed : mint.amount;
    mint.amount -= pays;
    mint.debtPaid = pays;
    debts.set(key(mint.brandId, mint.walletAddress), owed - pays);
    if (mint.amount === 0n) paidInFull.add(mint.id);
  }
  for (const row of rows) {
    const left = debts.get(key(row.brand_id, row.wallet_address)) ?? 0n;
    await sql`UPDATE member_debts SET debt = ${left.toString()}::bigint
               WHERE brand_id = ${row.brand_id} AND wallet_address = ${row.wallet_address}`.execute(trx);
  }
  return paidInFull;
}

/** What the member owes the brand (pts its next rewards pay first). */
export async function readMemberDebt(db: Database, brandId: string, walletAddress: string): Promise<bigint> {
  const row = await db
    .selectFrom('member_debts')
    .select('debt')
    .where('brand_id', '=', brandId)
    .where('wallet_address', '=', walletAddress.toLowerCase())
    .executeTakeFirst();
  return row ? BigInt(row.debt) : 0n;
}
