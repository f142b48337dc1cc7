import { perkCatalogueItemSchema } from '@pts/shared';
import { z } from 'zod';
import { ANY_PERKS_TOKEN, memberToken } from '../../../modules/ledger/member-answers.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { amount, basis, brandCategory, DEALS_MAX, intent, requireSignedForMember, userId } from './commerce-schemas.ts';
import type { DealsToolDeps } from './commerce-tool-deps.ts';
import { dealsAt } from './deals.ts';

const resultSchema = z.object({
  deals: z.array(
    perkCatalogueItemSchema.extend({
      brandName: z.string(),
      brandCategory: z.string().nullable(),
      redemptions30d: z.number().int(),
      intentMatches: z.number().int(),
      score: z.number(),
      affordable: z.boolean().nullable(),
      missingPts: amount.nullable(),
      alreadyRedeemed: z.boolean().nullable(),
    }),
  ),
  personalised: z.boolean(),
  userId: z.string().nullable(),
  balance: amount
    .nullable()
    .describe(
      'What the member may spend now (their wallet on chain less pending redemptions, every identity of their account: what redeem_perk judges with), when personalised',
    ),
  intentTerms: z.array(z.string()),
  candidates: z.number().int(),
  basis,
});

/**
 * `find_deals`: Available perks across the network, ranked by real redemptions (and for a member, by what they can afford).
 */
export function findDealsTool(d: DealsToolDeps): AgentTool {
  return defineAgentTool({
    name: 'find_deals',
    method: 'get',
    path: '/deals',
    summary:
      'Available perks across the network, ranked by real redemptions (and for a member, by what they can afford)',
    description:
      "Active, on-chain perks with supply left, of brands of `category` (retail, gaming, dining, travel), costing at most `budget` pts, matching `intent` (words of 3+ letters found in the perk's name, description or category or the brand's name or category; perks matching more words first). Unsigned: score = 100 × popularity, popularity = the perk's redemptions in the last 30 days ÷ the most redeemed candidate's. Signed with `userId` (a member of the key's brands, else 404): only perks the member may redeem (never one they already hold the per-member maximum of — the rule redeem_perk applies); score = 50 × affordability (spendable balance ÷ cost, capped at 1) + 30 × popularity + 20 × novelty (never redeemed at the key's brands) — the recommendations formula — with `affordable` and `missingPts`. `userId` without a signature is 401. Highest score first, then cheaper; `limit` 1–50 (default 10). Empty list with a note when nothing matches." +
      WINDOWED_ANSWER_NOTE,
    access: 'optional',
    request: {
      query: z.object({
        intent,
        category: brandCategory,
        userId,
        budget: z.coerce
          .number({ message: 'budget must be a number of pts' })
          .int('budget must be a whole number of pts')
          .min(0, 'budget must be ≥ 0')
          .max(Number.MAX_SAFE_INTEGER)
          .optional(),
        limit: z.coerce
          .number({ message: 'limit must be a number' })
          .int('limit must be a whole number')
          .min(1, 'limit must be at least 1')
          .max(DEALS_MAX, `limit must be at most ${DEALS_MAX}`)
          .default(10),
      }),
    },
    result: resultSchema,
    example: (f) => ({ query: { userId: f.userId, limit: 5 } }),
    async handle({ query }, context) {
      if (!query.userId) return (await dealsAt(d, query, context.clock.now(), undefined)).answer;
      requireSignedForMember(context, 'find_deals');
      const brands = memberScope(context);
      const userId = query.userId;
      const args = JSON.stringify([query.intent ?? null, query.category ?? null, query.budget ?? null, query.limit]);
      return keptWindowedAnswer(d, context, ['find_deals', brands.join(','), userId, args], async (now) => {
        const { answer, changesAt, wallet } = await dealsAt(d, query, now, { userId, brands });
        return {
          value: answer,
          // The member's events, redemptions and wallet (every identity), and every brand's perks: deals span
          // the network. Supply and the balance are the chain's (kept while its head has not moved).
          tokens: [memberToken(userId), ...(wallet?.tokens ?? []), ANY_PERKS_TOKEN],
          chain: true,
          keep: wallet?.keep ?? true,
          validUntil: changesAt,
        };
      });
    },
  });
}
