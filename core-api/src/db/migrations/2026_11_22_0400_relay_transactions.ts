import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE relay_transactions (
      id uuid PRIMARY KEY,
      chain_id integer NOT NULL,
      signer text NOT NULL,
      nonce bigint,
      status text NOT NULL CHECK (status IN ('queued', 'submitted', 'mined', 'confirmed', 'failed')),
      current_hash text,
      hashes jsonb NOT NULL DEFAULT '[]'::jsonb,
      raw_tx text,
      max_fee_per_gas numeric(78, 0),
      max_priority_fee_per_gas numeric(78, 0),
      gas_limit numeric(78, 0),
      to_address text NOT NULL,
      data text NOT NULL,
      value numeric(78, 0) NOT NULL DEFAULT 0,
      brand_id text,
      user_address text,
      purpose text NOT NULL,
      collection_id numeric(78, 0),
      gas_used numeric(78, 0),
      effective_gas_price numeric(78, 0),
      block_number bigint,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      submitted_at timestamptz
    );
    CREATE UNIQUE INDEX relay_transactions_nonce_idx ON relay_transactions (chain_id, signer, nonce);
    CREATE INDEX relay_transactions_user_idx ON relay_transactions (user_address, created_at);
    CREATE INDEX relay_transactions_brand_idx ON relay_transactions (brand_id);
    CREATE INDEX relay_transactions_status_idx ON relay_transactions (status)
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
  await sql.raw('DROP TABLE relay_transactions').execute(db);
}
