import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE achievement_definitions (
      brand_id text NOT NULL REFERENCES brands(address),
      id text NOT NULL,
      type text NOT NULL,
      threshold bigint NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      position integer NOT NULL,
      PRIMARY KEY (brand_id, id)
    );
    CREATE TABLE achievement_progress (
      brand_id text NOT NULL,
      user_key text NOT NULL,
      type text NOT NULL,
      value bigint NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, user_key, type)
    );
    CREATE TABLE achievement_unlocks (
      brand_id text NOT NULL,
      user_key text NOT NULL,
      achievement_id text NOT NULL,
      type text NOT NULL,
      threshold bigint NOT NULL,
      name text NOT NULL,
      unlocked_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, user_key, achievement_id)
    );
    CREATE INDEX streaks_board_idx ON streaks (brand_id, streak_type, current DESC, user_key)
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('DROP INDEX streaks_board_idx').execute(db);
  await sql.raw('DROP TABLE achievement_unlocks, achievement_progress, achievement_definitions').execute(db);
}
