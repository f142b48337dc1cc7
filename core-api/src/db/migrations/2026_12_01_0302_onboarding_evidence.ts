import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Who sent each event: `brand` (a valid brand signature), `agent:<keyId>` (the agent API, the key standing in for
// the signature), null (unsigned: its domain is only a claim; or a platform award). The onboarding reward's
// evidence counts brand-signed events only (docs/agent-api/rewards.md), and a repeated externalId shows the first
// event only to whoever sent it. And who last rotated the brand's keys (an onboarding key keeps the key it was
// handed; only a rotation by someone else takes it away). Nullable columns without default: no table rewrite.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events ADD COLUMN sent_by text`.execute(db);
  await sql`ALTER TABLE brands ADD COLUMN keys_rotated_by text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events DROP COLUMN sent_by`.execute(db);
  await sql`ALTER TABLE brands DROP COLUMN keys_rotated_by`.execute(db);
}
