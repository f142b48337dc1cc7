import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE brands (
      address text PRIMARY KEY,
      name text NOT NULL,
      website_domain text NOT NULL,
      verified_domains jsonb NOT NULL DEFAULT '[]',
      automation_enabled boolean NOT NULL DEFAULT true,
      security_key_hash text NOT NULL UNIQUE,
      security_key_encrypted text NOT NULL,
      api_key_hash text NOT NULL UNIQUE,
      tier text NOT NULL DEFAULT 'basic',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE event_rules (
      id text NOT NULL,
      brand_id text NOT NULL REFERENCES brands(address),
      event_type text NOT NULL,
      reward_amount bigint NOT NULL CHECK (reward_amount >= 0),
      max_claims_per_user integer NOT NULL DEFAULT 1,
      max_total_claims integer CHECK (max_total_claims IS NULL OR max_total_claims >= 0),
      total_claims integer NOT NULL DEFAULT 0,
      cooldown_hours integer NOT NULL DEFAULT 24 CHECK (cooldown_hours >= 0),
      detection_method text NOT NULL DEFAULT 'manual',
      detection_config jsonb NOT NULL DEFAULT '{}',
      is_custom boolean NOT NULL DEFAULT false,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (brand_id, id),
      UNIQUE (brand_id, event_type)
    );

    CREATE TABLE users (
      id bigserial PRIMARY KEY,
      email text NOT NULL UNIQUE,
      wallet_address text UNIQUE,
      idp_user_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE events (
      id uuid PRIMARY KEY,
      brand_id text NOT NULL,
      event_type text NOT NULL,
      user_email text NOT NULL,
      status text NOT NULL CHECK (status IN ('accepted', 'rejected')),
      reason text,
      source text,
      domain text,
      channel_id text,
      metadata jsonb NOT NULL DEFAULT '{}',
      reward_amount bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX events_brand_created_idx ON events (brand_id, created_at);

    CREATE TABLE claim_counters (
      brand_id text NOT NULL,
      event_type text NOT NULL,
      user_email text NOT NULL,
      claims integer NOT NULL DEFAULT 0,
      last_claim_at timestamptz,
      last_event_id uuid,
      PRIMARY KEY (brand_id, event_type, user_email)
    );

    CREATE TABLE chain_txs (
      id bigserial PRIMARY KEY,
      chain_id integer NOT NULL,
      signer text NOT NULL,
      nonce bigint NOT NULL,
      purpose text NOT NULL,
      status text NOT NULL CHECK (status IN ('signed', 'submitted', 'confirmed', 'failed')),
      hashes jsonb NOT NULL DEFAULT '[]',
      current_hash text NOT NULL,
      raw_tx text NOT NULL,
      max_fee_per_gas text NOT NULL,
      max_priority_fee_per_gas text NOT NULL,
      gas_limit text NOT NULL,
      block_number bigint,
      gas_used text,
      last_error text,
      submitted_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (chain_id, signer, nonce)
    );
    CREATE INDEX chain_txs_open_idx ON chain_txs (status) WHERE status IN ('signed', 'submitted');

    CREATE TABLE reward_mints (
      id uuid PRIMARY KEY,
      event_id uuid UNIQUE,
      brand_id text NOT NULL,
      wallet_address text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      status text NOT NULL CHECK (status IN ('pending', 'submitted', 'confirmed', 'failed')),
      chain_tx_id bigint REFERENCES chain_txs(id),
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX reward_mints_pending_idx ON reward_mints (created_at) WHERE status = 'pending';
    CREATE INDEX reward_mints_tx_idx ON reward_mints (chain_tx_id);

    CREATE TABLE chain_deployments (
      chain_id integer NOT NULL,
      name text NOT NULL,
      address text NOT NULL,
      tx_hash text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, name)
    );

    CREATE TABLE used_signatures (
      signature text PRIMARY KEY,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX used_signatures_expires_idx ON used_signatures (expires_at);

    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      actor text NOT NULL,
      action text NOT NULL,
      subject text,
      details jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
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
  await sql
    .raw(
      'DROP TABLE audit_log, used_signatures, chain_deployments, reward_mints, chain_txs, claim_counters, events, users, event_rules, brands',
    )
    .execute(db);
}
