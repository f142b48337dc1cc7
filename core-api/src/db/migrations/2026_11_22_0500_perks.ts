import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE perks (
      id bigserial PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(address),
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      category text NOT NULL DEFAULT 'general',
      cost bigint NOT NULL CHECK (cost >= 0),
      max_supply bigint CHECK (max_supply IS NULL OR max_supply > 0),
      max_per_user bigint NOT NULL DEFAULT 1 CHECK (max_per_user >= 0),
      charges_per_token bigint NOT NULL DEFAULT 1 CHECK (charges_per_token >= 0),
      active boolean NOT NULL DEFAULT true,
      image_url text,
      chain_status text NOT NULL DEFAULT 'pending' CHECK (chain_status IN ('pending', 'synced')),
      chain_tx_hash text,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX perks_brand_name_idx ON perks (brand_id, lower(name));
    CREATE INDEX perks_brand_idx ON perks (brand_id, id);

    CREATE TABLE perk_constraints (
      id uuid PRIMARY KEY,
      seq bigserial NOT NULL,
      perk_id bigint NOT NULL REFERENCES perks(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('external_api', 'min_balance', 'chat_role')),
      config jsonb NOT NULL,
      api_url text,
      ttl_seconds integer NOT NULL CHECK (ttl_seconds >= 0),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX perk_constraints_perk_idx ON perk_constraints (perk_id);
    CREATE INDEX perk_constraints_api_url_idx ON perk_constraints (api_url) WHERE api_url IS NOT NULL;

    CREATE TABLE constraint_cache (
      constraint_id uuid NOT NULL REFERENCES perk_constraints(id) ON DELETE CASCADE,
      user_address text NOT NULL,
      api_url text NOT NULL,
      collection_id bigint NOT NULL,
      eligible boolean NOT NULL,
      detail text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (constraint_id, user_address)
    );
    CREATE INDEX constraint_cache_api_url_idx ON constraint_cache (api_url);

    CREATE TABLE chat_member_roles (
      brand_id text NOT NULL REFERENCES brands(address),
      platform text NOT NULL,
      guild_id text NOT NULL,
      platform_user_id text NOT NULL,
      roles jsonb NOT NULL,
      refreshed_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, platform, guild_id, platform_user_id)
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
  await sql.raw('DROP TABLE chat_member_roles, constraint_cache, perk_constraints, perks').execute(db);
}
