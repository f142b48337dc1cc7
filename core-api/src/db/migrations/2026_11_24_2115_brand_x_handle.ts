import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The brand's handle on the microblogging platform (without @), read by the X bot on every poll.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands ADD COLUMN x_handle text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands DROP COLUMN x_handle`.execute(db);
}
