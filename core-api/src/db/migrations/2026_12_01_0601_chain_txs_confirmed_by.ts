import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// How a mint transaction was confirmed: `receipt` (the chain shows its receipt, which an owner can look up)
// or `supply` (its nonce was used and the token's supply holds its tokens, but no receipt of any hash it was
// signed with exists: anvil restored from a state dump taken between a block's state and the block). Earlier
// supply confirmations were recorded with gas used 0, which no mined mintBatch can have.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE chain_txs ADD COLUMN confirmed_by text`.execute(db);
  await sql`UPDATE chain_txs SET confirmed_by = CASE WHEN gas_used = '0' THEN 'supply' ELSE 'receipt' END
            WHERE status = 'confirmed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE chain_txs DROP COLUMN confirmed_by`.execute(db);
}
