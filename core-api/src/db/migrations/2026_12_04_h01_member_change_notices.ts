import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Every write to a table a member answer reads announces, at commit, WHICH members (or brands) it touched, on
// the channel `pts_member_changes` (docs/ledger.md, "Cached member answers"). Statement-level triggers with
// transition tables: one notice per statement whatever the number of rows, and no write path (service, job,
// CLI, raw SQL) can skip it. A notice is tokens separated by newlines: `m:<identity or account key>`,
// `w:<wallet>`, `b:<brand>` (a brand's streak or achievement settings), `p:<brand>` (its perks' supply or
// terms); chunked under PostgreSQL's 8000-byte payload limit, `*` (drop everything) past 2000 tokens.

const CHANNEL = 'pts_member_changes';

/** table → token expressions over one row `r` of the transition table. */
const WATCHED: Record<string, string[]> = {
  events: [`'m:' || lower(r.user_email)`],
  // A mint's state is in its member's ledger (pending, confirmed) as well as in its wallet's balance.
  reward_mints: [
    `'w:' || lower(r.wallet_address)`,
    `(SELECT 'm:' || lower(e.user_email) FROM events e WHERE e.id = r.event_id)`,
  ],
  perk_redemptions: [`'m:' || lower(r.user_key)`, `'w:' || lower(r.wallet_address)`, `'p:' || lower(r.brand_id)`],
  perks: [`'p:' || lower(r.brand_id)`],
  users: [`'m:' || lower(r.email)`, `'w:' || lower(r.wallet_address)`],
  account_links: [`'m:' || lower(r.identity_key)`, `'m:' || lower(r.account_key)`],
  streaks: [`'m:' || lower(r.user_key)`],
  checkins: [`'m:' || lower(r.user_key)`],
  milestone_claims: [`'m:' || lower(r.user_key)`],
  achievement_progress: [`'m:' || lower(r.user_key)`],
  achievement_unlocks: [`'m:' || lower(r.user_key)`],
  achievement_definitions: [`'b:' || lower(r.brand_id)`],
  brand_streak_settings: [`'b:' || lower(r.brand_id)`],
};

const tokensOf = (table: string, rows: string) =>
  (WATCHED[table] as string[]).map((token) => `SELECT ${token} FROM ${rows} r`).join(' UNION ');

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`
    CREATE FUNCTION pts_member_notify(tokens text[]) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      chunk text := '';
      token text;
    BEGIN
      IF tokens IS NULL OR cardinality(tokens) = 0 THEN RETURN; END IF;
      IF cardinality(tokens) > 2000 THEN
        PERFORM pg_notify('${CHANNEL}', '*');
        RETURN;
      END IF;
      FOREACH token IN ARRAY tokens LOOP
        IF octet_length(chunk) + octet_length(token) + 1 > 7900 THEN
          PERFORM pg_notify('${CHANNEL}', chunk);
          chunk := '';
        END IF;
        chunk := CASE WHEN chunk = '' THEN token ELSE chunk || E'\\n' || token END;
      END LOOP;
      IF chunk <> '' THEN PERFORM pg_notify('${CHANNEL}', chunk); END IF;
    END $$`)
    .execute(db);
  for (const table of Object.keys(WATCHED)) {
    const fn = `pts_member_changed_${table}`;
    await sql
      .raw(`
      CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(table, 'new_rows')}) x(t) WHERE t IS NOT NULL));
        ELSIF TG_OP = 'UPDATE' THEN
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(table, 'new_rows')} UNION ${tokensOf(table, 'old_rows')}) x(t) WHERE t IS NOT NULL));
        ELSE
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(table, 'old_rows')}) x(t) WHERE t IS NOT NULL));
        END IF;
        RETURN NULL;
      END $$`)
      .execute(db);
    const triggers = [
      ['ins', 'INSERT', 'NEW TABLE AS new_rows'],
      ['upd', 'UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
      ['del', 'DELETE', 'OLD TABLE AS old_rows'],
    ];
    for (const [suffix, operation, transition] of triggers) {
      await sql
        .raw(
          `CREATE TRIGGER ${fn}_${suffix} AFTER ${operation} ON ${table} REFERENCING ${transition}
             FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of Object.keys(WATCHED)) {
    const fn = `pts_member_changed_${table}`;
    for (const suffix of ['ins', 'upd', 'del']) await sql.raw(`DROP TRIGGER ${fn}_${suffix} ON ${table}`).execute(db);
    await sql.raw(`DROP FUNCTION ${fn}()`).execute(db);
  }
  await sql`DROP FUNCTION pts_member_notify(text[])`.execute(db);
}
