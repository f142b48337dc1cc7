import type { AgentTool } from '../agent-tool.ts';
import { browsePerksTool } from './discovery/browse-perks.ts';
import { checkBrandTool } from './discovery/check-brand.ts';
import type { DiscoveryToolDeps } from './discovery/discovery-tool-deps.ts';
import { getBrandTool } from './discovery/get-brand.ts';
import { getBrandPerksTool } from './discovery/get-brand-perks.ts';
import { getLeaderboardTool } from './discovery/get-leaderboard.ts';
import { listBrandsTool } from './discovery/list-brands.ts';

export { normalizeBrandQuery } from '../discovery/brand-query.ts';
export { BRAND_CATEGORIES } from './discovery/discovery-schemas.ts';

/**
 * The discovery tools of the agent API (spec 4.1): brands, their programs, perks and leaderboards; one file
 * each under discovery/.
 */
export function discoveryTools(d: DiscoveryToolDeps): AgentTool[] {
  return [
    listBrandsTool(d),
    checkBrandTool(d),
    getBrandTool(d),
    getBrandPerksTool(d),
    browsePerksTool(d),
    getLeaderboardTool(d),
  ];
}
