import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// An event's idempotency key (`externalId`: a post id, an order id). The primary key is the unique index
// that makes "never rewarded twice" hold across processes: the accept transaction inserts the key in the
// same transaction as the reward row, and removes it again if the event was refused.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE event_external_ids (
      brand_id text NOT NULL,
      event_type text NOT NULL,
      external_id text NOT NULL,
      event_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, event_type, external_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE event_external_ids`.execute(db);
}
