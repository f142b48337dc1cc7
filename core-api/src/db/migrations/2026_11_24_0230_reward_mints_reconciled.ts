import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// When the chain reconciler found a confirmed reward's transaction missing on chain and put the reward back
// in the outbox. Its confirmation side effects (the brand's notice, leaderboards) already ran once, so the
// second confirmation must not run them again. The partial index serves the "restoring" count of /health.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE reward_mints ADD COLUMN reconciled_at timestamptz`.execute(db);
  await sql`CREATE INDEX reward_mints_reconciled_open ON reward_mints (status) WHERE reconciled_at IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX reward_mints_reconciled_open`.execute(db);
  await sql`ALTER TABLE reward_mints DROP COLUMN reconciled_at`.execute(db);
}
