import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Days are `YYYY-MM-DD` text (UTC), not `date`: the drivers read `date` back in the process time zone.
const ddl = `
    CREATE TABLE brand_streak_settings (
      brand_id text PRIMARY KEY REFERENCES brands(address),
      settings jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE streaks (
      brand_id text NOT NULL REFERENCES brands(address),
      user_key text NOT NULL,
      streak_type text NOT NULL DEFAULT 'daily',
      current integer NOT NULL DEFAULT 0,
      longest integer NOT NULL DEFAULT 0,
      last_activity_at timestamptz,
      last_counted_day text,
      last_platform text,
      freezes integer NOT NULL DEFAULT 0,
      freezes_used integer NOT NULL DEFAULT 0,
      last_freeze_used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (brand_id, user_key, streak_type)
    );

    CREATE TABLE checkins (
      brand_id text NOT NULL REFERENCES brands(address),
      user_key text NOT NULL,
      day text NOT NULL,
      platform text NOT NULL,
      event_id text NOT NULL UNIQUE,
      streak integer NOT NULL,
      multiplier double precision NOT NULL,
      reward bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (brand_id, user_key, day)
    );

    CREATE TABLE milestone_claims (
      brand_id text NOT NULL REFERENCES brands(address),
      user_key text NOT NULL,
      milestone integer NOT NULL,
      bonus bigint NOT NULL,
      event_id text NOT NULL UNIQUE,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (brand_id, user_key, milestone)
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
  await sql.raw('DROP TABLE milestone_claims, checkins, streaks, brand_streak_settings').execute(db);
}
