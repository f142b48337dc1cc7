import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Whether a brand takes unsigned (domain-authorized) events; brands whose integrations all sign turn it off.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands ADD COLUMN unsigned_events boolean NOT NULL DEFAULT true`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands DROP COLUMN unsigned_events`.execute(db);
}
