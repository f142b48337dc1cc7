import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The intelligence tools (docs/agent-api/intelligence.md) read one member's events across brands; without
// this index that is a scan of every event. Accepted events only: rejected ones never count.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX events_user_brand_idx ON events (user_email, brand_id, created_at) WHERE status = 'accepted'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX events_user_brand_idx`.execute(db);
}
