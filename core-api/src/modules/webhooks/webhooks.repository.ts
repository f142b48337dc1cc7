import type { WebhookDelivery, WebhookDeliveryStatus, WebhookEndpoint } from '@pts/shared';
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../db/schema.ts';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** The brand's endpoint (active or not). */
export function findWebhookEndpoint(db: Kysely<DB>, brandId: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('brand_id', '=', brandId.toLowerCase())
    .executeTakeFirst();
}

/** The active endpoints of these brands, by brand id. */
export async function findActiveWebhookEndpoints(
  db: Kysely<DB>,
  brandIds: string[],
): Promise<Map<string, WebhookEndpointRow>> {
  if (brandIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('brand_id', 'in', brandIds)
    .where('active', '=', true)
    .execute();
  return new Map(rows.map((row) => [row.brand_id, row]));
}

/**
 * Creates or updates the brand's endpoint (re-activating it). `secretEncrypted` replaces the stored secret
 * when given; a new endpoint must be given one.
 */
export function upsertWebhookEndpoint(
  db: Kysely<DB>,
  input: { brandId: string; url: string; secretEncrypted: string | undefined; now: Date },
): Promise<WebhookEndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({
      brand_id: input.brandId.toLowerCase(),
      url: input.url,
      secret_encrypted: input.secretEncrypted ?? '',
      active: true,
      created_at: input.now,
      updated_at: input.now,
    })
    .onConflict((oc) =>
      oc.column('brand_id').doUpdateSet({
        url: input.url,
        active: true,
        updated_at: input.now,
        ...(input.secretEncrypted ? { secret_encrypted: input.secretEncrypted } : {}),
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes the brand's endpoint; true when there was one. */
export async function deleteWebhookEndpoint(db: Kysely<DB>, brandId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('brand_id', '=', brandId.toLowerCase())
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export function insertWebhookDelivery(
  db: Kysely<DB>,
  row: Insertable<WebhookDeliveriesTable>,
): Promise<WebhookDeliveryRow> {
  return db.insertInto('webhook_deliveries').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findWebhookDelivery(db: Kysely<DB>, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The brand's deliveries, newest first. */
export function listWebhookDeliveries(
  db: Kysely<DB>,
  input: { brandId: string; status?: WebhookDeliveryStatus | undefined; limit: number },
): Promise<WebhookDeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('brand_id', '=', input.brandId.toLowerCase())
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(input.limit);
  if (input.status) query = query.where('status', '=', input.status);
  return query.execute();
}

/**
 * Claims due deliveries for one worker, in one short transaction: rows that are pending, failed and due, or
 * `sending` with an expired lease (a worker died mid-send), locked with `FOR UPDATE SKIP LOCKED` so parallel
 * workers take different rows, then marked `sending` until `leaseUntil` with `attempts + 1`. A row whose
 * lease expired on its last allowed attempt becomes `dead` instead.
 */
export async function claimDueDeliveries(
  db: Kysely<DB>,
  input: { now: Date; leaseUntil: Date; limit: number; maxAttempts: number },
): Promise<WebhookDeliveryRow[]> {
  return db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'status', 'attempts'])
      .where('status', 'in', ['pending', 'sending', 'failed'])
      .where('next_attempt_at', '<=', input.now)
      .orderBy('next_attempt_at')
      .limit(input.limit)
      .forUpdate()
      .skipLocked()
      .execute();
    const exhausted = due.filter((row) => row.attempts >= input.maxAttempts).map((row) => row.id);
    const claimable = due.filter((row) => row.attempts < input.maxAttempts).map((row) => row.id);
    if (exhausted.length > 0) {
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: 'dead',
          next_attempt_at: null,
          last_error: 'worker stopped during the last attempt',
          updated_at: input.now,
        })
        .where('id', 'in', exhausted)
        .execute();
    }
    if (claimable.length === 0) return [];
    return trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'sending',
        attempts: sql<number>`attempts + 1`,
        next_attempt_at: input.leaseUntil,
        updated_at: input.now,
      })
      .where('id', 'in', claimable)
      .returningAll()
      .execute();
  });
}

/** An attempt's result, written only while the attempt still holds its lease (status and attempt number). */
export async function recordDeliveryResult(
  db: Kysely<DB>,
  input: {
    id: string;
    attempt: number;
    now: Date;
    status: 'delivered' | 'failed' | 'dead';
    statusCode: number | null;
    error: string | null;
    nextAttemptAt: Date | null;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: input.status,
      next_attempt_at: input.nextAttemptAt,
      last_status_code: input.statusCode,
      last_error: input.error,
      updated_at: input.now,
      ...(input.status === 'delivered' ? { delivered_at: input.now } : {}),
    })
    .where('id', '=', input.id)
    .where('status', '=', 'sending')
    .where('attempts', '=', input.attempt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Puts a delivery back in the queue with a fresh set of attempts; refused while it is being sent. */
export function requeueDelivery(db: Kysely<DB>, id: string, now: Date): Promise<WebhookDeliveryRow | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '!=', 'sending')
    .returningAll()
    .executeTakeFirst();
}

export function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    brandId: row.brand_id,
    url: row.url,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toWebhookDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    brandId: row.brand_id,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
