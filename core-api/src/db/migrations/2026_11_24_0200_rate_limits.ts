import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Rate-limit counters shared by every core-api process on one PostgreSQL database (rate-limiter-flexible's
// PostgreSQL store: `key` is `<limit>:<client>`, `expire` the window's end in epoch ms). Created here rather
// than by the library so replicas starting together do not race to create it; PGlite leaves it empty.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE rate_limits (
    key text PRIMARY KEY,
    points integer NOT NULL DEFAULT 0,
    expire bigint
  )`.execute(db);
  await sql`CREATE INDEX rate_limits_expire_idx ON rate_limits (expire)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE rate_limits`.execute(db);
}
