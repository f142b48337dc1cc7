import type { Database } from '../../db/database.ts';
import { readRuleTotals } from '../../modules/events/rule-reads.ts';
import { readLeaderboard } from '../../modules/leaderboards/leaderboards.service.ts';
import { listCatalogue } from '../../modules/perks/perks.service.ts';
import { type BoundIntoDeps, type BoundToDatabase, bindDatabase, bindDatabaseIntoDeps } from '../agent-services.ts';
import { findBrandCandidates, findDirectoryBrand, listDirectoryBrands } from './brand-directory.repository.ts';
import { browsePerkRows } from './perk-browse.repository.ts';

const discoveryReadFunctions = {
  listDirectoryBrands,
  findBrandCandidates,
  findDirectoryBrand,
  browsePerkRows,
  readRuleTotals,
  readLeaderboard,
};
const discoveryCatalogueFunctions = { listCatalogue };

/**
 * The discovery tools' reads (discovery.tools.ts): the brand directory, perk browsing, a brand's rule totals,
 * catalogue and leaderboards — bound to the handle by compose.ts.
 */
export type DiscoveryReads = BoundToDatabase<typeof discoveryReadFunctions> &
  BoundIntoDeps<typeof discoveryCatalogueFunctions>;

export function createDiscoveryReads(db: Database): DiscoveryReads {
  return { ...bindDatabase(db, discoveryReadFunctions), ...bindDatabaseIntoDeps(db, discoveryCatalogueFunctions) };
}
