import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The member ledger (docs/ledger.md) splits a member's earnings by mint state: queued or sent (`pending`) and
// failed for good (`unminted`). Both are read per wallet; the index of open mints covered only the first.
// This one replaces it (a wallet's balance reads `status IN ('pending', 'submitted')`, which implies this
// predicate, so it uses the new index too) and costs the event path nothing more: a mint is indexed while
// unconfirmed, as before, and failed mints are rare.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX reward_mints_wallet_unconfirmed_idx ON reward_mints (wallet_address)
            WHERE status IN ('pending', 'submitted', 'failed')`.execute(db);
  await sql`DROP INDEX reward_mints_wallet_open_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX reward_mints_wallet_open_idx ON reward_mints (wallet_address) WHERE status IN ('pending', 'submitted')`.execute(
    db,
  );
  await sql`DROP INDEX reward_mints_wallet_unconfirmed_idx`.execute(db);
}
