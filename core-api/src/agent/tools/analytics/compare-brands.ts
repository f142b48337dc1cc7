import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { growthPercent, periodWindows } from '../../analytics/formulas.ts';
import {
  basis,
  basisOf,
  brandIdList,
  COMPARE_BRANDS_MAX,
  COMPARE_BRANDS_MIN,
  periodQuery,
  totalsSchema,
  totalsView,
} from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';
import { requireBrands, windowTotals } from './window-reads.ts';

const resultSchema = z.object({
  brands: z.array(
    z.object({
      brandId: z.string(),
      name: z.string(),
      totals: totalsSchema,
      memberGrowthPercent: z.number().nullable(),
    }),
  ),
  leaders: z.record(z.string(), z.string().nullable()),
  basis,
});

type ComparedBrand = { brandId: string; totals: ReturnType<typeof totalsView>; memberGrowthPercent: number | null };

/** Per metric, the brand with the highest value above 0 (null when none; ties go to the first listed). */
function leadersOf(brands: ComparedBrand[]) {
  const metric = (pick: (b: ComparedBrand) => number | null) => {
    let best: { brandId: string; value: number } | null = null;
    for (const b of brands) {
      const value = pick(b);
      if (value !== null && value > 0 && (best === null || value > best.value)) best = { brandId: b.brandId, value };
    }
    return best?.brandId ?? null;
  };
  return {
    members: metric((b) => b.totals.members),
    acceptedEvents: metric((b) => b.totals.acceptedEvents),
    ptsIssued: metric((b) => Number(b.totals.ptsIssued)),
    redemptions: metric((b) => b.totals.redemptions),
    eventsPerMember: metric((b) => b.totals.eventsPerMember),
    redemptionRatePercent: metric((b) => b.totals.redemptionRatePercent),
    memberGrowthPercent: metric((b) => b.memberGrowthPercent),
  };
}

/** `compare_brands`: Side-by-side activity of 2 to 5 brands over 7, 30 or 90 days. */
export function compareBrandsTool(d: WindowReadDeps): AgentTool {
  return defineAgentTool({
    name: 'compare_brands',
    method: 'get',
    path: '/compare/brands',
    summary: 'Side-by-side activity of 2 to 5 brands over 7, 30 or 90 days',
    description:
      'For each brand of `brandIds` (2 to 5, comma-separated): the totals of get_brand_analytics over the period (7d, 30d default, 90d) and member growth against the previous window; then per metric (members, acceptedEvents, ptsIssued, redemptions, eventsPerMember, redemptionRatePercent, memberGrowthPercent) the leading brand (null when all are 0 or null; ties go to the first listed). 404 names any unknown brand.',
    access: 'public',
    cached: true,
    request: {
      query: z.object({ brandIds: brandIdList(COMPARE_BRANDS_MIN, COMPARE_BRANDS_MAX), period: periodQuery('30d') }),
    },
    result: resultSchema,
    example: (f) => ({ query: { brandIds: `${f.brandId},${f.otherBrandId}`, period: '30d' } }),
    async handle({ query }, context) {
      const names = await requireBrands(d, query.brandIds);
      const { current, previous } = periodWindows(context.clock.now(), query.period);
      const brands = await Promise.all(
        query.brandIds.map(async (brandId) => {
          const [cur, prev] = await Promise.all([
            windowTotals(d, brandId, current),
            windowTotals(d, brandId, previous),
          ]);
          return {
            brandId,
            name: names.get(brandId) ?? brandId,
            totals: totalsView(cur),
            memberGrowthPercent: growthPercent(cur.members, prev.members),
          };
        }),
      );
      const sample = brands.reduce((s, b) => s + b.totals.acceptedEvents + b.totals.redemptions, 0);
      return {
        brands,
        leaders: leadersOf(brands),
        basis: basisOf(
          current,
          query.period,
          sample,
          sample === 0 ? 'No activity at these brands in the period' : undefined,
        ),
      };
    },
  });
}
