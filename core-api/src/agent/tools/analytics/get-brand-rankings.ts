import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { compareBrandActivity, growthPercent, periodWindows } from '../../analytics/formulas.ts';
import { amount, basis, basisOf, category, HEALTH_PERIOD, limitQuery, RANKINGS_MAX } from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';
import { brandsOfCategory } from './window-reads.ts';

const resultSchema = z.object({
  rankings: z.array(
    z.object({
      rank: z.number().int(),
      brandId: z.string(),
      name: z.string(),
      category: z.string().nullable(),
      members: z.number().int(),
      acceptedEvents: z.number().int(),
      ptsIssued: amount,
      memberGrowthPercent: z.number().nullable(),
    }),
  ),
  category: z.string().nullable(),
  totalBrands: z.number().int(),
  basis,
});

/** `get_brand_rankings`: Top brands (optionally of one category) by active members over the last 30 days. */
export function getBrandRankingsTool(d: WindowReadDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_brand_rankings',
    method: 'get',
    path: '/brands/rankings',
    summary: 'Top brands (optionally of one category) by active members over the last 30 days',
    description:
      'Brands ranked by distinct active members in the last 30 days, then accepted events, then pts issued, then Brand ID; `category` (retail, gaming, dining, travel) keeps brands of that category; `limit` 1–10 (default 10). Each entry: rank, brandId, name, category, members, acceptedEvents, ptsIssued, memberGrowthPercent against the 30 days before. Brands without activity rank last with zeros. An empty list has a note.',
    access: 'public',
    cached: true,
    request: { query: z.object({ category: category.optional(), limit: limitQuery(RANKINGS_MAX, 10) }) },
    result: resultSchema,
    example: () => ({ query: { limit: 5 } }),
    async handle({ query }, context) {
      const { current, previous } = periodWindows(context.clock.now(), HEALTH_PERIOD);
      const [brands, cur, prev] = await Promise.all([
        brandsOfCategory(d, query.category),
        reads.readActivityByBrand(current),
        reads.readActivityByBrand(previous),
      ]);
      const none = { events: 0, members: 0, ptsIssued: 0n };
      const ranked = brands
        .map((b) => ({
          brand: b,
          a: { brandId: b.brandId, ...(cur.get(b.brandId) ?? none) },
          members0: prev.get(b.brandId)?.members ?? 0,
        }))
        .sort((x, y) => compareBrandActivity(x.a, y.a))
        .slice(0, query.limit);
      const sample = ranked.reduce((s, r) => s + r.a.members, 0);
      return {
        rankings: ranked.map((r, i) => ({
          rank: i + 1,
          brandId: r.brand.brandId,
          name: r.brand.name,
          category: r.brand.category,
          members: r.a.members,
          acceptedEvents: r.a.events,
          ptsIssued: r.a.ptsIssued.toString(),
          memberGrowthPercent: growthPercent(r.a.members, r.members0),
        })),
        category: query.category ?? null,
        totalBrands: brands.length,
        basis: basisOf(
          current,
          HEALTH_PERIOD,
          sample,
          brands.length === 0
            ? query.category
              ? `No brand of category ${query.category}`
              : 'No brand on the network'
            : sample === 0
              ? 'No active member at these brands in the last 30 days: the order is by Brand ID'
              : undefined,
        ),
      };
    },
  });
}
