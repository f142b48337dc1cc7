import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The name a brand's bots and integrations last sent for a user (`metadata.displayName`), shown on its
// leaderboards. Per brand: one brand's bot cannot rename a user on another brand's boards.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE user_display_names (
      brand_id text NOT NULL,
      user_key text NOT NULL,
      display_name text NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, user_key)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE user_display_names`.execute(db);
}
