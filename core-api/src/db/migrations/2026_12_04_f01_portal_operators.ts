import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The platform's operators in the brand portal (docs/portal.md, "Operators"): a portal user flagged
// `operator` sees every brand, creates brands and invites their first owner. The flag is granted only by an
// invite link made with the admin token (`pts portal invite --operator`), which carries `grants_operator`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE portal_users ADD COLUMN operator boolean NOT NULL DEFAULT false`.execute(db);
  await sql`ALTER TABLE portal_links ADD COLUMN grants_operator boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE portal_links DROP COLUMN grants_operator`.execute(db);
  await sql`ALTER TABLE portal_users DROP COLUMN operator`.execute(db);
}
