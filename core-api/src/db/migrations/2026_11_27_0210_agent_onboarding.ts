import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Agent onboarding (docs/agent-api/program.md, "Onboarding"): a brand's category (discovery filters on it),
// when its keys were last rotated or revoked through the agent API, and who onboarded it with the contact
// details the onboarding agent gave.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands ADD COLUMN category text`.execute(db);
  await sql`ALTER TABLE brands ADD COLUMN keys_rotated_at timestamptz`.execute(db);
  await sql`ALTER TABLE brands ADD COLUMN keys_revoked_at timestamptz`.execute(db);
  await sql`
    CREATE TABLE agent_brand_onboardings (
      brand_id text PRIMARY KEY REFERENCES brands(address),
      key_id text NOT NULL REFERENCES agent_keys(key_id),
      business_name text NOT NULL,
      contact_email text NOT NULL,
      website text NOT NULL,
      description text NOT NULL,
      created_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX agent_brand_onboardings_key ON agent_brand_onboardings (key_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE agent_brand_onboardings`.execute(db);
  await sql`ALTER TABLE brands DROP COLUMN keys_revoked_at`.execute(db);
  await sql`ALTER TABLE brands DROP COLUMN keys_rotated_at`.execute(db);
  await sql`ALTER TABLE brands DROP COLUMN category`.execute(db);
}
