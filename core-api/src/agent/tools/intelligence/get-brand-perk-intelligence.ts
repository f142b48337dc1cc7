import type { PerkActivity } from '../../../modules/analytics/perk-activity.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { limitTextOut } from '../../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { conversionRate, daysToSellOut, heatScore, redemptionVelocity } from '../../intelligence/formulas.ts';
import { windowOf } from '../../intelligence/member-scope.ts';
import { basisOf, brandParams, nonNegative, perkIntelligenceResult, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { BrandToolDeps } from './intelligence-tool-deps.ts';

/** One perk's heat, velocity, funnel (`couldAfford` members reach its cost) and supply depletion. */
function perkHeat(p: PerkActivity, couldAfford: number) {
  const remaining = p.maxSupply === null ? null : nonNegative(p.maxSupply - p.sold);
  return {
    perkId: p.perkId,
    name: p.name,
    cost: p.cost.toString(),
    active: p.active,
    heatScore: heatScore(p.last7, p.last30),
    redemptions7d: p.last7,
    redemptions30d: p.last30,
    velocityPerDay: redemptionVelocity(p.last30),
    funnel: {
      couldAfford,
      redeemers30d: p.redeemers30,
      conversionPercent: conversionRate(p.redeemers30, couldAfford),
    },
    supply: {
      max: limitTextOut(p.maxSupply),
      sold: p.sold.toString(),
      remaining: remaining === null ? null : remaining.toString(),
      daysToSellOut: daysToSellOut(remaining, p.last30),
    },
  };
}

/** `get_brand_perk_intelligence`: Heat, funnel and supply depletion of a brand's perks. */
export function getBrandPerkIntelligenceTool(d: BrandToolDeps): AgentTool {
  const reads = d.intelligenceReads;
  return defineAgentTool({
    name: 'get_brand_perk_intelligence',
    method: 'get',
    path: '/intelligence/brands/:brandId/perks',
    summary: "Heat, funnel and supply depletion of a brand's perks",
    description:
      'For each perk of the brand, hottest first: heat score = (2 × redemptions in the last 7 days + redemptions 8–30 days ago) ÷ 30 (weighted redemptions per day); velocity = 30-day redemptions ÷ 30; funnel = members whose all-time earnings at the brand reach the cost → distinct redeemers in 30 days (conversion in %, null when nobody could afford); supply = max (-1 = unlimited), sold, remaining and days to sell out at the 30-day rate (null: unlimited supply or no recent redemption). Aggregates only, no member data; agent identities excluded. A brand with no perk answers an empty list with a note.',
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: perkIntelligenceResult,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      const perks = await reads.readPerkActivity(params.brandId, now);
      const { members, afford } = await reads.readAffordCounts(
        params.brandId,
        perks.map((p) => p.cost),
        now,
      );
      const redemptions30 = perks.reduce((s, p) => s + p.last30, 0);
      let note: string | undefined;
      if (perks.length === 0) note = 'The brand has no perk';
      else if (redemptions30 === 0)
        note = 'No redemption in the last 30 days: heat and velocity are 0, days to sell out unknown';
      return {
        brandId: params.brandId,
        members,
        perks: perks
          .map((p) => perkHeat(p, afford.get(p.cost.toString()) ?? 0))
          .sort((a, b) => b.heatScore - a.heatScore || a.perkId.localeCompare(b.perkId)),
        basis: basisOf(windowOf(now, WINDOW_DAYS), redemptions30, note),
      };
    },
  });
}
