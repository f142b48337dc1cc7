import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The brand portal's people (docs/portal.md): users signing in with e-mail and password (argon2id hash),
// their role in each brand, their sessions (stored so they can be revoked) and single-use links (invites and
// password resets, stored as SHA-256 of the token so a database read does not hand out working links).
const ddl = `
  CREATE TABLE portal_users (
    id uuid PRIMARY KEY,
    email text NOT NULL UNIQUE,
    password_hash text,
    created_at timestamptz NOT NULL DEFAULT now(),
    password_changed_at timestamptz
  );
  CREATE TABLE portal_memberships (
    user_id uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
    brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, brand_id)
  );
  CREATE INDEX portal_memberships_brand_idx ON portal_memberships (brand_id);
  CREATE TABLE portal_sessions (
    token_hash text PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  CREATE INDEX portal_sessions_user_idx ON portal_sessions (user_id);
  CREATE TABLE portal_links (
    token_hash text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('invite', 'reset')),
    email text NOT NULL,
    brand_id text REFERENCES brands (address) ON DELETE CASCADE,
    role text CHECK (role IN ('owner', 'admin', 'viewer')),
    created_by text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  );
  CREATE INDEX portal_links_brand_idx ON portal_links (brand_id) WHERE used_at IS NULL
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('DROP TABLE portal_links, portal_sessions, portal_memberships, portal_users').execute(db);
}
