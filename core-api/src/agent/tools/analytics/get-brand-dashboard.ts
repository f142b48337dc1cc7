import { brandAnalyticsQuerySchema, brandAnalyticsSchema } from '@pts/shared';
import { answerKey } from '../../../caching/answer-cache.ts';
import { analyticsWindowOf } from '../../../modules/analytics/brand-analytics.ts';
import { requireBrandAuthority, requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { BRAND_DASHBOARD_MAX_AGE_SECONDS, brandParams } from './analytics-schemas.ts';
import type { AnalyticsToolDeps } from './analytics-tool-deps.ts';

/**
 * `get_brand_dashboard`: A brand's dashboard over any window: the brand portal's numbers (key acting for the brand).
 */
export function getBrandDashboardTool(d: AnalyticsToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand_dashboard',
    method: 'get',
    path: '/analytics/brands/:brandId/dashboard',
    summary: "A brand's dashboard over any window: the brand portal's numbers (key acting for the brand)",
    description:
      "Exactly what the brand portal's dashboard shows, for a brand the key acts for, over `from`..`to` (ISO 8601) or the `days` (default 30) ending now: members (all, new, active in the last day, week and month before `to`), events accepted and refused by reason, pts issued, perk redemptions and pts spent, daily and weekly series, top event types and perks, token purchases fulfilled and relayer gas paid in the window, and the all-time pts leaderboard's top 10. 403 for a brand the key does not act for; 400 for a bad or longer than 366-day window.",
    access: 'key',
    request: { params: brandParams, query: brandAnalyticsQuerySchema },
    result: brandAnalyticsSchema,
    example: (f) => ({ params: { brandId: f.brandId }, query: { days: 30 } }),
    async handle({ params, query }, context) {
      requireBrandAuthority(context.principal, params.brandId, 'Reading a brand dashboard');
      await requireKnownBrand(d, params.brandId);
      const read = () =>
        d.analyticsReads.readBrandAnalytics(d, {
          brandId: params.brandId,
          ...analyticsWindowOf(query, context.clock.now()),
        });
      // Kept briefly, after the key's authority is checked: agents polling a dashboard share one computation
      // (docs/agent-api.md, "Freshness"); `window.to` says when it was computed. The portal's is never kept.
      const seconds = Math.min(d.settings.answerMaxAgeSeconds, BRAND_DASHBOARD_MAX_AGE_SECONDS);
      if (seconds === 0) return read();
      return d.agentAnswers.get(answerKey('get_brand_dashboard', { brandId: params.brandId, query }), seconds, read);
    },
  });
}
