import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Idempotent redemptions (docs/perks.md "Retrying a redemption"): a redemption may carry the caller's
// idempotency key, scoped to the brand and the member (the account's user key), so a retry after a timeout
// answers the first redemption instead of paying again. A failed redemption spent nothing and frees its key.
// A member's redemptions across every brand (the claims the per-member limit counts, read for find_deals,
// and the ledger balance's spent sum) by one index instead of a scan of the table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX perk_redemptions_user_idx ON perk_redemptions (user_key, status)
            INCLUDE (perk_id, brand_id, cost)`.execute(db);
  await sql`ALTER TABLE perk_redemptions ADD COLUMN idempotency_key text`.execute(db);
  await sql`CREATE UNIQUE INDEX perk_redemptions_idempotency_idx ON perk_redemptions (brand_id, user_key, idempotency_key)
            WHERE idempotency_key IS NOT NULL AND status <> 'failed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX perk_redemptions_user_idx`.execute(db);
  await sql`DROP INDEX perk_redemptions_idempotency_idx`.execute(db);
  await sql`ALTER TABLE perk_redemptions DROP COLUMN idempotency_key`.execute(db);
}
