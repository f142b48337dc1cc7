import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// A member's accepted events, covering: the same key and predicate as `events_user_brand_idx`, with the
// event type and reward carried in the index, so a member's ledger, activity and balance sums are index-only
// scans instead of one heap visit per event (docs/benchmarks.md, "Agent API reads": a member with 1,280
// events read 1,278 buffers for their ledger, 24 with this index). It replaces the narrower index, which
// every query of it can use as well.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX events_user_brand_cover_idx ON events (user_email, brand_id, created_at)
            INCLUDE (event_type, reward_amount) WHERE status = 'accepted'`.execute(db);
  await sql`DROP INDEX events_user_brand_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX events_user_brand_idx ON events (user_email, brand_id, created_at) WHERE status = 'accepted'`.execute(
    db,
  );
  await sql`DROP INDEX events_user_brand_cover_idx`.execute(db);
}
