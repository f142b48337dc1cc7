import { z } from 'zod';
import { formatCents } from '../../../modules/payments/payment-amounts.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { BrandRule } from '../../analytics/analytics.repository.ts';
import { bestPurchaseRule, PTS_PER_USD, periodWindows, purchaseReward } from '../../analytics/formulas.ts';
import {
  amount,
  basis,
  basisOf,
  brandIdList,
  CASHBACK_BRANDS_MAX,
  COMPARE_BRANDS_MIN,
  category,
  HEALTH_PERIOD,
  usdCents,
} from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';
import { brandsOfCategory, eventTypeActivity, requireBrands } from './window-reads.ts';

const resultSchema = z.object({
  purchaseAmountUsd: z.string(),
  ptsPerUsd: z.number().int(),
  category: z.string().nullable(),
  brands: z.array(
    z.object({
      brandId: z.string(),
      name: z.string(),
      eventType: z.string().nullable(),
      eventId: z.string().nullable(),
      rewardPts: amount.nullable(),
      rewardUsd: z.string().nullable(),
      cashbackPercent: z.number().nullable(),
      maxClaimsPerUser: z.number().int().nullable(),
      cooldownHours: z.number().nullable(),
      acceptedLast30d: z.number().int(),
    }),
  ),
  basis,
});

/** The brands of `brandIds` (404 naming unknown ones), of `category`, or the listed ones of that category. */
async function brandsCompared(
  d: WindowReadDeps,
  query: { brandIds?: string[]; category?: string },
): Promise<{ brandIds: string[]; names: Map<string, string> }> {
  if (query.brandIds) {
    const names = await requireBrands(d, query.brandIds);
    if (!query.category) return { brandIds: query.brandIds, names };
    const inCategory = new Set((await brandsOfCategory(d, query.category)).map((b) => b.brandId));
    return { brandIds: query.brandIds.filter((id) => inCategory.has(id)), names };
  }
  const listed = await brandsOfCategory(d, query.category);
  return { brandIds: listed.map((b) => b.brandId), names: new Map(listed.map((b) => [b.brandId, b.name])) };
}

/** Each brand's best purchase rule and what it pays for `cents`: highest reward first, brands without one last. */
function cashbackRows(
  brandIds: string[],
  names: Map<string, string>,
  rules: Map<string, BrandRule[]>,
  accepted: Map<string, Map<string, number>>,
  cents: bigint,
) {
  return brandIds
    .map((brandId) => {
      const best = bestPurchaseRule(rules.get(brandId) ?? [], cents);
      const reward = best ? purchaseReward(best, cents) : undefined;
      return {
        brandId,
        name: names.get(brandId) ?? brandId,
        eventType: best?.eventType ?? null,
        eventId: best?.eventId ?? null,
        rewardPts: reward?.rewardPts ?? null,
        rewardUsd: reward?.rewardUsd ?? null,
        cashbackPercent: reward?.cashbackPercent ?? null,
        maxClaimsPerUser: best?.maxClaimsPerUser ?? null,
        cooldownHours: best?.cooldownHours ?? null,
        acceptedLast30d: best ? (accepted.get(brandId)?.get(best.eventType) ?? 0) : 0,
      };
    })
    .sort((a, b) => {
      const ra = a.rewardPts === null ? -1n : BigInt(a.rewardPts);
      const rb = b.rewardPts === null ? -1n : BigInt(b.rewardPts);
      return rb > ra ? 1 : rb < ra ? -1 : a.brandId.localeCompare(b.brandId);
    });
}

/** `compare_cashback`: What a purchase of N USD earns at each brand, as pts and as % cashback. */
export function compareCashbackTool(d: WindowReadDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'compare_cashback',
    method: 'get',
    path: '/compare/cashback',
    summary: 'What a purchase of N USD earns at each brand, as pts and as % cashback',
    description:
      "For a purchase of `purchaseAmount` USD (up to 2 decimals, > 0) at each brand of `brandIds` (2 to 10, comma-separated) and/or of `category` (retail, gaming, dining, travel; with both, the listed brands of that category): the brand's best active purchase rule (event type `earn` or containing purchase, order or checkout), its reward in pts, that reward's USD value at the purchase rate (1 USD = 1000 pts) and cashbackPercent = 100 × reward ÷ (purchaseAmount × 1000). A fixed reward is flat per event, so its percent falls as the purchase grows; a rate rule (pts per amount spent, in USD) pays by the purchase, with its minimum value and cap, exactly as events are judged (a rate in another currency is not compared). Brands without a purchase rule are listed last with nulls. Also the purchase rule's accepted events in the last 30 days (how often it really pays). Highest reward first. One of brandIds or category is required; 404 names unknown brands.",
    access: 'public',
    cached: true,
    request: {
      query: z
        .object({
          brandIds: brandIdList(COMPARE_BRANDS_MIN, CASHBACK_BRANDS_MAX).optional(),
          category: category.optional(),
          purchaseAmount: usdCents('purchaseAmount'),
        })
        .refine((q) => q.brandIds !== undefined || q.category !== undefined, {
          message: 'Give brandIds (2 to 10, comma-separated) or category (or both)',
          path: ['brandIds'],
        }),
    },
    result: resultSchema,
    example: (f) => ({ query: { brandIds: `${f.brandId},${f.otherBrandId}`, purchaseAmount: '25' } }),
    async handle({ query }, context) {
      const cents = query.purchaseAmount;
      const { brandIds, names } = await brandsCompared(d, query);
      const { current } = periodWindows(context.clock.now(), HEALTH_PERIOD);
      const [rules, types] = await Promise.all([
        reads.readBrandRules(brandIds),
        Promise.all(brandIds.map(async (id) => [id, await eventTypeActivity(d, id, current)] as const)),
      ]);
      const accepted = new Map(types.map(([id, list]) => [id, new Map(list.map((t) => [t.eventType, t.accepted]))]));
      const brands = cashbackRows(brandIds, names, rules, accepted, cents);
      const sample = brands.reduce((s, b) => s + b.acceptedLast30d, 0);
      let note: string | undefined;
      if (brands.length === 0)
        note = 'No brand matches (the category has no brand, or none of the listed brands is in it)';
      else if (brands.every((b) => b.rewardPts === null)) note = 'None of these brands has an active purchase rule';
      return {
        purchaseAmountUsd: formatCents(cents),
        ptsPerUsd: PTS_PER_USD,
        category: query.category ?? null,
        brands,
        basis: basisOf(current, HEALTH_PERIOD, sample, note),
      };
    },
  });
}
