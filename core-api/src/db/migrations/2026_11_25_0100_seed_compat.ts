import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Spec 2.3: custom events have ids starting with `custom_`. Rules whose event type is not a spec 2.4
// default are custom; those created before this kept a uuid. Drops (docs/compatibility.md): a brand-signed,
// time-boxed claimable amount with a supply and a per-user limit, and one row per claim.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE event_rules
    SET id = 'custom_' || substr(md5(brand_id || ':' || event_type || ':' || id), 1, 16), is_custom = true
    WHERE NOT is_custom AND event_type NOT LIKE 'custom\\_%' AND event_type NOT IN
      ('account_creation', 'complete_survey', 'newsletter_subscribe', 'rate_experience', 'subscribe_renewal',
       'form_submit')`.execute(db);
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
