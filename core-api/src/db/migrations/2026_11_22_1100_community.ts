import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE chat_groups (
      id uuid PRIMARY KEY,
      chat_group_id text NOT NULL UNIQUE,
      brand_id text NOT NULL REFERENCES brands(address),
      group_name text NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      config_metadata jsonb NOT NULL DEFAULT '{"naturalParticipation":{"enabled":true,"gmReward":25,"gnReward":15,"gmCooldownHours":24,"gnCooldownHours":24,"gmResponseEnabled":false,"gnResponseEnabled":false},"dailyReward":10,"welcomeBonus":50,"welcomeMessageEnabled":true}'::jsonb,
      setup_by text NOT NULL,
      setup_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX chat_groups_brand_idx ON chat_groups (brand_id);
    CREATE TABLE hashtag_campaigns (
      id uuid PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(address),
      hashtag text NOT NULL,
      reward integer,
      reward_multiplier double precision,
      start_date timestamptz NOT NULL,
      end_date timestamptz NOT NULL,
      max_claims_per_user integer NOT NULL DEFAULT 1,
      exclude_brand_posts boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((reward IS NULL) <> (reward_multiplier IS NULL)),
      CHECK (end_date > start_date)
    );
    CREATE INDEX hashtag_campaigns_window_idx ON hashtag_campaigns (brand_id, start_date, end_date)
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
  await sql.raw('DROP TABLE hashtag_campaigns, chat_groups').execute(db);
}
