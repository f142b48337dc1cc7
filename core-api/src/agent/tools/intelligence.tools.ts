import type { AgentTool } from '../agent-tool.ts';
import { getBrandAudienceTool } from './intelligence/get-brand-audience.ts';
import { getBrandPerkIntelligenceTool } from './intelligence/get-brand-perk-intelligence.ts';
import { getPerkAudienceTool } from './intelligence/get-perk-audience.ts';
import { getUserGoalsTool } from './intelligence/get-user-goals.ts';
import { getUserPersonaTool } from './intelligence/get-user-persona.ts';
import { getUserRecommendationsTool } from './intelligence/get-user-recommendations.ts';
import type { BrandToolDeps, MemberToolDeps } from './intelligence/intelligence-tool-deps.ts';
import { suggestBrandEventsTool } from './intelligence/suggest-brand-events.ts';
import { suggestBrandPerksTool } from './intelligence/suggest-brand-perks.ts';

/**
 * Intelligence tools (spec 4.1): member personas, recommendations, perk heat and goals, from real data; one
 * file each under intelligence/.
 */
export function intelligenceTools(d: MemberToolDeps & BrandToolDeps): AgentTool[] {
  return [
    getUserPersonaTool(d),
    getUserRecommendationsTool(d),
    getBrandPerkIntelligenceTool(d),
    getUserGoalsTool(d),
    getPerkAudienceTool(d),
    getBrandAudienceTool(d),
    suggestBrandEventsTool(d),
    suggestBrandPerksTool(d),
  ];
}
