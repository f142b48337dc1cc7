import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// An agent key's rewards answer (get_agent_rewards) is kept until the database says the key's figures changed
// (docs/ledger.md, "Cached member answers"), as member answers are since 2026_12_04_h01: on the same channel
// `pts_member_changes`, through the same pts_member_notify, a token `k:<keyId>` is sent at commit by
// - an event brought by the key (events.metadata->>'agentKeyId'): the events trigger function is replaced by
//   one that sends it beside the member's `m:` token;
// - the key's reward claims (agent_reward_claims) and onboardings (agent_brand_onboardings): new
//   statement-level triggers.

const CHANNEL_FUNCTION = 'pts_member_notify';

const EVENTS_BEFORE = [`'m:' || lower(r.user_email)`];
const EVENTS_AFTER = [...EVENTS_BEFORE, `'k:' || lower(r.metadata->>'agentKeyId')`];

/** table → token expressions over one row `r` of the transition table. */
const KEY_TABLES: Record<string, string[]> = {
  agent_reward_claims: [`'k:' || lower(r.key_id)`],
  agent_brand_onboardings: [`'k:' || lower(r.key_id)`],
};

const tokensOf = (tokens: string[], rows: string) =>
  tokens.map((token) => `SELECT ${token} FROM ${rows} r`).join(' UNION ');

/** The statement-level trigger function of `table` sending `tokens` (the shape of 2026_12_04_h01's). */
function notifyFunction(table: string, tokens: string[]) {
  return `
    CREATE OR REPLACE FUNCTION pts_member_changed_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        PERFORM ${CHANNEL_FUNCTION}(ARRAY(SELECT t FROM (${tokensOf(tokens, 'new_rows')}) x(t) WHERE t IS NOT NULL));
      ELSIF TG_OP = 'UPDATE' THEN
        PERFORM ${CHANNEL_FUNCTION}(ARRAY(SELECT t FROM (${tokensOf(tokens, 'new_rows')} UNION ${tokensOf(tokens, 'old_rows')}) x(t) WHERE t IS NOT NULL));
      ELSE
        PERFORM ${CHANNEL_FUNCTION}(ARRAY(SELECT t FROM (${tokensOf(tokens, 'old_rows')}) x(t) WHERE t IS NOT NULL));
      END IF;
      RETURN NULL;
    END $$`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(notifyFunction('events', EVENTS_AFTER)).execute(db);
  for (const [table, tokens] of Object.entries(KEY_TABLES)) {
    await sql.raw(notifyFunction(table, tokens)).execute(db);
    const triggers = [
      ['ins', 'INSERT', 'NEW TABLE AS new_rows'],
      ['upd', 'UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
      ['del', 'DELETE', 'OLD TABLE AS old_rows'],
    ];
    for (const [suffix, operation, transition] of triggers) {
      await sql
        .raw(
          `CREATE TRIGGER pts_member_changed_${table}_${suffix} AFTER ${operation} ON ${table} REFERENCING ${transition}
             FOR EACH STATEMENT EXECUTE FUNCTION pts_member_changed_${table}()`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of Object.keys(KEY_TABLES)) {
    for (const suffix of ['ins', 'upd', 'del']) {
      await sql.raw(`DROP TRIGGER pts_member_changed_${table}_${suffix} ON ${table}`).execute(db);
    }
    await sql.raw(`DROP FUNCTION pts_member_changed_${table}()`).execute(db);
  }
  await sql.raw(notifyFunction('events', EVENTS_BEFORE)).execute(db);
}
