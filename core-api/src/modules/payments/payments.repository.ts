import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { MintStatus, PaymentsTable, PaymentWebhookEventsTable } from '../../db/schema.ts';

export type PaymentRow = Selectable<PaymentsTable>;

/** Records a checkout the moment it is created (status `created`); a later fulfilment upserts anyway. */
export async function insertPaymentIfAbsent(db: Database, row: Insertable<PaymentsTable>): Promise<void> {
  await db
    .insertInto('payments')
    .values(row)
    .onConflict((oc) => oc.column('session_id').doNothing())
    .execute();
}

/** `SELECT … FOR UPDATE`: concurrent fulfilments of one session queue here, one at a time. */
export function lockPayment(trx: Database, sessionId: string): Promise<PaymentRow | undefined> {
  return trx.selectFrom('payments').selectAll().where('session_id', '=', sessionId).forUpdate().executeTakeFirst();
}

export async function markPaymentFulfilled(
  trx: Database,
  sessionId: string,
  values: {
    brandId: string;
    walletAddress: string;
    usdCents: bigint;
    ptsAmount: bigint;
    currency: string;
    paymentIntentId: string | null;
    rewardMintId: string;
    paidAt: Date;
    at: Date;
  },
): Promise<void> {
  await trx
    .updateTable('payments')
    .set({
      status: 'fulfilled',
      brand_id: values.brandId,
      wallet_address: values.walletAddress,
      usd_cents: values.usdCents,
      pts_amount: values.ptsAmount,
      currency: values.currency,
      payment_intent_id: values.paymentIntentId,
      reward_mint_id: values.rewardMintId,
      last_error: null,
      paid_at: values.paidAt,
      fulfilled_at: values.at,
      updated_at: values.at,
    })
    .where('session_id', '=', sessionId)
    .execute();
}

/** The outbox row that mints purchased tokens: like an event's reward, but with no event. */
export async function insertPurchaseMint(
  trx: Database,
  mint: { id: string; brandId: string; walletAddress: string; amount: bigint; at: Date },
): Promise<void> {
  await trx
    .insertInto('reward_mints')
    .values({
      id: mint.id,
      event_id: null,
      brand_id: mint.brandId,
      wallet_address: mint.walletAddress,
      amount: mint.amount,
      status: 'pending',
      created_at: mint.at,
      updated_at: mint.at,
    })
    .execute();
}

/** A paid session that cannot be fulfilled (bad metadata): visible to operators as `paid` with the reason. */
export async function markPaymentUnfulfillable(
  db: Database,
  sessionId: string,
  reason: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('payments')
    .set({ status: 'paid', last_error: reason.slice(0, 500), paid_at: at, updated_at: at })
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['created', 'paid'])
    .execute();
}

export async function markPaymentCanceled(db: Database, sessionId: string, at: Date): Promise<void> {
  await db
    .updateTable('payments')
    .set({ status: 'canceled', updated_at: at })
    .where('session_id', '=', sessionId)
    .where('status', '=', 'created')
    .execute();
}

export function findPayment(db: Database, sessionId: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
}

/** Where a purchase's mint stands: its outbox status and the hash of the transaction carrying it. */
export async function findMintProgress(
  db: Database,
  mintId: string,
): Promise<{ status: MintStatus; txHash: string | null } | undefined> {
  const row = await db
    .selectFrom('reward_mints')
    .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .select(['reward_mints.status', 'chain_txs.current_hash'])
    .where('reward_mints.id', '=', mintId)
    .executeTakeFirst();
  return row ? { status: row.status, txHash: row.current_hash ?? null } : undefined;
}

export interface PurchaseRow extends PaymentRow {
  mint_status: MintStatus | null;
  tx_hash: string | null;
}

/** A brand's purchases, newest first, with the progress of each mint. */
export function listPurchaseRows(db: Database, brandId: string): Promise<PurchaseRow[]> {
  return db
    .selectFrom('payments')
    .leftJoin('reward_mints', 'reward_mints.id', 'payments.reward_mint_id')
    .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .selectAll('payments')
    .select(['reward_mints.status as mint_status', 'chain_txs.current_hash as tx_hash'])
    .where('payments.brand_id', '=', brandId)
    .orderBy('payments.created_at', 'desc')
    .orderBy('payments.session_id')
    .execute();
}

/**
 * A brand's fulfilled token purchases (the `fulfilled` of `listBrandPurchases`' totals) whose fulfilment falls
 * in `[from, to)`: how many, their USD cents and the pts they bought. The brand analytics read model reads it.
 */
export async function readFulfilledPurchaseTotals(
  db: Database,
  brandId: string,
  window: { from: Date; to: Date },
): Promise<{ count: number; usdCents: bigint; pts: bigint }> {
  const row = await db
    .selectFrom('payments')
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      eb.fn.coalesce(eb.fn.sum<string>('usd_cents'), eb.val('0')).as('cents'),
      eb.fn.coalesce(eb.fn.sum<string>('pts_amount'), eb.val('0')).as('pts'),
    ])
    .where('brand_id', '=', brandId)
    .where('status', '=', 'fulfilled')
    .where('fulfilled_at', '>=', window.from)
    .where('fulfilled_at', '<', window.to)
    .executeTakeFirst();
  return {
    count: Number(row?.count ?? 0),
    usdCents: BigInt(String(row?.cents ?? '0')),
    pts: BigInt(String(row?.pts ?? '0')),
  };
}

export async function webhookEventSeen(db: Database, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('payment_webhook_events')
    .select('event_id')
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function recordWebhookEvent(db: Database, row: Insertable<PaymentWebhookEventsTable>): Promise<void> {
  await db
    .insertInto('payment_webhook_events')
    .values(row)
    .onConflict((oc) => oc.column('event_id').doNothing())
    .execute();
}
