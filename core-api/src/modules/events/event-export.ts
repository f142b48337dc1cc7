import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

// A period's events of a brand, for the portal's CSV export (docs/portal.md, "Members"): every event,
// accepted or refused (with its reason), oldest first, read in keyset batches over the brand's time index.

/** Events an export reads per statement. */
export const EVENT_EXPORT_BATCH = 1000;

export interface ExportedEvent {
  eventId: string;
  /** ISO 8601 with microseconds, UTC. */
  createdAt: string;
  eventType: string;
  userKey: string;
  status: string;
  reason: string | null;
  rewardAmount: string;
  sentBy: string | null;
}

type Row = {
  id: string;
  at: string;
  event_type: string;
  user_email: string;
  status: string;
  reason: string | null;
  reward_amount: string;
  sent_by: string | null;
};

/** The brand's events in [from, to), oldest first, EVENT_EXPORT_BATCH at a time, each read when the last was used. */
export async function* readBrandEvents(
  db: Database,
  brandId: string,
  window: { from: Date; to: Date },
): AsyncGenerator<ExportedEvent[]> {
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const keyset = after ? sql`AND (created_at, id) > (${after.at}::timestamptz, ${after.id}::uuid)` : sql``;
    const { rows } = await sql<Row>`
      SELECT id::text AS id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
             event_type, user_email, status, reason, reward_amount::text AS reward_amount, sent_by
        FROM events
       WHERE brand_id = ${brandId} AND created_at >= ${window.from} AND created_at < ${window.to} ${keyset}
       ORDER BY created_at, id
       LIMIT ${EVENT_EXPORT_BATCH}`.execute(db);
    if (rows.length === 0) return;
    yield rows.map((row) => ({
      eventId: row.id,
      createdAt: row.at,
      eventType: row.event_type,
      userKey: row.user_email,
      status: row.status,
      reason: row.status === 'accepted' ? null : row.reason,
      rewardAmount: row.reward_amount,
      sentBy: row.sent_by,
    }));
    if (rows.length < EVENT_EXPORT_BATCH) return;
    const last = rows.at(-1)!;
    after = { at: last.at, id: last.id };
  }
}
