import { z } from 'zod';
import type { PerkActivity } from '../../../modules/analytics/perk-activity.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { limitTextOut, limitTextSchema } from '../../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { percentOf, type TimeWindow } from '../../analytics/formulas.ts';
import { amount, basis, basisOf, brandParams } from './analytics-schemas.ts';
import type { KnownBrandDeps, WindowReadDeps } from './analytics-tool-deps.ts';
import { windowTotals } from './window-reads.ts';

const resultSchema = z.object({
  brandId: z.string(),
  totals: z.object({
    perks: z.number().int(),
    activePerks: z.number().int(),
    redemptions: z.number().int(),
    ptsRedeemed: amount,
    redeemers: z.number().int(),
    members: z.number().int(),
    redeemerPercent: z.number().nullable(),
  }),
  perks: z.array(
    z.object({
      perkId: z.string(),
      name: z.string(),
      category: z.string(),
      cost: amount,
      active: z.boolean(),
      redemptions: z.number().int(),
      redemptions7d: z.number().int(),
      redemptions30d: z.number().int(),
      ptsRedeemed: amount,
      redeemers: z.number().int(),
      failed: z.number().int(),
      supply: z.object({ max: limitTextSchema, remaining: amount.nullable() }),
      sellThroughPercent: z.number().nullable(),
    }),
  ),
  basis,
});

/** One perk's row: its activity and all-time redemption totals, supply left and sell-through. */
function perkView(p: PerkActivity, totals: { ptsRedeemed: bigint; redeemers: number; failed: number } | undefined) {
  const t = totals ?? { ptsRedeemed: 0n, redeemers: 0, failed: 0 };
  const remaining = p.maxSupply === null ? null : p.maxSupply > p.sold ? p.maxSupply - p.sold : 0n;
  return {
    perkId: p.perkId,
    name: p.name,
    category: p.category,
    cost: p.cost.toString(),
    active: p.active,
    redemptions: Number(p.sold),
    redemptions7d: p.last7,
    redemptions30d: p.last30,
    ptsRedeemed: t.ptsRedeemed.toString(),
    redeemers: t.redeemers,
    failed: t.failed,
    supply: {
      max: limitTextOut(p.maxSupply),
      remaining: remaining === null ? null : remaining.toString(),
    },
    sellThroughPercent: p.maxSupply === null ? null : percentOf(Number(p.sold), Number(p.maxSupply)),
  };
}

/** `get_brand_perk_analytics`: A brand's perks: redemptions, pts redeemed, redeemers and supply. */
export function getBrandPerkAnalyticsTool(d: WindowReadDeps & KnownBrandDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_brand_perk_analytics',
    method: 'get',
    path: '/analytics/brands/:brandId/perks',
    summary: "A brand's perks: redemptions, pts redeemed, redeemers and supply",
    description:
      "Every perk of the brand with its cost, active flag, redemptions (pending or confirmed) all time, in the last 7 and 30 days, pts redeemed and distinct redeemers all time, failed attempts, supply (max, -1 = unlimited; remaining, null when unlimited) and sell-through in % (sold ÷ max supply, null when unlimited); brand totals and the share of the brand's all-time members who redeemed. Most redeemed first. 404 for an unknown brand; a brand without perks answers an empty list with a note.",
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: resultSchema,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      const allTime: TimeWindow = { from: new Date(0), to: now, days: 0 };
      const [perks, totals, all] = await Promise.all([
        reads.readPerkActivity(params.brandId, now),
        reads.readPerkRedemptionTotals(params.brandId, now),
        windowTotals(d, params.brandId, allTime),
      ]);
      const view = perks
        .map((p) => perkView(p, totals.get(p.perkId)))
        .sort((a, b) => b.redemptions - a.redemptions || Number(a.perkId) - Number(b.perkId));
      const redemptions = view.reduce((s, p) => s + p.redemptions, 0);
      let note: string | undefined;
      if (view.length === 0) note = 'The brand has no perk';
      else if (redemptions === 0) note = 'No perk of the brand was ever redeemed';
      return {
        brandId: params.brandId,
        totals: {
          perks: view.length,
          activePerks: view.filter((p) => p.active).length,
          redemptions,
          ptsRedeemed: all.ptsRedeemed.toString(),
          redeemers: all.redeemers,
          members: all.members,
          redeemerPercent: percentOf(all.activeRedeemers, all.members),
        },
        perks: view,
        basis: { ...basisOf(allTime, 'all_time', redemptions, note), from: null },
      };
    },
  });
}
