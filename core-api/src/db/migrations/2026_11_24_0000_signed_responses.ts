import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The answer to the request that first used a signature, replayed to identical retries (docs/api/events.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE used_signatures ADD COLUMN response_status integer`.execute(db);
  await sql`ALTER TABLE used_signatures ADD COLUMN response_type text`.execute(db);
  await sql`ALTER TABLE used_signatures ADD COLUMN response_body text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE used_signatures DROP COLUMN response_status, DROP COLUMN response_type, DROP COLUMN response_body`.execute(
    db,
  );
}
