import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE oauth_identities (
      id bigserial PRIMARY KEY,
      provider text NOT NULL,
      subject text NOT NULL,
      username text,
      wallet_address text NOT NULL UNIQUE,
      idp_user_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (provider, subject)
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
  await sql.raw('DROP TABLE oauth_identities').execute(db);
}
