import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// A brand's leaderboard answer (the agent's get_leaderboard) is kept until the database says the board
// changed (docs/ledger.md, "Cached member answers"), on the channel and through the pts_member_notify of
// 2026_12_04_h01: a token `l:<brand>` is sent at commit by every write to the board's aggregates
// (leaderboard_scores, leaderboard_value_counts) and to the brand's display names; `l:*` (every board) by a
// write to oauth_identities, whose usernames any board may show.

/** table → token expressions over one row `r` of the transition table. */
const BOARD_TABLES: Record<string, string[]> = {
  leaderboard_scores: [`'l:' || lower(r.brand_id)`],
  leaderboard_value_counts: [`'l:' || lower(r.brand_id)`],
  user_display_names: [`'l:' || lower(r.brand_id)`],
  oauth_identities: [`'l:*'`],
};

const tokensOf = (tokens: string[], rows: string) =>
  tokens.map((token) => `SELECT ${token} FROM ${rows} r`).join(' UNION ');

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, tokens] of Object.entries(BOARD_TABLES)) {
    await sql
      .raw(`
      CREATE FUNCTION pts_board_changed_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(tokens, 'new_rows')}) x(t) WHERE t IS NOT NULL));
        ELSIF TG_OP = 'UPDATE' THEN
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(tokens, 'new_rows')} UNION ${tokensOf(tokens, 'old_rows')}) x(t) WHERE t IS NOT NULL));
        ELSE
          PERFORM pts_member_notify(ARRAY(SELECT t FROM (${tokensOf(tokens, 'old_rows')}) x(t) WHERE t IS NOT NULL));
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
          `CREATE TRIGGER pts_board_changed_${table}_${suffix} AFTER ${operation} ON ${table} REFERENCING ${transition}
             FOR EACH STATEMENT EXECUTE FUNCTION pts_board_changed_${table}()`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of Object.keys(BOARD_TABLES)) {
    for (const suffix of ['ins', 'upd', 'del']) {
      await sql.raw(`DROP TRIGGER pts_board_changed_${table}_${suffix} ON ${table}`).execute(db);
    }
    await sql.raw(`DROP FUNCTION pts_board_changed_${table}()`).execute(db);
  }
}
