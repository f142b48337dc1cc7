import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE activity_log (
      id bigserial PRIMARY KEY,
      brand_id text NOT NULL,
      user_key text NOT NULL,
      platform text NOT NULL,
      kind text NOT NULL,
      amount bigint NOT NULL DEFAULT 0,
      ref text,
      detail jsonb NOT NULL DEFAULT '{}'::jsonb,
      occurred_at timestamptz NOT NULL,
      UNIQUE (kind, ref)
    );
    CREATE INDEX activity_log_user_idx ON activity_log (brand_id, user_key, occurred_at DESC, id DESC);
    CREATE TABLE leaderboard_scores (
      brand_id text NOT NULL,
      metric text NOT NULL,
      period text NOT NULL,
      period_start text NOT NULL,
      platform text NOT NULL,
      user_key text NOT NULL,
      value bigint NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, metric, period, period_start, platform, user_key)
    );
    CREATE INDEX leaderboard_scores_rank_idx
      ON leaderboard_scores (brand_id, metric, period, period_start, platform, value DESC, user_key);
    CREATE TABLE leaderboard_value_counts (
      brand_id text NOT NULL,
      metric text NOT NULL,
      period text NOT NULL,
      period_start text NOT NULL,
      platform text NOT NULL,
      value bigint NOT NULL,
      users bigint NOT NULL,
      PRIMARY KEY (brand_id, metric, period, period_start, platform, value)
    )
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
  await sql.raw('DROP TABLE leaderboard_value_counts').execute(db);
  await sql.raw('DROP TABLE leaderboard_scores').execute(db);
  await sql.raw('DROP TABLE activity_log').execute(db);
}
