import type { Database } from '../../db/database.ts';
import type { PerkRow } from '../../modules/perks/perks.repository.ts';

export interface BrowsePerksFilter {
  category?: string | undefined;
  /** Highest cost in pts (inclusive). */
  maxPrice?: number | undefined;
  brandId?: string | undefined;
  limit: number;
}

/**
 * Perks an agent can offer across the network: active and on chain, cheapest first (then oldest), with the
 * owning brand's name. Supply is read from the chain by the caller.
 */
export async function browsePerkRows(
  db: Database,
  filter: BrowsePerksFilter,
): Promise<(PerkRow & { brand_name: string })[]> {
  let query = db
    .selectFrom('perks')
    .innerJoin('brands', 'brands.address', 'perks.brand_id')
    .selectAll('perks')
    .select('brands.name as brand_name')
    .where('perks.active', '=', true)
    .where('perks.chain_status', '=', 'synced');
  if (filter.brandId) query = query.where('perks.brand_id', '=', filter.brandId);
  if (filter.category) query = query.where('perks.category', '=', filter.category);
  if (filter.maxPrice !== undefined) query = query.where('perks.cost', '<=', BigInt(filter.maxPrice));
  return query.orderBy('perks.cost').orderBy('perks.id').limit(filter.limit).execute();
}
