import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { periodWindows } from '../../analytics/formulas.ts';
import {
  basis,
  basisOf,
  eventTypeSchema,
  eventTypeView,
  growthSchema,
  growthView,
  periodQuery,
  totalsSchema,
  totalsView,
} from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';
import { eventTypeActivity, windowTotals } from './window-reads.ts';

const resultSchema = z.object({
  activeBrands: z.number().int(),
  current: totalsSchema,
  previous: totalsSchema,
  growth: growthSchema,
  topEventTypes: z.array(eventTypeSchema),
  basis,
});

/** `get_network_analytics`: Network activity over 7, 30 or 90 days, with growth against the window before. */
export function getNetworkAnalyticsTool(d: WindowReadDeps): AgentTool {
  return defineAgentTool({
    name: 'get_network_analytics',
    method: 'get',
    path: '/analytics/network',
    summary: 'Network activity over 7, 30 or 90 days, with growth against the window before',
    description:
      'Network-wide totals over the period (7d, 30d default, 90d) ending now: accepted and rejected events, active members, new members (first accepted event in the window), active brands, pts issued by accepted events, redemptions and pts redeemed, events per member and redemption rate; the same for the previous window of the same length and growth in % (null when the previous value is 0); the top 10 event types. Agent identities excluded. An empty network answers zeros with sampleSize 0 and a note.',
    access: 'public',
    cached: true,
    request: { query: z.object({ period: periodQuery('30d') }) },
    result: resultSchema,
    example: () => ({ query: { period: '30d' } }),
    async handle({ query }, context) {
      const { current, previous } = periodWindows(context.clock.now(), query.period);
      const [cur, prev, types] = await Promise.all([
        windowTotals(d, undefined, current),
        windowTotals(d, undefined, previous),
        eventTypeActivity(d, undefined, current),
      ]);
      return {
        activeBrands: cur.activeBrands,
        current: totalsView(cur),
        previous: totalsView(prev),
        growth: growthView(cur, prev),
        topEventTypes: types.slice(0, 10).map((t) => eventTypeView(t, cur.acceptedEvents)),
        basis: basisOf(
          current,
          query.period,
          cur.acceptedEvents + cur.redemptions,
          cur.acceptedEvents + cur.redemptions === 0 ? 'No accepted event and no redemption in the period' : undefined,
        ),
      };
    },
  });
}
