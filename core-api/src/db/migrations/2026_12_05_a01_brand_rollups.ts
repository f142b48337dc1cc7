import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The brand read model's rollups (docs/ledger.md, "Brand rollups"): what the dashboard counts, kept by the
// database as events are written, so a dashboard reads a few hundred rows and index ranges instead of every
// event of its window. One statement-level trigger on `events` keeps them (no write path can skip it);
// events are append-only, and a second trigger refuses their UPDATE and DELETE so the rollups cannot drift.
//
// - brand_event_days: per brand, UTC day, event type, status and refusal reason: events and pts. The trigger
//   appends one row per key and statement (no hot row to lock under concurrent batches); the compaction job
//   folds them (rows with `compacted`), readers sum whatever is there.
// - brand_members / brand_member_types: a member's first and last accepted event per brand (and last per
//   event type). Each move of a first or last event is appended to brand_member_counts as day deltas (a
//   histogram: members whose first/last event falls on each day), so "members whose last event is after t"
//   is a sum over days plus an index range of the one day holding t.
// - brand_member_days / brand_member_weeks: which members were active on a UTC day / in a week (Monday, with
//   their last event in it, whose moves make the `week_last` histogram); the rows a statement adds for the
//   first time are counted into brand_active_counts (distinct members per day and week without reading them
//   back).

const MEMBER = `user_email NOT LIKE 'agent:%' AND user_email NOT LIKE 'agent\\_%'`;
const DAY = `(created_at AT TIME ZONE 'UTC')::date`;
const WEEK = `date_trunc('week', created_at AT TIME ZONE 'UTC')::date`;
const REASON = `CASE WHEN status = 'rejected' THEN coalesce(reason, 'unknown') ELSE '' END`;

/**
 * Day-count deltas of members whose first or last accepted event moved, from the rows an upsert returned
 * (`changed`: inserted, the new and the previous first/last). A member whose last event moves from Monday to
 * Tuesday is -1 on Monday and +1 on Tuesday of the `last` histogram. `kind` names the histogram, `column`
 * the returned timestamp (`first` → `first_at` and `prev_first_at`).
 */
const histogramDeltas = (changed: string, histograms: { kind: string; column: 'first' | 'last' }[]) => `
   INSERT INTO brand_member_counts (brand_id, event_type, kind, day, members, compacted)
   SELECT brand_id, event_type, kind, day, sum(delta), false
     FROM (${histograms
       .map(
         ({ kind, column }) => `
           SELECT brand_id, event_type, '${kind}' AS kind, (${column}_at AT TIME ZONE 'UTC')::date AS day, 1 AS delta
             FROM ${changed}
            WHERE inserted OR (prev_${column}_at AT TIME ZONE 'UTC')::date <> (${column}_at AT TIME ZONE 'UTC')::date
           UNION ALL
           SELECT brand_id, event_type, '${kind}', (prev_${column}_at AT TIME ZONE 'UTC')::date, -1
             FROM ${changed}
            WHERE NOT inserted AND (prev_${column}_at AT TIME ZONE 'UTC')::date <> (${column}_at AT TIME ZONE 'UTC')::date`,
       )
       .join(' UNION ALL ')}) AS d
    GROUP BY brand_id, event_type, kind, day
   HAVING sum(delta) <> 0`;

