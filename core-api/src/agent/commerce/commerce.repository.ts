import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isMemberKey } from '../../modules/accounts/member-keys.ts';
import type { TimeWindow } from '../analytics/formulas.ts';

/**
 * SQL of the commerce tools (docs/agent-api/commerce.md): route candidates. Deal candidates and their redemption
 * counts are the perks module's (readOfferedPerks).
 */

export interface RouteBrand {
  brandId: string;
  name: string;
  domain: string;
  category: string | null;
}

/** Accepted events per brand and event type in `window` (agents left out), keyed `brandId eventType`. */
export async function readAcceptedByType(
  db: Database,
  brandIds: string[],
  window: TimeWindow,
): Promise<Map<string, number>> {
  if (brandIds.length === 0) return new Map();
  const result = await sql<{ brand_id: string; event_type: string; n: number }>`
    SELECT brand_id, event_type, count(*)::int AS n
      FROM events
     WHERE status = 'accepted' AND brand_id IN (${sql.join(brandIds)}) AND ${isMemberKey(sql.ref('user_email'))}
       AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY brand_id, event_type`.execute(db);
  return new Map(result.rows.map((r) => [`${r.brand_id} ${r.event_type}`, r.n]));
}
