import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Referrals (issue 36 §2, docs/referrals.md): a brand's program; each member's code at the brand (one per
// member, unique in the brand); one referral per referee and brand (its primary key is what pays a referee
// once under concurrent events); the refusals, once per referee and reason, for the brand's stats.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE referral_programs (
      brand_id text PRIMARY KEY REFERENCES brands (address) ON DELETE CASCADE,
      qualifying_event_type text NOT NULL,
      min_value_minor bigint CHECK (min_value_minor >= 0),
      referrer_reward integer NOT NULL CHECK (referrer_reward >= 0),
      referee_reward integer NOT NULL CHECK (referee_reward >= 0),
      cap_per_referrer integer CHECK (cap_per_referrer > 0),
      cap_period_days integer CHECK (cap_period_days > 0),
      updated_at timestamptz NOT NULL
    )
  `.execute(db);
  await sql`
    CREATE TABLE referral_codes (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      member text NOT NULL,
      code text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, member),
      UNIQUE (brand_id, code)
    )
  `.execute(db);
  await sql`
    CREATE TABLE referrals (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      referee text NOT NULL,
      referrer text NOT NULL,
      code text NOT NULL,
      status text NOT NULL CHECK (status IN ('attached', 'paid', 'refused', 'reversed')),
      reason text,
      qualifying_event_id text,
      referrer_reward integer,
      referee_reward integer,
      referrer_event_id text,
      referee_event_id text,
      created_at timestamptz NOT NULL,
      qualified_at timestamptz,
      reversed_at timestamptz,
      PRIMARY KEY (brand_id, referee)
    )
  `.execute(db);
  await sql`CREATE INDEX referrals_referrer ON referrals (brand_id, referrer, qualified_at)`.execute(db);
  await sql`CREATE INDEX referrals_qualifying_event ON referrals (qualifying_event_id)`.execute(db);
  await sql`
    CREATE TABLE referral_refusals (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      referee text NOT NULL,
      reason text NOT NULL,
      referrer text,
      code text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, referee, reason)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE referral_refusals`.execute(db);
  await sql`DROP TABLE referrals`.execute(db);
  await sql`DROP TABLE referral_codes`.execute(db);
  await sql`DROP TABLE referral_programs`.execute(db);
}
