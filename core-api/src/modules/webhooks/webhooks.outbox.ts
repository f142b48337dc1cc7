import { randomUUID } from 'node:crypto';
import { type WebhookEventType, webhookDataSchemas } from '@pts/shared';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

export type { WebhookEventType } from '@pts/shared';

/** A new envelope id: `evt_` + 32 hex (a v4 uuid without dashes). */
export function newWebhookEventId(): string {
  return `evt_${randomUUID().replace(/-/g, '')}`;
}

/** The JSON body every attempt of a delivery sends: `{ id, type, created, data }`. */
export function webhookBody(input: { eventId: string; type: WebhookEventType; data: unknown; at: Date }): string {
  return JSON.stringify({
    id: input.eventId,
    type: input.type,
    created: Math.floor(input.at.getTime() / 1000),
    data: input.data,
  });
}

/** One webhook to queue: the brand, the event type, its `data` (checked against the type's schema), when. */
export interface EnqueueWebhookInput {
  brandId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
  at: Date;
}

/**
 * Queues a webhook for the brand's endpoint, in the caller's transaction: pass the `trx` so the delivery
 * commits (or rolls back) with the change it announces. Inserts only when the brand has an active endpoint,
 * in ONE statement (`INSERT … SELECT … JOIN webhook_endpoints ON brand_id AND active`: a primary-key lookup
 * and an insert, one round trip); nothing is sent here — the webhook worker delivers it later.
 * Returns the delivery id, or undefined when the brand has no endpoint.
 *
 * `data` must match the type's schema in `@pts/shared` (`webhookDataSchemas`); a mismatch is a programming
 * error and throws (which rolls the caller's transaction back), so tests catch it.
 */
export async function enqueueWebhook(
  db: Kysely<DB>,
  input: { brandId: string; type: WebhookEventType; data: Record<string, unknown>; at: Date },
): Promise<string | undefined> {
  return (await enqueueWebhooks(db, [input]))[0];
}

/** Rows per statement: 6 parameters each, well below PostgreSQL's 65,535-parameter limit. */
const ROWS_PER_STATEMENT = 2000;

/**
 * `enqueueWebhook` for a batch (the event path commits many events in one transaction): one statement per
 * 2,000 webhooks, whatever the number of brands. Returns the delivery id of each input (undefined where its
 * brand has no active endpoint), in input order.
 */
export async function enqueueWebhooks(db: Kysely<DB>, inputs: EnqueueWebhookInput[]): Promise<(string | undefined)[]> {
  const rows = inputs.map((input) => {
    const parsed = webhookDataSchemas[input.type].safeParse(input.data);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new TypeError(`webhook ${input.type} data does not match its schema: ${problems}`);
    }
    const eventId = newWebhookEventId();
    return {
      id: randomUUID(),
      eventId,
      brandId: input.brandId.toLowerCase(),
      type: input.type,
      body: webhookBody({ eventId, type: input.type, data: parsed.data, at: input.at }),
      at: input.at.toISOString(),
    };
  });
  const inserted = new Set<string>();
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    const values = sql.join(
      chunk.map((row) => sql`(${row.id}, ${row.eventId}, ${row.brandId}, ${row.type}, ${row.body}, ${row.at})`),
    );
    const result = await sql<{ id: string }>`
      INSERT INTO webhook_deliveries
        (id, event_id, brand_id, type, body, status, attempts, next_attempt_at, created_at, updated_at)
      SELECT v.id::uuid, v.event_id, e.brand_id, v.type, v.body, 'pending', 0,
             v.at::timestamptz, v.at::timestamptz, v.at::timestamptz
      FROM (VALUES ${values}) AS v (id, event_id, brand_id, type, body, at)
      JOIN webhook_endpoints e ON e.brand_id = v.brand_id AND e.active
      RETURNING id`.execute(db);
    for (const row of result.rows) inserted.add(row.id);
  }
  return rows.map((row) => (inserted.has(row.id) ? row.id : undefined));
}
