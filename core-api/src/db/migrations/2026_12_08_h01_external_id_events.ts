import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The what-if simulator (docs/simulator.md) replays a brand's events page by page and must know which of them
// carried an externalId (the judge's duplicate window does not apply to those). The key's table is keyed by the
// key itself; this index finds an event's key by the event's id, so each page joins its keys by index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX event_external_ids_event_idx ON event_external_ids (event_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX event_external_ids_event_idx`.execute(db);
}
