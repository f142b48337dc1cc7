import type { AgentTool } from '../agent-tool.ts';
import type { AnalyticsToolDeps } from './analytics/analytics-tool-deps.ts';
import { compareBrandsTool } from './analytics/compare-brands.ts';
import { compareCashbackTool } from './analytics/compare-cashback.ts';
import { getBrandAnalyticsTool } from './analytics/get-brand-analytics.ts';
import { getBrandDashboardTool } from './analytics/get-brand-dashboard.ts';
import { getBrandEventAnalyticsTool } from './analytics/get-brand-event-analytics.ts';
import { getBrandHealthTool } from './analytics/get-brand-health.ts';
import { getBrandPerkAnalyticsTool } from './analytics/get-brand-perk-analytics.ts';
import { getBrandRankingsTool } from './analytics/get-brand-rankings.ts';
import { getNetworkAnalyticsTool } from './analytics/get-network-analytics.ts';
import { getNetworkFlowsTool } from './analytics/get-network-flows.ts';
import { getTrendingTool } from './analytics/get-trending.ts';

export {
  BRAND_DASHBOARD_MAX_AGE_SECONDS,
  CASHBACK_BRANDS_MAX,
  COMPARE_BRANDS_MAX,
  COMPARE_BRANDS_MIN,
  RANKINGS_MAX,
  TRENDING_MAX,
  usdCents,
} from './analytics/analytics-schemas.ts';

/**
 * The analytics, comparison and trend tools (spec 4.1), one file each under analytics/. `get_brand_rankings`
 * (`/brands/rankings`) must be mounted before discovery's `/brands/:brandId`: agent-tools.ts puts this list
 * first.
 */
export function analyticsTools(d: AnalyticsToolDeps): AgentTool[] {
  return [
    // Comparisons (spec 4.1 `/compare/*`), rankings and network trends.
    compareBrandsTool(d),
    compareCashbackTool(d),
    getBrandRankingsTool(d),
    getNetworkFlowsTool(d),
    getTrendingTool(d),
    // Analytics of the network and of one brand (spec 4.1 `/analytics/*`).
    getNetworkAnalyticsTool(d),
    getBrandAnalyticsTool(d),
    getBrandDashboardTool(d),
    getBrandEventAnalyticsTool(d),
    getBrandPerkAnalyticsTool(d),
    getBrandHealthTool(d),
  ];
}
