import { z } from 'zod';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { periodWindows } from '../../analytics/formulas.ts';
import {
  basis,
  basisOf,
  brandParams,
  eventTypeSchema,
  eventTypeView,
  growthSchema,
  growthView,
  periodQuery,
  totalsSchema,
  totalsView,
} from './analytics-schemas.ts';
import type { KnownBrandDeps, WindowReadDeps } from './analytics-tool-deps.ts';
import { eventTypeActivity, windowTotals } from './window-reads.ts';

const resultSchema = z.object({
  brandId: z.string(),
  current: totalsSchema,
  previous: totalsSchema,
  growth: growthSchema,
  streaks: z.object({ members: z.number().int(), longestCurrent: z.number().int() }),
  topEventTypes: z.array(eventTypeSchema),
  basis,
});

/** `get_brand_analytics`: A brand's activity over 7, 30 or 90 days, with growth and streaks. */
export function getBrandAnalyticsTool(d: WindowReadDeps & KnownBrandDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_brand_analytics',
    method: 'get',
    path: '/analytics/brands/:brandId',
    summary: "A brand's activity over 7, 30 or 90 days, with growth and streaks",
    description:
      "One brand's totals over the period (7d, 30d default, 90d) ending now: accepted and rejected events, active and new members, pts issued, redemptions and pts redeemed, events per member, redemption rate; the previous window and growth in % (null when the previous value is 0); members with a streak of 2+ extended in the window and the longest such streak; the top event types. 404 for an unknown brand. A brand without activity answers zeros with sampleSize 0 and a note.",
    access: 'public',
    cached: true,
    request: { params: brandParams, query: z.object({ period: periodQuery('30d') }) },
    result: resultSchema,
    example: (f) => ({ params: { brandId: f.brandId }, query: { period: '30d' } }),
    async handle({ params, query }, context) {
      await requireKnownBrand(d, params.brandId);
      const { current, previous } = periodWindows(context.clock.now(), query.period);
      const [cur, prev, types, streaks] = await Promise.all([
        windowTotals(d, params.brandId, current),
        windowTotals(d, params.brandId, previous),
        eventTypeActivity(d, params.brandId, current),
        reads.readStreakTotals(params.brandId, current),
      ]);
      const sample = cur.acceptedEvents + cur.redemptions;
      return {
        brandId: params.brandId,
        current: totalsView(cur),
        previous: totalsView(prev),
        growth: growthView(cur, prev),
        streaks: { members: streaks.streakMembers, longestCurrent: streaks.longestCurrent },
        topEventTypes: types.slice(0, 10).map((t) => eventTypeView(t, cur.acceptedEvents)),
        basis: basisOf(
          current,
          query.period,
          sample,
          sample === 0 ? 'No accepted event and no redemption at this brand in the period' : undefined,
        ),
      };
    },
  });
}
