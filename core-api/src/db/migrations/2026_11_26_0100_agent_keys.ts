import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Agent keys (docs/agent-api.md, "Keys"): the identities AI clients sign agent API requests with. The
// secret is kept encrypted (HMAC verification needs it in clear), never hashed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE agent_keys (
      key_id text PRIMARY KEY,
      name text NOT NULL,
      secret_encrypted text NOT NULL,
      brand_ids text[] NOT NULL DEFAULT '{}',
      can_manage_program boolean NOT NULL DEFAULT false,
      can_onboard boolean NOT NULL DEFAULT false,
      tier text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'pro', 'enterprise')),
      rate_per_minute integer NOT NULL DEFAULT 20 CHECK (rate_per_minute > 0),
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE agent_keys`.execute(db);
}
