import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Agent rewards (docs/agent-api/rewards.md): one claim per (agent key, brand, reward type), the UNIQUE key
// making a repeat impossible however many requests race. `event_id` is the reward event the claim is paid
// by (the platform award through the event pipeline): the claim commits first, and a claim whose event is
// missing after a crash is paid again with the same id, which the events primary key lets through once.
// The rewards are recorded under the platform ledger, the zero address, which no brand may take.
// The partial index serves the discovery evidence: the accepted events a key brought to a brand
// (process_event marks them with metadata.agentKeyId).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE agent_reward_claims (
      key_id text NOT NULL REFERENCES agent_keys(key_id),
      brand_id text NOT NULL REFERENCES brands(address),
      reward_type text NOT NULL CHECK (reward_type IN ('discovery', 'onboarding')),
      amount bigint NOT NULL CHECK (amount > 0),
      event_id uuid NOT NULL UNIQUE,
      claimed_at timestamptz NOT NULL,
      PRIMARY KEY (key_id, brand_id, reward_type)
    )`.execute(db);
  await sql`
    ALTER TABLE brands ADD CONSTRAINT brands_not_platform_ledger
    CHECK (address <> '0x0000000000000000000000000000000000000000')`.execute(db);
  await sql`CREATE INDEX agent_reward_claims_key_time ON agent_reward_claims (key_id, claimed_at)`.execute(db);
  await sql`
    CREATE INDEX events_agent_key_idx ON events (brand_id, (metadata->>'agentKeyId'), created_at)
    WHERE status = 'accepted' AND (metadata->>'agentKeyId') IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX events_agent_key_idx`.execute(db);
  await sql`DROP TABLE agent_reward_claims`.execute(db);
  await sql`ALTER TABLE brands DROP CONSTRAINT brands_not_platform_ledger`.execute(db);
}
