import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE relay_quota (
      user_address text PRIMARY KEY,
      last_request_at timestamptz NOT NULL
    );
    CREATE TABLE relay_requests (
      id uuid PRIMARY KEY,
      user_address text NOT NULL,
      user_id text NOT NULL,
      to_address text NOT NULL,
      function_name text NOT NULL,
      collection_id numeric(78, 0),
      status text NOT NULL CHECK (status IN ('reserved', 'submitted', 'confirmed', 'failed', 'rejected')),
      tx_id uuid,
      tx_hash text,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX relay_requests_user_idx ON relay_requests (user_address, created_at);
    CREATE INDEX relay_requests_claims_idx ON relay_requests (user_address, collection_id) WHERE collection_id IS NOT NULL;
    CREATE INDEX relay_requests_tx_idx ON relay_requests (tx_id)
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
  await sql.raw('DROP TABLE relay_requests').execute(db);
  await sql.raw('DROP TABLE relay_quota').execute(db);
}
