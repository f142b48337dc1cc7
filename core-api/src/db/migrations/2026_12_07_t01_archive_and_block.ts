import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Undoing mistakes in the brand portal (issue 33 §11, docs/portal.md): a rule or a perk is archived rather
// than deleted (its events, claims and redemptions keep pointing at it; restoring it clears the mark), and a
// brand blocks a member by their identity keys (their events are refused with MEMBER_BLOCKED until unblocked).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE perks ADD COLUMN archived_at timestamptz`.execute(db);
  await sql`ALTER TABLE event_rules ADD COLUMN archived_at timestamptz`.execute(db);
  await sql`
    CREATE TABLE brand_member_blocks (
      brand_id text NOT NULL REFERENCES brands (address) ON DELETE CASCADE,
      identity_key text NOT NULL,
      account_key text NOT NULL,
      reason text NOT NULL,
      blocked_by text NOT NULL,
      blocked_at timestamptz NOT NULL,
      PRIMARY KEY (brand_id, identity_key)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE brand_member_blocks`.execute(db);
  await sql`ALTER TABLE event_rules DROP COLUMN archived_at`.execute(db);
  await sql`ALTER TABLE perks DROP COLUMN archived_at`.execute(db);
}
