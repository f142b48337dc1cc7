import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Rules that pay by value (issue 35 §1, docs/shop-program.md): a brand has a currency (USD until it sets one),
// a rule may pay a rate instead of a fixed amount (jsonb: pts, per, currency, rounding, minValue, maxReward, the
// amounts as decimal strings), and an event keeps the value it carried in integer minor units with its currency.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands ADD COLUMN currency text NOT NULL DEFAULT 'USD'`.execute(db);
  await sql`ALTER TABLE event_rules ADD COLUMN rate jsonb`.execute(db);
  await sql`ALTER TABLE events ADD COLUMN value_minor bigint`.execute(db);
  await sql`ALTER TABLE events ADD COLUMN value_currency text`.execute(db);
  await sql`
    ALTER TABLE events ADD CONSTRAINT events_value_complete
      CHECK ((value_minor IS NULL) = (value_currency IS NULL) AND (value_minor IS NULL OR value_minor >= 0))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events DROP CONSTRAINT events_value_complete`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN value_currency`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN value_minor`.execute(db);
  await sql`ALTER TABLE event_rules DROP COLUMN rate`.execute(db);
  await sql`ALTER TABLE brands DROP COLUMN currency`.execute(db);
}
