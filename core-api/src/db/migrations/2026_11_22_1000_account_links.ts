import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// An identity (`discord_…@`, `telegram_…@`, an email) linked to an account: the account key is the identity
// that was there first (the code's issuer) or a proven email. Linked identities' users rows carry the
// account's wallet, so `users.wallet_address` is no longer unique (one wallet, several identities).
const ddl = `
    CREATE TABLE account_links (
      identity_key text PRIMARY KEY,
      account_key text NOT NULL,
      method text NOT NULL CHECK (method IN ('code', 'email')),
      brand_id text NOT NULL,
      linked_at timestamptz NOT NULL
    );
    CREATE INDEX account_links_account_idx ON account_links (account_key);
    CREATE TABLE link_codes (
      code_hash text PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(address),
      identity_key text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      used_by text
    );
    CREATE UNIQUE INDEX link_codes_active_idx ON link_codes (identity_key) WHERE used_at IS NULL;
    ALTER TABLE users DROP CONSTRAINT users_wallet_address_key;
    CREATE INDEX users_wallet_address_idx ON users (wallet_address)
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
  await sql.raw('DROP INDEX users_wallet_address_idx').execute(db);
  await sql.raw('ALTER TABLE users ADD CONSTRAINT users_wallet_address_key UNIQUE (wallet_address)').execute(db);
  await sql.raw('DROP TABLE link_codes, account_links').execute(db);
}
