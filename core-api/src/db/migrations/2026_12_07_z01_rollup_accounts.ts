import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The brand rollups (migration 2026_12_05_a01) count member ACCOUNTS, not identities (issue 34): a person
// whose Discord and e-mail are linked (account_links) is one member of the dashboard and of the agent's
// analytics. The events trigger resolves each event's `user_email` to its account (account_links.account_key,
// or itself when unlinked) before the member rollups see it; a link, relink or unlink of an identity
// recomputes, in the same transaction, the member rows of the keys it touches (the identity, its old and new
// account): their rows are removed with negative histogram and active-count deltas, then rebuilt from those
// accounts' events. The existing links are applied once here. The statements below are a01's (copied: a
// migration is frozen), fed with resolved rows.

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

/** Event rows `source` (alias `n`) with `user_email` resolved to the member's account. */
const RESOLVED = (source: string, where = 'TRUE') => `(
  SELECT n.brand_id, coalesce(l.account_key, n.user_email) AS user_email, n.created_at, n.event_type, n.status,
         n.reason, n.reward_amount
    FROM ${source} n LEFT JOIN account_links l ON l.identity_key = n.user_email
   WHERE ${where}) AS r`;

const rollupFunction = (rows: string) => `
  CREATE OR REPLACE FUNCTION pts_brand_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${rollupStatements(rows, false)
      .map((statement) => `${statement};`)
      .join('\n')}
    RETURN NULL;
  END $$`;

// The member rows of the keys `keys` removed, each with its deltas taken back from the histograms and the
// active counts, then rebuilt from the events of the identities that resolve to those keys now (`resolve`), or
// from their own events (down: the rollups keyed by identity again).
const REFRESH = (resolve: boolean) => `
  CREATE OR REPLACE FUNCTION pts_brand_rollup_refresh(keys text[]) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    WITH gone AS (DELETE FROM brand_members WHERE member = ANY (keys) RETURNING brand_id, first_at, last_at)
    INSERT INTO brand_member_counts (brand_id, event_type, kind, day, members, compacted)
    SELECT brand_id, '', kind, day, -count(*), false
      FROM (SELECT brand_id, 'first' AS kind, (first_at AT TIME ZONE 'UTC')::date AS day FROM gone
            UNION ALL
            SELECT brand_id, 'last', (last_at AT TIME ZONE 'UTC')::date FROM gone) AS g
     GROUP BY brand_id, kind, day;
    WITH gone AS (DELETE FROM brand_member_types WHERE member = ANY (keys) RETURNING brand_id, event_type, last_at)
    INSERT INTO brand_member_counts (brand_id, event_type, kind, day, members, compacted)
    SELECT brand_id, event_type, 'last', (last_at AT TIME ZONE 'UTC')::date, -count(*), false
      FROM gone GROUP BY 1, 2, 4;
    WITH gone AS (DELETE FROM brand_member_days WHERE member = ANY (keys) RETURNING brand_id, start)
    INSERT INTO brand_active_counts (brand_id, unit, start, members, compacted)
    SELECT brand_id, 'day', start, -count(*), false FROM gone GROUP BY 1, 3;
    WITH gone AS (DELETE FROM brand_member_weeks WHERE member = ANY (keys) RETURNING brand_id, start, last_at),
    counted AS (
      INSERT INTO brand_active_counts (brand_id, unit, start, members, compacted)
      SELECT brand_id, 'week', start, -count(*), false FROM gone GROUP BY 1, 3)
    INSERT INTO brand_member_counts (brand_id, event_type, kind, day, members, compacted)
    SELECT brand_id, '', 'week_last', (last_at AT TIME ZONE 'UTC')::date, -count(*), false
      FROM gone GROUP BY 1, 4;
    ${rollupStatements(
      resolve
        ? RESOLVED(
            'events',
            `(n.user_email = ANY (keys) OR n.user_email IN (SELECT identity_key FROM account_links WHERE account_key = ANY (keys)))
              AND coalesce(l.account_key, n.user_email) = ANY (keys)`,
          )
        : '(SELECT * FROM events WHERE user_email = ANY (keys)) AS r',
      false,
    )
      .slice(1)
      .map((statement) => `${statement};`)
      .join('\n')}
  END $$`;

const LINK = `
  CREATE FUNCTION pts_brand_rollup_link() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM pts_brand_rollup_refresh(ARRAY[NEW.identity_key, NEW.account_key]);
    ELSIF TG_OP = 'UPDATE' THEN
      PERFORM pts_brand_rollup_refresh(ARRAY[NEW.identity_key, NEW.account_key, OLD.identity_key, OLD.account_key]);
    ELSE
      PERFORM pts_brand_rollup_refresh(ARRAY[OLD.identity_key, OLD.account_key]);
    END IF;
    RETURN NULL;
  END $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  await sql.raw(rollupFunction(RESOLVED('new_rows'))).execute(db);
  await sql.raw(REFRESH(true)).execute(db);
  await sql.raw(LINK).execute(db);
  await sql
    .raw(`CREATE TRIGGER account_links_brand_rollup AFTER INSERT OR UPDATE OR DELETE ON account_links
      FOR EACH ROW EXECUTE FUNCTION pts_brand_rollup_link()`)
    .execute(db);
  // The links made before this migration.
  await sql
    .raw(
      `SELECT pts_brand_rollup_refresh(ARRAY(SELECT identity_key FROM account_links UNION SELECT account_key FROM account_links))`,
    )
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('DROP TRIGGER account_links_brand_rollup ON account_links').execute(db);
  await sql.raw('DROP FUNCTION pts_brand_rollup_link()').execute(db);
  await sql.raw(REFRESH(false)).execute(db);
  await sql
    .raw(
      `SELECT pts_brand_rollup_refresh(ARRAY(SELECT identity_key FROM account_links UNION SELECT account_key FROM account_links))`,
    )
    .execute(db);
  await sql.raw('DROP FUNCTION pts_brand_rollup_refresh(text[])').execute(db);
  await sql.raw(rollupFunction('new_rows')).execute(db);
}
