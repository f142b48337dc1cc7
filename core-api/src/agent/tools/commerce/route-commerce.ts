import { z } from 'zod';
import { earliestAfter, memberToken, nextUtcDay } from '../../../modules/ledger/member-answers.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { usdCents } from '../analytics.tools.ts';
import {
  amount,
  basis,
  brandCategory,
  intent,
  memberEarningsSchema,
  requireSignedForMember,
  userId,
} from './commerce-schemas.ts';
import type { RoutesToolDeps } from './commerce-tool-deps.ts';
import { routesAt } from './routes.ts';

const resultSchema = z.object({
  purchaseAmountUsd: z.string(),
  ptsPerUsd: z.number().int(),
  category: z.string().nullable(),
  intentTerms: z.array(z.string()),
  personalised: z.boolean(),
  routes: z.array(
    z.object({
      rank: z.number().int(),
      brandId: z.string(),
      name: z.string(),
      category: z.string().nullable(),
      eventType: z.string(),
      eventId: z.string(),
      rewardPts: amount,
      rewardUsd: z.string(),
      cashbackPercent: z.number().nullable(),
      acceptedLast30d: z.number().int(),
      member: memberEarningsSchema.nullable(),
      totalPts: amount,
      totalUsd: z.string(),
    }),
  ),
  brandsConsidered: z.number().int(),
  withoutPurchaseRule: z.number().int(),
  basis,
});

/** `route_commerce`: Where a purchase of N USD earns the most pts: brands ranked by their purchase rule. */
export function routeCommerceTool(d: RoutesToolDeps): AgentTool {
  const reads = d.commerceReads;
  return defineAgentTool({
    name: 'route_commerce',
    method: 'get',
    path: '/commerce/route',
    summary: 'Where a purchase of N USD earns the most pts: brands ranked by their purchase rule',
    description:
      "For a purchase of `purchaseAmount` USD (> 0, up to 2 decimals) at the brands of `category` (retail, gaming, dining, travel) whose name, domain or category matches `intent` (words of 3+ letters; any brand without intent): each brand's best active purchase rule (as `compare_cashback`: `earn` or a type containing purchase, order or checkout), its reward in pts, USD value at 1000 pts = 1 USD and cashback %, and the rule's accepted events in the last 30 days. Signed with `userId`: at the brands the key acts for, the member's own earnings — whether the rule still pays them (per-member limit, cooldown), their daily streak and today's open check-in reward (rule × streak multiplier; the multiplier applies to check-ins, not purchases) — and `totalPts` = what they would collect; elsewhere `member` is null. Ranked by totalPts (the reward without a member), then observed use, then Brand ID; at most 10. Brands without a purchase rule are counted in `withoutPurchaseRule`. `userId` unsigned is 401." +
      WINDOWED_ANSWER_NOTE,
    access: 'optional',
    request: {
      query: z.object({ intent, category: brandCategory, purchaseAmount: usdCents('purchaseAmount'), userId }),
    },
    result: resultSchema,
    example: (f) => ({ query: { purchaseAmount: '25', userId: f.userId } }),
    async handle({ query }, context) {
      if (!query.userId) return (await routesAt(d, query, context, context.clock.now(), undefined)).answer;
      requireSignedForMember(context, 'route_commerce');
      const brands = memberScope(context);
      const userId = query.userId;
      const args = JSON.stringify([query.intent ?? null, query.category ?? null, String(query.purchaseAmount)]);
      return keptWindowedAnswer(d, context, ['route_commerce', brands.join(','), userId, args], async (now) => {
        const accountKey = await reads.resolveAccountKey(userId);
        const { answer, members } = await routesAt(d, query, context, now, { userId, scope: new Set(brands) });
        const earnings = [...members.values()];
        return {
          value: answer,
          // The member's claims (events) and streaks (their account); brands and rules are dropped by any
          // brand change, the brands' 30-day purchases are a remembered aggregate.
          tokens: [memberToken(userId), memberToken(accountKey)],
          validUntil: earliestAfter(now, [nextUtcDay(now), ...earnings.flatMap((m) => m.changesAt)]),
          // A purchase rule with a global limit pays or not by every member's claims: not kept.
          keep: !earnings.some((m) => m.capped),
        };
      });
    },
  });
}
