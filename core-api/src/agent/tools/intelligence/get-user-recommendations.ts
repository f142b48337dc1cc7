import { z } from 'zod';
import type { PerkActivity } from '../../../modules/analytics/perk-activity.ts';
import { brandPerksToken } from '../../../modules/ledger/member-answers.ts';
import { redeemableWithEnoughPts } from '../../../modules/perks/redemption-rule.ts';
import { readMemberSpendable } from '../../actions/member-spendable.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { perkRecommendationScore } from '../../intelligence/formulas.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { boundedInt } from '../discovery/discovery-schemas.ts';
import { amount, basis, basisOf, perkRecommendation, userParams } from './intelligence-schemas.ts';
import type { MemberToolDeps } from './intelligence-tool-deps.ts';
import { judge, loadMember, perksOf } from './member-reads.ts';

/**
 * The perks the member may redeem or lacks only pts for, scored (perkRecommendationScore) highest first, and
 * how many were left out because the member holds the per-member maximum.
 */
function rankPerks(
  perBrand: { brandId: string; perks: PerkActivity[] }[],
  redemptions: { perkIds: string[]; claimsByPerk: Map<string, number> },
  spendable: bigint,
) {
  const redeemed = new Set(redemptions.perkIds);
  let atLimit = 0;
  const scored = perBrand.flatMap(({ brandId, perks }) => {
    const max30 = Math.max(0, ...perks.map((p) => p.last30));
    return perks
      .map((p) => ({ p, decision: judge(p, redemptions.claimsByPerk, spendable) }))
      .filter(({ decision }) => {
        if (redeemableWithEnoughPts(decision)) return true;
        if (decision.refusals.includes('claim_limit_reached')) atLimit++;
        return false;
      })
      .map(({ p, decision }) => {
        const before = redeemed.has(p.perkId);
        const affordable = decision.allowed;
        return {
          kind: 'perk' as const,
          perkId: p.perkId,
          brandId,
          name: p.name,
          cost: p.cost.toString(),
          score: perkRecommendationScore({
            balance: spendable,
            cost: p.cost,
            redemptions30: p.last30,
            maxRedemptions30: max30,
            alreadyRedeemed: before,
          }),
          affordable,
          reason: `${affordable ? 'affordable now' : `${decision.missing} pts missing`}; ${p.last30} redemptions in 30 days; ${before ? 'already redeemed by this member' : 'never redeemed by this member'}`,
        };
      });
  });
  scored.sort(
    (a, b) => b.score - a.score || Number(BigInt(a.cost) - BigInt(b.cost)) || a.perkId.localeCompare(b.perkId),
  );
  return { scored, atLimit };
}

/** `get_user_recommendations`: Perks at the key's brands ranked for one member. */
export function getUserRecommendationsTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_recommendations',
    method: 'get',
    path: '/intelligence/users/:userId/recommendations',
    summary: "Perks at the key's brands ranked for one member",
    description:
      "Active perks (with supply left) of the brands this key acts for, ranked for one member by score = 50 × affordability (spendable balance ÷ cost, capped at 1; `balance` is what the member may spend now: their wallet's pts on chain less pending redemptions, every identity of their account — what redeem_perk judges with) + 30 × popularity (the perk's 30-day redemptions ÷ the brand's most redeemed perk's) + 20 × novelty (1 when the member never redeemed it). Score 0–100, highest first; `limit` 1–20 (default 5). Empty list with a note when the brands have no such perk. 404 when the member has no activity at the key's brands." +
      WINDOWED_ANSWER_NOTE,
    access: 'key',
    request: {
      params: userParams,
      query: z.object({ limit: boundedInt('limit', 1, 20, 5) }),
    },
    result: z.object({ userId: z.string(), balance: amount, recommendations: z.array(perkRecommendation), basis }),
    example: (f) => ({ params: { userId: f.userId }, query: { limit: 5 } }),
    async handle({ params, query }, context) {
      const brands = memberScope(context);
      return keptWindowedAnswer(
        d,
        context,
        ['get_user_recommendations', brands.join(','), params.userId, String(query.limit)],
        async (now) => {
          const { member, window, redemptions, tokens } = await loadMember(d, params.userId, brands, now);
          const [wallet, perBrand] = await Promise.all([readMemberSpendable(d, member), perksOf(d, brands, now)]);
          const { spendable } = wallet;
          const { scored, atLimit } = rankPerks(perBrand, redemptions, spendable);
          const answer = {
            userId: params.userId,
            balance: spendable.toString(),
            recommendations: scored.slice(0, query.limit),
            basis: basisOf(
              window,
              scored.length,
              scored.length > 0
                ? undefined
                : atLimit > 0
                  ? `The member already holds the per-member maximum of every available perk (${atLimit}) at the brands this key acts for`
                  : 'The brands this key acts for have no active perk with supply left',
            ),
          };
          return {
            value: answer,
            tokens: [...tokens, ...wallet.tokens, ...brands.map(brandPerksToken)],
            chain: wallet.chain,
            keep: wallet.keep,
          };
        },
      );
    },
  });
}
