import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Growth leads (docs/agent-api/growth.md, "request_growth_info"): a business that asked, through an agent,
// to hear about the program. One row per business and contact; a repeat inside the dedupe window only bumps
// `request_count` and `last_requested_at`. Operators read them with `GET /admin/growth-leads`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE growth_leads (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      business_name text NOT NULL,
      contact_email text NOT NULL,
      website text NOT NULL,
      industry text NOT NULL,
      request_count integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL,
      last_requested_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX growth_leads_contact ON growth_leads (contact_email, last_requested_at)`.execute(db);
  await sql`CREATE INDEX growth_leads_created ON growth_leads (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE growth_leads`.execute(db);
}
