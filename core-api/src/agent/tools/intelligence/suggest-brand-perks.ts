import { UNLIMITED } from '@pts/shared';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { ratio } from '../../intelligence/formulas.ts';
import { windowOf } from '../../intelligence/member-scope.ts';
import { basisOf, brandParams, perkSuggestionsResult, share, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { BrandToolDeps } from './intelligence-tool-deps.ts';

type CategoryRow = Awaited<ReturnType<BrandToolDeps['intelligenceReads']['readCategoryPerformance']>>[number];

/** The network's perk categories, most redemptions per perk in 30 days first. */
function rankCategories(rows: CategoryRow[]) {
  return rows
    .map((c) => ({
      category: c.category,
      perks: c.perks,
      brands: c.brands,
      redemptions30d: c.redemptions,
      redemptionsPerPerk30d: ratio(c.redemptions, c.perks),
      medianCost: Number(c.medianCost),
      brandHas: c.brandHas,
    }))
    .sort(
      (a, b) =>
        b.redemptionsPerPerk30d - a.redemptionsPerPerk30d ||
        b.redemptions30d - a.redemptions30d ||
        b.perks - a.perks ||
        a.category.localeCompare(b.category),
    );
}

/** `suggest_brand_perks`: Perk prices from this brand's members' balances and categories that redeem well. */
/** The entry, core and premium price points: the brand's members' balance quartiles and who reaches each. */
function pricePointsOf(balances: Awaited<ReturnType<BrandToolDeps['intelligenceReads']['readBalanceQuartiles']>>) {
  const tiers = ['entry', 'core', 'premium'] as const;
  return balances.quartiles.map((q, i) => ({
    tier: tiers[i] as (typeof tiers)[number],
    percentile: Math.round(q.quantile * 100),
    priceInPoints: Number(q.balance),
    membersCanAffordNow: q.atLeast,
    share: share(q.atLeast, balances.members),
  }));
}

export function suggestBrandPerksTool(d: BrandToolDeps): AgentTool {
  const reads = d.intelligenceReads;
  return defineAgentTool({
    name: 'suggest_brand_perks',
    method: 'get',
    path: '/brands/:brandId/suggestions/perks',
    summary: "Perk prices from this brand's members' balances and categories that redeem well",
    description:
      "Suggested perk configurations for the create_perk body (category, priceInPoints; maxSupply -1 = unlimited). Price points: the 25th, 50th and 75th percentiles (entry, core, premium; an actual member's balance) of the earned-minus-spent figures (accepted rewards network-wide − redemptions not failed, ≥ 0) of the brand's members (an accepted event there), with how many members can afford each now. Categories: every category of the network's active perks with perks, brands, redemptions in the last 30 days, redemptions per perk and lower median cost, best redeeming first. Suggestions: up to 3 categories the brand has no active perk in that were redeemed in the window, priced at the core price point (or the category's median cost when the brand has no member). Empty data answers empty lists with a note.",
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: perkSuggestionsResult,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      const window = windowOf(now, WINDOW_DAYS);
      const [balances, categoryRows] = await Promise.all([
        reads.readBalanceQuartiles(params.brandId, now),
        reads.readCategoryPerformance(params.brandId, window.from, window.to),
      ]);
      const pricePoints = pricePointsOf(balances);
      const categories = rankCategories(categoryRows);
      const core = pricePoints.find((p) => p.tier === 'core');
      const suggestions = categories
        .filter((c) => !c.brandHas && c.redemptions30d > 0)
        .slice(0, 3)
        .map((c) => ({
          category: c.category,
          priceInPoints: core ? core.priceInPoints : c.medianCost,
          maxSupply: UNLIMITED,
          reason: `${c.redemptions30d} redemption(s) of ${c.perks} ${c.category} perk(s) at ${c.brands} brand(s) in ${WINDOW_DAYS} days; this brand has none; ${
            core
              ? `priced at the median balance of its members (${core.membersCanAffordNow} of ${balances.members} can afford it now)`
              : 'priced at the category median (the brand has no member yet)'
          }`,
        }));
      const notes: string[] = [];
      if (balances.members === 0) notes.push('The brand has no member yet: no price points');
      if (categories.length === 0) notes.push('The network has no active perk');
      else if (suggestions.length === 0)
        notes.push(`No category this brand lacks had a redemption in the last ${WINDOW_DAYS} days`);
      return {
        brandId: params.brandId,
        members: balances.members,
        pricePoints,
        categories,
        suggestions,
        basis: basisOf(window, balances.members, notes.length > 0 ? notes.join('; ') : undefined),
      };
    },
  });
}
