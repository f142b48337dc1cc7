import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The brand an audit entry belongs to (docs/portal.md, "Audit log"): a perk's entries name the perk as their
// subject, an agent key's the key, so "every change of brand X" needs its own column. Filled for the past:
// entries whose subject is a brand, and perk entries through their perk.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE audit_log ADD COLUMN brand_id text`.execute(db);
  await sql`UPDATE audit_log SET brand_id = subject WHERE subject IN (SELECT address FROM brands)`.execute(db);
  await sql`
    UPDATE audit_log a SET brand_id = p.brand_id
      FROM perks p
     WHERE a.brand_id IS NULL AND a.action LIKE 'perk.%' AND a.subject = p.id::text`.execute(db);
  await sql`CREATE INDEX audit_log_brand_idx ON audit_log (brand_id, id DESC)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX audit_log_brand_idx`.execute(db);
  await sql`ALTER TABLE audit_log DROP COLUMN brand_id`.execute(db);
}
