import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// VIP tiers (issue 36 §1, docs/tiers.md): a brand's tier table; each member's held tier (with the grace a
// downgrade at the period's turn may run under); the entry rewards paid, one row per member and tier ever,
// whose primary key is what makes an entry reward pay once under concurrent events.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE brand_tiers (
      brand_id text PRIMARY KEY REFERENCES brands (address) ON DELETE CASCADE,
      basis text NOT NULL CHECK (basis IN ('earned', 'spent')),
      period text NOT NULL CHECK (period IN ('rolling_365', 'calendar_year', 'lifetime')),
      grace_days integer NOT NULL DEFAULT 0 CHECK (grace_days >= 0),
      tiers jsonb NOT NULL,
      -- The daily turn's run: the last one done, and the replica's claim on the one running (a lease).
      last_turn_at timestamptz,
      turn_claimed_at timestamptz,
      updated_at timestamptz NOT NULL
    )
  `.execute(db);
  await sql`
    CREATE TABLE member_tiers (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      member text NOT NULL,
      tier_index integer NOT NULL,
      tier_name text NOT NULL,
      grace_until timestamptz,
      changed_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, member)
    )
  `.execute(db);
  await sql`
    CREATE TABLE member_tier_entries (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      member text NOT NULL,
      tier_name text NOT NULL,
      amount integer NOT NULL,
      event_id text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, member, tier_name)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE member_tier_entries`.execute(db);
  await sql`DROP TABLE member_tiers`.execute(db);
  await sql`DROP TABLE brand_tiers`.execute(db);
}
