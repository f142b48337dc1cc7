import { AppError } from '@pts/shared';
import type { PerkRow } from '../../../modules/perks/perks.repository.ts';
import { toCatalogueItem } from '../../../modules/perks/perks.service.ts';
import type { SupplyDeps } from './discovery-tool-deps.ts';

/** Perk rows as catalogue items, their supply read live from the PerkNFT contract (503 without it). */
export async function catalogueItemsOf<R extends PerkRow>(d: SupplyDeps, rows: R[]) {
  if (rows.length === 0) return [];
  if (!d.perkChain) {
    throw new AppError('SERVICE_UNAVAILABLE', 'Perk supply cannot be read: the perk contracts are not configured');
  }
  const claimed = await d.perkChain.totalClaimed(rows.map((r) => r.id));
  return rows.map((row, index) => ({ row, item: toCatalogueItem(row, claimed[index] ?? 0n, d.clock.now()) }));
}
