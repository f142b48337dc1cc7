import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Manual deductions (issue 33 §11, issue 35 §2; docs/decisions.md "A manual deduction is a reversal with no
// event"): a brand's team takes pts back from a member with a reason. It is a row of `reward_reversals` like a
// refund's reversal, so the one ledger, the member totals trigger, the reverseBatch outbox, member_debts and
// the `reward.reversed` notice all see it unchanged; it names no event (`kind = 'deduction'`, `event_id` null),
// and carries the reason and the person who made it.
//
// The dashboard's rollups count reversals too: `brand_reversal_days` (per brand, UTC day of the reversal and
// kind: how many and their pts), appended by a statement trigger on `reward_reversals` exactly as
// brand_event_days is on `events` (one row per key and statement; the compaction job folds them), so the
// dashboard reads pts reversed and net issued from rollups, never subtracting on the page.

const MEMBER = `user_email NOT LIKE 'agent:%' AND user_email NOT LIKE 'agent\\_%'`;

const rollupOf = (rows: string, compacted: boolean) => `
  INSERT INTO brand_reversal_days (brand_id, day, kind, reversals, pts, compacted)
  SELECT brand_id, (created_at AT TIME ZONE 'UTC')::date, kind, count(*), sum(pts), ${compacted}
    FROM ${rows} WHERE ${MEMBER}
   GROUP BY 1, 2, 3`;

const statements = [
  `ALTER TABLE reward_reversals ADD COLUMN kind text NOT NULL DEFAULT 'reversal'
     CHECK (kind IN ('reversal', 'deduction'))`,
  'ALTER TABLE reward_reversals ADD COLUMN reason text',
  'ALTER TABLE reward_reversals ADD COLUMN actor text',
  'ALTER TABLE reward_reversals ALTER COLUMN event_id DROP NOT NULL',
  `ALTER TABLE reward_reversals ADD CONSTRAINT reward_reversals_kind_event
     CHECK ((kind = 'deduction') = (event_id IS NULL))`,
  `ALTER TABLE reward_reversals ADD CONSTRAINT reward_reversals_deduction_reason
     CHECK (kind <> 'deduction' OR (reason IS NOT NULL AND actor IS NOT NULL))`,
  `CREATE TABLE brand_reversal_days (
     id bigserial PRIMARY KEY,
     brand_id text NOT NULL,
     day date NOT NULL,
     kind text NOT NULL,
     reversals bigint NOT NULL,
     pts numeric NOT NULL,
     compacted boolean NOT NULL DEFAULT false
   )`,
  'CREATE INDEX brand_reversal_days_brand_day_idx ON brand_reversal_days (brand_id, day)',
  'CREATE INDEX brand_reversal_days_fresh_idx ON brand_reversal_days (id) WHERE NOT compacted',
  `CREATE FUNCTION pts_brand_reversal_rollups() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     ${rollupOf('new_rows', false)};
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER reward_reversals_rollups AFTER INSERT ON reward_reversals
     REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pts_brand_reversal_rollups()`,
  // Reversals are append-only for the rollups: what they count (brand, day, kind, pts) never changes.
  `CREATE FUNCTION pts_reversal_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.brand_id IS DISTINCT FROM OLD.brand_id OR NEW.pts IS DISTINCT FROM OLD.pts
        OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.created_at IS DISTINCT FROM OLD.created_at
        OR NEW.user_email IS DISTINCT FROM OLD.user_email THEN
       RAISE EXCEPTION 'a reversal''s brand, member, pts, kind and time are fixed once recorded';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER reward_reversals_fixed BEFORE UPDATE ON reward_reversals
     FOR EACH ROW EXECUTE FUNCTION pts_reversal_fixed()`,
  rollupOf('reward_reversals', true),
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER reward_reversals_fixed ON reward_reversals`.execute(db);
  await sql`DROP FUNCTION pts_reversal_fixed()`.execute(db);
  await sql`DROP TRIGGER reward_reversals_rollups ON reward_reversals`.execute(db);
  await sql`DROP FUNCTION pts_brand_reversal_rollups()`.execute(db);
  await sql`DROP TABLE brand_reversal_days`.execute(db);
  await sql`DELETE FROM reward_reversals WHERE kind = 'deduction'`.execute(db);
  await sql`ALTER TABLE reward_reversals DROP CONSTRAINT reward_reversals_deduction_reason`.execute(db);
  await sql`ALTER TABLE reward_reversals DROP CONSTRAINT reward_reversals_kind_event`.execute(db);
  await sql`ALTER TABLE reward_reversals ALTER COLUMN event_id SET NOT NULL`.execute(db);
  await sql`ALTER TABLE reward_reversals DROP COLUMN actor`.execute(db);
  await sql`ALTER TABLE reward_reversals DROP COLUMN reason`.execute(db);
  await sql`ALTER TABLE reward_reversals DROP COLUMN kind`.execute(db);
}
