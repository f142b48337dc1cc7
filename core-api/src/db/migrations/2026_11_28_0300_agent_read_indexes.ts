import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Member reads of the agent API (docs/benchmarks.md, "Agent API reads"):
// - whether a member is known to a brand also counts rejected events, which `events_user_brand_idx`
//   (accepted only) does not hold: without this index that check scanned all of the brand's events;
// - rewards accepted and not yet minted, per wallet (the `pending` of every balance answer), scanned the
//   whole reward_mints table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX events_user_brand_other_idx ON events (user_email, brand_id) WHERE status <> 'accepted'`.execute(
    db,
  );
  await sql`CREATE INDEX reward_mints_wallet_open_idx ON reward_mints (wallet_address) WHERE status IN ('pending', 'submitted')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX reward_mints_wallet_open_idx`.execute(db);
  await sql`DROP INDEX events_user_brand_other_idx`.execute(db);
}
