import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    ALTER TABLE perks ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid();
    ALTER TABLE perks ADD CONSTRAINT perks_public_id_key UNIQUE (public_id);

    CREATE TABLE perk_redemptions (
      id uuid PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(address),
      perk_id bigint NOT NULL REFERENCES perks(id),
      user_key text NOT NULL,
      platform text NOT NULL,
      wallet_address text NOT NULL,
      confirmation_code text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('pending', 'confirmed', 'failed')),
      cost bigint NOT NULL CHECK (cost >= 0),
      relay_tx_id text,
      tx_hash text,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX perk_redemptions_wallet_idx ON perk_redemptions (wallet_address, status);
    CREATE INDEX perk_redemptions_perk_idx ON perk_redemptions (perk_id, status);
    CREATE INDEX perk_redemptions_brand_user_idx ON perk_redemptions (brand_id, user_key, created_at)
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
  await sql.raw('DROP TABLE perk_redemptions').execute(db);
  await sql.raw('ALTER TABLE perks DROP COLUMN public_id').execute(db);
}
