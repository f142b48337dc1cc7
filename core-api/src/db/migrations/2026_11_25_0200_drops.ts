import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Drops (docs/compatibility.md): a brand-signed, time-boxed claimable amount with a supply and a per-user
// limit, and one row per claim.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE drops (
      id text PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(address),
      name text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      total_supply integer NOT NULL CHECK (total_supply > 0),
      claimed integer NOT NULL DEFAULT 0 CHECK (claimed >= 0 AND claimed <= total_supply),
      per_user_limit integer NOT NULL CHECK (per_user_limit > 0),
      starts_at timestamptz NOT NULL,
      ends_at timestamptz NOT NULL CHECK (ends_at > starts_at),
      created_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX drops_brand_idx ON drops (brand_id, created_at DESC)`.execute(db);
  await sql`
    CREATE TABLE drop_claims (
      drop_id text NOT NULL REFERENCES drops(id),
      user_key text NOT NULL,
      seq integer NOT NULL,
      event_id text NOT NULL UNIQUE,
      claimed_at timestamptz NOT NULL,
      PRIMARY KEY (drop_id, user_key, seq)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE drop_claims, drops`.execute(db);
}
