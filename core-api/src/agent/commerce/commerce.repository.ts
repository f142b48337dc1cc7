import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { PerkRow } from '../../modules/perks/perks.repository.ts';
import { notAgent } from '../analytics/analytics.repository.ts';
import type { TimeWindow } from '../analytics/formulas.ts';

/** SQL of the commerce tools (docs/agent-api/commerce.md): deal candidates, route candidates, a member's claims. */

export type DealRow = PerkRow & { brand_name: string; brand_category: string | null; redemptions: number };

/**
 * Active, on-chain perks of every brand (of `brandCategory`, costing at most `maxCost`), each with its
 * redemptions (pending or confirmed, agents left out) in `window`. Supply is read from the chain by the caller.
 */
export async function readDealCandidates(
  db: Database,
  filter: { brandCategory?: string | undefined; maxCost?: bigint | undefined },
  window: TimeWindow,
): Promise<DealRow[]> {
  let query = db
    .selectFrom('perks')
    .innerJoin('brands', 'brands.address', 'perks.brand_id')
    .selectAll('perks')
    .select(['brands.name as brand_name', 'brands.category as brand_category'])
    .select((eb) =>
      eb
        .selectFrom('perk_redemptions as r')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('r.perk_id', '=', 'perks.id')
        .where('r.status', 'in', ['pending', 'confirmed'])
        .where('r.created_at', '>=', window.from)
        .where('r.created_at', '<', window.to)
        .where(sql<boolean>`${notAgent(sql.ref('r.user_key'))}`)
        .as('redemptions'),
    )
    .where('perks.active', '=', true)
    .where('perks.chain_status', '=', 'synced');
  if (filter.brandCategory) query = query.where('brands.category', '=', filter.brandCategory);
  if (filter.maxCost !== undefined) query = query.where('perks.cost', '<=', filter.maxCost);
  const rows = await query.orderBy('perks.cost').orderBy('perks.id').execute();
  return rows.map((row) => ({ ...row, redemptions: Number(row.redemptions ?? 0) }));
}

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
     WHERE status = 'accepted' AND brand_id IN (${sql.join(brandIds)}) AND ${notAgent(sql.ref('user_email'))}
       AND created_at >= ${window.from} AND created_at < ${window.to}
     GROUP BY brand_id, event_type`.execute(db);
  return new Map(result.rows.map((r) => [`${r.brand_id} ${r.event_type}`, r.n]));
}
