import { z } from 'zod';
import type { TrendCounts } from '../../../modules/analytics/analytics.repository.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { growthPercent, momentum, periodWindows } from '../../analytics/formulas.ts';
import { basis, basisOf, limitQuery, periodQuery, TRENDING_MAX, trendItem } from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';

const resultSchema = z.object({
  brands: z.array(trendItem),
  perks: z.array(trendItem),
  eventTypes: z.array(trendItem),
  basis: basis.extend({ previousFrom: z.string() }),
});

/** `get_trending`: Brands, perks and event types growing fastest against the previous period. */
export function getTrendingTool(d: WindowReadDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_trending',
    method: 'get',
    path: '/network/trending',
    summary: 'Brands, perks and event types growing fastest against the previous period',
    description:
      'Compares the period (7d default, 30d, 90d) with the window of the same length before it: brands by accepted events, perks by redemptions (pending or confirmed), event types by accepted events network-wide. Each item: current, previous, growthPercent (null when previous is 0) and momentum = (current − previous) ÷ (previous + 1). Lists keep items that grew (momentum > 0), highest momentum first, then current count, then id; `limit` 1–50 (default 10) per list. Empty lists with a note when nothing grew.',
    access: 'public',
    cached: true,
    request: { query: z.object({ period: periodQuery('7d'), limit: limitQuery(TRENDING_MAX, 10) }) },
    result: resultSchema,
    example: () => ({ query: { period: '7d', limit: 10 } }),
    async handle({ query }, context) {
      const { current, previous } = periodWindows(context.clock.now(), query.period);
      const counts = await reads.readTrendCounts(previous, current);
      const rank = (items: TrendCounts[]) =>
        items
          .map((c) => ({ ...c, momentum: momentum(c.current, c.previous) }))
          .filter((c) => c.momentum > 0)
          .sort((a, b) => b.momentum - a.momentum || b.current - a.current || a.id.localeCompare(b.id))
          .slice(0, query.limit);
      const brands = rank(counts.brands);
      const perks = rank(counts.perks);
      const eventTypes = rank(counts.eventTypes);
      const [brandNames, perkNames] = await Promise.all([
        reads.readBrandNames([...new Set([...brands, ...perks].map((b) => b.brandId))]),
        reads.readPerkNames(perks.map((p) => p.id)),
      ]);
      const view = (c: TrendCounts & { momentum: number }, name: string, brandId: string | null) => ({
        id: c.id,
        name,
        brandId,
        current: c.current,
        previous: c.previous,
        growthPercent: growthPercent(c.current, c.previous),
        momentum: c.momentum,
      });
      const sample =
        counts.brands.reduce((s, c) => s + c.current + c.previous, 0) +
        counts.perks.reduce((s, c) => s + c.current + c.previous, 0);
      const grew = brands.length + perks.length + eventTypes.length;
      return {
        brands: brands.map((c) => view(c, brandNames.get(c.id) ?? c.id, c.id)),
        perks: perks.map((c) => view(c, perkNames.get(c.id) ?? c.id, c.brandId)),
        eventTypes: eventTypes.map((c) => view(c, c.id, null)),
        basis: {
          ...basisOf(
            current,
            query.period,
            sample,
            grew === 0 ? 'Nothing grew against the previous period' : undefined,
          ),
          previousFrom: previous.from.toISOString(),
        },
      };
    },
  });
}
