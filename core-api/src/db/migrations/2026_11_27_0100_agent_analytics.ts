import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The network-wide analytics tools (docs/agent-api/analytics.md: network analytics, rankings, flows,
// trending) read every brand's events of one window; `events_brand_created_idx` serves one brand only, so
// without this index each of them scans every event ever recorded.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX events_created_idx ON events (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX events_created_idx`.execute(db);
}