/** The rollup statements over a set of event rows `rows` (the trigger's transition table, or `events`). */
const rollupStatements = (rows: string, compacted: boolean) => [
  `INSERT INTO brand_event_days (brand_id, day, event_type, status, reason, events, pts, compacted)
   SELECT brand_id, ${DAY}, event_type, status, ${REASON}, count(*), coalesce(sum(reward_amount), 0), ${compacted}
     FROM ${rows} WHERE ${MEMBER}
    GROUP BY 1, 2, 3, 4, 5`,
  `WITH changed AS (
     INSERT INTO brand_members AS m (brand_id, member, first_at, last_at)
     SELECT brand_id, user_email, min(created_at), max(created_at)
       FROM ${rows} WHERE status = 'accepted' AND ${MEMBER}
      GROUP BY 1, 2 ORDER BY 1, 2
     ON CONFLICT (brand_id, member) DO UPDATE
        SET first_at = least(m.first_at, excluded.first_at), last_at = greatest(m.last_at, excluded.last_at),
            prev_first_at = m.first_at, prev_last_at = m.last_at
      WHERE excluded.first_at < m.first_at OR excluded.last_at > m.last_at
     RETURNING m.brand_id, '' AS event_type, (m.xmax = 0) AS inserted, m.first_at, m.last_at, m.prev_first_at,
               m.prev_last_at)
   ${histogramDeltas('changed', [
     { kind: 'first', column: 'first' },
     { kind: 'last', column: 'last' },
   ])}`,
  `WITH changed AS (
     INSERT INTO brand_member_types AS m (brand_id, event_type, member, last_at)
     SELECT brand_id, event_type, user_email, max(created_at)
       FROM ${rows} WHERE status = 'accepted' AND ${MEMBER}
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
     ON CONFLICT (brand_id, event_type, member) DO UPDATE SET last_at = excluded.last_at, prev_last_at = m.last_at
      WHERE excluded.last_at > m.last_at
     RETURNING m.brand_id, m.event_type, (m.xmax = 0) AS inserted, m.last_at, m.prev_last_at)
   ${histogramDeltas('changed', [{ kind: 'last', column: 'last' }])}`,
  `WITH fresh AS (
     INSERT INTO brand_member_days (brand_id, start, member)
     SELECT DISTINCT brand_id, ${DAY}, user_email
       FROM ${rows} WHERE status = 'accepted' AND ${MEMBER}
      ORDER BY 1, 2, 3
     ON CONFLICT DO NOTHING
     RETURNING brand_id, start)
   INSERT INTO brand_active_counts (brand_id, unit, start, members, compacted)
   SELECT brand_id, 'day', start, count(*), ${compacted} FROM fresh GROUP BY 1, 3`,
  `WITH changed AS (
     INSERT INTO brand_member_weeks AS w (brand_id, start, member, last_at)
     SELECT brand_id, ${WEEK}, user_email, max(created_at)
       FROM ${rows} WHERE status = 'accepted' AND ${MEMBER}
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
     ON CONFLICT (brand_id, start, member) DO UPDATE SET last_at = excluded.last_at, prev_last_at = w.last_at
      WHERE excluded.last_at > w.last_at
     RETURNING w.brand_id, '' AS event_type, w.start, (w.xmax = 0) AS inserted, w.last_at, w.prev_last_at),
   counted AS (
     INSERT INTO brand_active_counts (brand_id, unit, start, members, compacted)
     SELECT brand_id, 'week', start, count(*), ${compacted} FROM changed WHERE inserted GROUP BY 1, 3)
   ${histogramDeltas('changed', [{ kind: 'week_last', column: 'last' }])}`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE brand_event_days (
      id bigserial PRIMARY KEY,
      brand_id text NOT NULL,
      day date NOT NULL,
      event_type text NOT NULL,
      status text NOT NULL,
      reason text NOT NULL,
      events bigint NOT NULL,
      pts numeric NOT NULL,
      compacted boolean NOT NULL DEFAULT false
    )`.execute(db);
  await sql`CREATE INDEX brand_event_days_brand_day_idx ON brand_event_days (brand_id, day)`.execute(db);
  await sql`CREATE INDEX brand_event_days_fresh_idx ON brand_event_days (id) WHERE NOT compacted`.execute(db);
  await sql`
    CREATE TABLE brand_members (
      brand_id text NOT NULL,
      member text NOT NULL,
      first_at timestamptz NOT NULL,
      last_at timestamptz NOT NULL,
      -- The values before the last change (read by the trigger's histogram deltas only).
      prev_first_at timestamptz,
      prev_last_at timestamptz,
      PRIMARY KEY (brand_id, member)
    )`.execute(db);
  await sql`CREATE INDEX brand_members_first_idx ON brand_members (brand_id, first_at)`.execute(db);
  await sql`CREATE INDEX brand_members_last_idx ON brand_members (brand_id, last_at)`.execute(db);
  await sql`
    CREATE TABLE brand_member_types (
      brand_id text NOT NULL,
      event_type text NOT NULL,
      member text NOT NULL,
      last_at timestamptz NOT NULL,
      prev_last_at timestamptz,
      PRIMARY KEY (brand_id, event_type, member)
    )`.execute(db);
  await sql`CREATE INDEX brand_member_types_last_idx ON brand_member_types (brand_id, last_at, event_type)`.execute(db);
  await sql`
    CREATE TABLE brand_member_days (
      brand_id text NOT NULL,
      start date NOT NULL,
      member text NOT NULL,
      PRIMARY KEY (brand_id, start, member)
    )`.execute(db);
  await sql`
    CREATE TABLE brand_member_weeks (
      brand_id text NOT NULL,
      start date NOT NULL,
      member text NOT NULL,
      last_at timestamptz NOT NULL,
      prev_last_at timestamptz,
      PRIMARY KEY (brand_id, start, member)
    )`.execute(db);
  await sql`CREATE INDEX brand_member_weeks_last_idx ON brand_member_weeks (brand_id, start, last_at)`.execute(db);
  await sql`
    CREATE TABLE brand_member_counts (
      id bigserial PRIMARY KEY,
      brand_id text NOT NULL,
      event_type text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('first', 'last', 'week_last')),
      day date NOT NULL,
      members bigint NOT NULL,
      compacted boolean NOT NULL DEFAULT false
    )`.execute(db);
  await sql`CREATE INDEX brand_member_counts_brand_idx ON brand_member_counts (brand_id)`.execute(db);
  await sql`CREATE INDEX brand_member_counts_fresh_idx ON brand_member_counts (id) WHERE NOT compacted`.execute(db);
  await sql`
    CREATE TABLE brand_active_counts (
      id bigserial PRIMARY KEY,
      brand_id text NOT NULL,
      unit text NOT NULL CHECK (unit IN ('day', 'week')),
      start date NOT NULL,
      members bigint NOT NULL,
      compacted boolean NOT NULL DEFAULT false
    )`.execute(db);
  await sql`CREATE INDEX brand_active_counts_brand_idx ON brand_active_counts (brand_id, unit, start)`.execute(db);
  await sql`CREATE INDEX brand_active_counts_fresh_idx ON brand_active_counts (id) WHERE NOT compacted`.execute(db);

  // The events written before this migration, folded at once.
  for (const statement of rollupStatements('events', true)) await sql.raw(statement).execute(db);

  await sql
    .raw(`
    CREATE FUNCTION pts_brand_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${rollupStatements('new_rows', false)
        .map((statement) => `${statement};`)
        .join('\n')}
      RETURN NULL;
    END $$`)
    .execute(db);
  await sql`
    CREATE TRIGGER events_brand_rollup AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION pts_brand_rollup()`.execute(db);
  await sql`
    CREATE FUNCTION pts_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'events are append-only: the brand rollups count every event once (docs/ledger.md, "Brand rollups")';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
      FOR EACH STATEMENT EXECUTE FUNCTION pts_events_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER events_append_only ON events`.execute(db);
  await sql`DROP FUNCTION pts_events_append_only()`.execute(db);
  await sql`DROP TRIGGER events_brand_rollup ON events`.execute(db);
  await sql`DROP FUNCTION pts_brand_rollup()`.execute(db);
  for (const table of [
    'brand_member_counts',
    'brand_active_counts',
    'brand_member_weeks',
    'brand_member_days',
    'brand_member_types',
    'brand_members',
    'brand_event_days',
  ]) {
    await sql.raw(`DROP TABLE ${table}`).execute(db);
  }
}
