import { achievementSchema, type MemberFigures, memberFiguresSchema } from '@pts/shared';
import { z } from 'zod';
import type { AchievementView } from '../../../modules/achievements/achievements.service.ts';
import { brandSettingsToken, earliestAfter, nextUtcDay } from '../../../modules/ledger/member-answers.ts';
import type { MemberLedger } from '../../../modules/ledger/member-ledger.ts';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { tierStandingOf, tierStandingSchema } from '../tiers/get-user-tier.ts';
import type { MemberToolDeps } from './actions-tool-deps.ts';
import {
  earnedFields,
  earnedView,
  keptMemberAnswer,
  memberTokens,
  requireMember,
  userBrandParams,
  userNotFound,
} from './member-views.ts';
import { type AgentStreakView, streakViewSchema, streakViews } from './streak-views.ts';

const resultSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  earnings: z.object({
    ...earnedFields,
    events: z.number().int(),
    lastEarnedAt: z.string().nullable(),
    byEventType: z.array(z.object({ eventType: z.string(), count: z.number().int(), amount: z.number().int() })),
  }),
  redemptions: z.object({
    count: z.number().int(),
    totalRedeemed: z.number().int(),
    pending: z.number().int(),
    pendingRedeemed: z.number().int(),
  }),
  streak: streakViewSchema,
  achievements: z.object({
    unlocked: z.number().int(),
    total: z.number().int(),
    items: z.array(achievementSchema),
  }),
  figures: memberFiguresSchema,
  tier: tierStandingSchema.meta({
    description:
      'The VIP tier (as get_user_tier): held tier, multiplier, next tier and what is left; `tier: null` without tiers',
  }),
});

/** get_user_stats' data: the member's ledger at the brand, streak and achievements. */
function statsOf(
  params: { userId: string; brandId: string },
  ledger: MemberLedger,
  streak: AgentStreakView,
  achievements: AchievementView[],
  figures: MemberFigures,
) {
  return {
    brandId: params.brandId,
    userId: params.userId,
    earnings: {
      ...earnedView(ledger),
      events: ledger.acceptedEvents,
      lastEarnedAt: ledger.lastEarnedAt?.toISOString() ?? null,
      byEventType: ledger.byEventType.map((row) => ({ ...row, amount: Number(row.amount) })),
    },
    redemptions: {
      count: ledger.redemptions,
      totalRedeemed: Number(ledger.redeemed),
      pending: ledger.pendingRedemptions,
      pendingRedeemed: Number(ledger.redeeming),
    },
    streak,
    achievements: {
      unlocked: achievements.filter((item) => item.unlocked).length,
      total: achievements.length,
      items: achievements,
    },
    figures,
  };
}

/** `get_user_stats`: A member's earnings, redemptions, streak and achievements at a brand. */
export function getUserStatsTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_stats',
    method: 'get',
    path: '/users/:userId/brands/:brandId/stats',
    summary: "A member's earnings, redemptions, streak and achievements at a brand",
    description:
      'Everything a brand knows of a member, all time: earnings (rewards accepted in pts whatever their mint ' +
      'state = confirmedEarned + pendingEarned, per event type, the last one), redemptions (confirmed count and pts spent; pending ones apart), the daily streak (current ' +
      'and longest in days, whether it still counts) and achievements (each with progress toward its ' +
      'threshold), and the VIP tier with the progress to the next (as get_user_tier). 404 when the user has no events or redemptions at the brand; 403 when the key does not act ' +
      'for the brand. `figures` labels the wallet and earned figures as /services/balance, get_user_balance and the portal name them.',
    access: 'key',
    request: { params: userBrandParams },
    result: resultSchema,
    example: (fixture) => ({ params: { userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a user's stats");
      const stats = await keptMemberAnswer(d, ['get_user_stats', params.brandId, params.userId], async () => {
        const { accountKey, identityKeys, ledger, wallet, figures } = await requireMember(
          d,
          context.principal,
          params,
          "Reading a user's stats",
        );
        const tokens = [
          ...memberTokens(params.userId, accountKey, identityKeys, wallet.walletAddress),
          brandSettingsToken(params.brandId),
        ];
        if (!ledger.known) return { value: { missing: userNotFound(params.userId, params.brandId) }, tokens };
        const now = context.clock.now();
        const [streak, achievements] = await Promise.all([
          streakViews(d, context, [params.brandId], accountKey).then(
            (views) => views.get(params.brandId) as AgentStreakView,
          ),
          d.actionsReads.readAchievements(params.brandId, accountKey),
        ]);
        return {
          value: {
            data: statsOf(params, ledger, streak, achievements, figures),
          },
          tokens,
          chain: wallet.walletAddress !== null,
          keep: wallet.settled,
          // The day turning (checkedInToday) or the streak lapsing changes the answer by time alone.
          validUntil: earliestAfter(now, [nextUtcDay(now), streak.expiresAt]),
        };
      });
      // Read after the kept answer, never kept with it: the period's turn moves a tier by time alone.
      const tier = tierStandingOf(await d.tiers.member(params.brandId, params.userId.toLowerCase()));
      return { ...stats, tier };
    },
  });
}
