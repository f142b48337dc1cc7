import type { Kysely, Selectable } from 'kysely';
import type { DB, ShopifyDeliveriesTable, ShopifyDeliveryResult, ShopifyShopsTable } from '../../db/schema.ts';

export type ShopRow = Selectable<ShopifyShopsTable>;
export type DeliveryRow = Selectable<ShopifyDeliveriesTable>;

export function findShop(db: Kysely<DB>, brandId: string): Promise<ShopRow | undefined> {
  return db.selectFrom('shopify_shops').selectAll().where('brand_id', '=', brandId).executeTakeFirst();
}

export async function upsertShop(
  db: Kysely<DB>,
  row: Omit<ShopRow, 'created_at' | 'updated_at'>,
  now: Date,
): Promise<ShopRow> {
  return db
    .insertInto('shopify_shops')
    .values({ ...row, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('brand_id').doUpdateSet({
        shop_domain: row.shop_domain,
        secret_encrypted: row.secret_encrypted,
        value_source: row.value_source,
        customers: row.customers,
        updated_at: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface NewDelivery {
  id: string;
  brand_id: string;
  webhook_id: string;
  topic: string;
  shop_domain: string;
  result: ShopifyDeliveryResult;
  reason: string | null;
  order_id: string | null;
  received_at: Date;
}

/** Records a delivery once per webhook id: true when this call wrote it, false when the id was already there. */
export async function claimDelivery(db: Kysely<DB>, delivery: NewDelivery): Promise<boolean> {
  const written = await db
    .insertInto('shopify_deliveries')
    .values(delivery)
    .onConflict((oc) => oc.columns(['brand_id', 'webhook_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return written !== undefined;
}

export function findDelivery(db: Kysely<DB>, brandId: string, webhookId: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('shopify_deliveries')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
}

export async function settleDelivery(
  db: Kysely<DB>,
  id: string,
  outcome: {
    result: ShopifyDeliveryResult;
    reason: string | null;
    eventId: string | null;
    rewardAmount: number | null;
    refund?: DeliveryRefund | undefined;
  },
): Promise<void> {
  await db
    .updateTable('shopify_deliveries')
    .set({
      result: outcome.result,
      reason: outcome.reason,
      event_id: outcome.eventId,
      reward_amount: outcome.rewardAmount,
      ...(outcome.refund
        ? {
            refund_id: outcome.refund.refundId,
            refund_minor: outcome.refund.minor,
            refund_currency: outcome.refund.currency,
          }
        : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** What a refunds/create delivery refunds: kept on its row, so a waiting refund is applied without its body. */
export interface DeliveryRefund {
  refundId: string;
  minor: bigint;
  currency: string;
}

/** The event a paid order earned (its order id is the purchase's externalId); undefined when none. */
export async function purchaseEventOf(db: Kysely<DB>, brandId: string, orderId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('event_external_ids')
    .select('event_id')
    .where('brand_id', '=', brandId)
    .where('event_type', '=', 'purchase')
    .where('external_id', '=', orderId)
    .executeTakeFirst();
  return row?.event_id;
}

/** The order's settled orders/paid delivery (the order came, whatever pts did with it); undefined when none. */
export function settledOrderDelivery(db: Kysely<DB>, brandId: string, orderId: string) {
  return db
    .selectFrom('shopify_deliveries')
    .select(['result', 'reason'])
    .where('brand_id', '=', brandId)
    .where('topic', '=', 'orders/paid')
    .where('order_id', '=', orderId)
    .where('result', '!=', 'processing')
    .orderBy('received_at')
    .executeTakeFirst();
}

/** The refunds of an order that came before it, oldest first. */
export async function waitingRefunds(db: Kysely<DB>, brandId: string, orderId: string) {
  const rows = await db
    .selectFrom('shopify_deliveries')
    .select(['id', 'refund_id', 'refund_minor', 'refund_currency'])
    .where('brand_id', '=', brandId)
    .where('order_id', '=', orderId)
    .where('result', '=', 'waiting')
    .orderBy('received_at')
    .orderBy('id')
    .execute();
  return rows.flatMap((row) =>
    row.refund_id !== null && row.refund_minor !== null && row.refund_currency !== null
      ? [{ id: row.id, refundId: row.refund_id, minor: BigInt(row.refund_minor), currency: row.refund_currency }]
      : [],
  );
}

/** Forgets a claim whose handling failed for a passing reason, so Shopify's retry of it is handled anew. */
export async function releaseDelivery(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('shopify_deliveries').where('id', '=', id).where('result', '=', 'processing').execute();
}

export function recentDeliveries(db: Kysely<DB>, brandId: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .selectFrom('shopify_deliveries')
    .selectAll()
    .where('brand_id', '=', brandId)
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function brandExists(db: Kysely<DB>, brandId: string): Promise<boolean> {
  const row = await db.selectFrom('brands').select('address').where('address', '=', brandId).executeTakeFirst();
  return row !== undefined;
}

/** Removes the brand's shop; its deliveries stay listed. Returns the removed row, undefined when none. */
export function deleteShop(db: Kysely<DB>, brandId: string): Promise<ShopRow | undefined> {
  return db.deleteFrom('shopify_shops').where('brand_id', '=', brandId).returningAll().executeTakeFirst();
}
