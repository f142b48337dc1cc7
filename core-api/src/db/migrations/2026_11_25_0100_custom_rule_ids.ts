import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Spec 2.3: custom events have ids starting with `custom_`. Rules whose event type is not a spec 2.4
// default are custom; those created before this kept a uuid. Idempotent: a renamed rule is custom.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE event_rules
    SET id = 'custom_' || substr(md5(brand_id || ':' || event_type || ':' || id), 1, 16), is_custom = true
    WHERE NOT is_custom AND event_type NOT LIKE 'custom\\_%' AND event_type NOT IN
      ('account_creation', 'complete_survey', 'newsletter_subscribe', 'rate_experience', 'subscribe_renewal',
       'form_submit')`.execute(db);
}

export async function down(_db: Kysely<unknown>): Promise<void> {
  // The uuids are not kept: custom ids stay.
}
