import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// A perk's redemption window (docs/perks.md): redeemable from `starts_at` (null: at once) until `ends_at`
// (exclusive; null: no end). The chain knows only the active switch; the window is the redemption rule's.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE perks ADD COLUMN starts_at timestamptz, ADD COLUMN ends_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE perks DROP COLUMN starts_at, DROP COLUMN ends_at`.execute(db);
}
