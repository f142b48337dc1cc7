import { AppError, brandIdSchema } from '@pts/shared';
import { z } from 'zod';
import type { PerkActivity } from '../../../modules/analytics/perk-activity.ts';
import { brandPerksToken } from '../../../modules/ledger/member-answers.ts';
import { REFUSAL_TEXT, redeemableWithEnoughPts } from '../../../modules/perks/redemption-rule.ts';
import { readMemberSpendable } from '../../actions/member-spendable.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { goalEstimate } from '../../intelligence/formulas.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { basisOf, goalsResult, userParams, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { MemberToolDeps } from './intelligence-tool-deps.ts';
import { judge, loadMember, perksOf } from './member-reads.ts';

/**
 * The member's goals among `candidates`: the perks for which more pts are all the member lacks, fewest pts
 * missing first, and a note naming those left out (what else refuses them).
 */
function goalsOf(
  candidates: { brandId: string; perk: PerkActivity }[],
  claimsByPerk: Map<string, number>,
  balance: bigint,
  earned: bigint,
) {
  const judged = candidates.map((c) => ({ ...c, decision: judge(c.perk, claimsByPerk, 0n) }));
  const reachable = judged.filter(({ decision }) => redeemableWithEnoughPts(decision));
  const leftOut = judged.filter((c) => !reachable.includes(c));
  const limitNote =
    leftOut.length > 0
      ? `Left out: perks the member cannot redeem whatever their balance (${leftOut
          .map(({ perk, decision }) => {
            const why = decision.refusals.filter((refusal) => refusal !== 'insufficient_balance');
            return `${perk.perkId}: ${why.map((refusal) => REFUSAL_TEXT[refusal]).join(', ')}`;
          })
          .join(', ')})`
      : undefined;
  const goals = reachable
    .map(({ brandId, perk }) => {
      const g = goalEstimate(perk.cost, balance, earned, WINDOW_DAYS);
      return {
        perkId: perk.perkId,
        brandId,
        name: perk.name,
        cost: perk.cost.toString(),
        missing: g.missing.toString(),
        progressPercent: g.progressPercent,
        estimatedDays: g.estimatedDays,
      };
    })
    .sort((a, b) => Number(BigInt(a.missing) - BigInt(b.missing)) || a.perkId.localeCompare(b.perkId));
  return { goals, limitNote };
}

const goalsQuery = z.object({
  brandId: brandIdSchema.optional(),
  targetPerkId: z
    .string()
    .regex(/^\d{1,18}$/, "must be a perk's integer id (perkId of get_brand_perks or browse_perks)")
    .optional(),
});

/** `get_user_goals`: A member's progress toward perks at the key's brands. */
/** What the goals' basis says: no earning rate to estimate days with, and the perks left out. */
function goalsNote(earned: bigint, limitNote: string | undefined): string | undefined {
  return (
    [earned === 0n ? `No pts earned in the last ${WINDOW_DAYS} days: no rate to estimate days` : '', limitNote ?? '']
      .filter(Boolean)
      .join('; ') || undefined
  );
}

export function getUserGoalsTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_goals',
    method: 'get',
    path: '/users/:userId/goals',
    summary: "A member's progress toward perks at the key's brands",
    description:
      "Progress of one member toward the active perks of the brands this key acts for (or one `brandId` of the key, or one `targetPerkId`): cost, pts missing (cost − spendable balance, ≥ 0), progress % and estimated days at the member's own rate (pts earned at those brands in the last 30 days ÷ 30); estimatedDays is null when the member earned nothing in 30 days and 0 when already affordable. `balance` = what the member may spend now: their wallet's pts on chain less pending redemptions (every identity of their account; integer pts as a string), the balance redeem_perk judges with. Fewest pts missing first. 403 for a brand the key does not act for, 404 for an unknown member or perk." +
      WINDOWED_ANSWER_NOTE,
    access: 'key',
    request: {
      params: userParams,
      query: goalsQuery,
    },
    result: goalsResult,
    example: (f) => ({ params: { userId: f.userId }, query: { brandId: f.brandId } }),
    async handle({ params, query }, context) {
      const brands = memberScope(context, query.brandId);
      return keptWindowedAnswer(
        d,
        context,
        ['get_user_goals', brands.join(','), params.userId, query.targetPerkId ?? ''],
        async (now) => {
          const { member, window, activity, redemptions, tokens } = await loadMember(d, params.userId, brands, now);
          const [wallet, perBrand] = await Promise.all([readMemberSpendable(d, member), perksOf(d, brands, now)]);
          const balance = wallet.spendable;
          const candidates = perBrand.flatMap(({ brandId, perks }) =>
            perks
              .filter((p) => (query.targetPerkId ? p.perkId === query.targetPerkId : p.active))
              .map((perk) => ({ brandId, perk })),
          );
          if (query.targetPerkId && candidates.length === 0) {
            throw new AppError('PERK_NOT_FOUND', `No perk ${query.targetPerkId} at the brands this key acts for`);
          }
          const { goals, limitNote } = goalsOf(candidates, redemptions.claimsByPerk, balance, activity.earned);
          const answer = {
            userId: params.userId,
            balance: balance.toString(),
            dailyEarningRate: goalEstimate(0n, 0n, activity.earned, WINDOW_DAYS).dailyRate,
            goals,
            basis: basisOf(window, activity.events, goalsNote(activity.earned, limitNote)),
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
