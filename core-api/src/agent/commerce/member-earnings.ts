import { checkinReward } from '@pts/shared';
import { resolveAccountKey } from '../../modules/accounts/accounts.service.ts';
import { isUnlimited } from '../../modules/events/event-rules.ts';
import { CHECKIN_EVENT_TYPE } from '../../modules/streaks/streaks.service.ts';
import type { AgentToolContext, AgentToolDeps } from '../agent-tool.ts';
import type { BrandRule } from '../analytics/analytics.repository.ts';
import { streakViews } from '../tools/actions.tools.ts';
import { readMemberClaimsAt } from './commerce.repository.ts';

/**
 * What one member would earn at one brand around a purchase (docs/agent-api/commerce.md, "Member earnings"):
 * whether the purchase rule still pays them (per-member claim limit, cooldown), their daily streak, and the
 * check-in reward still open today. The streak multiplier applies to the daily check-in only (the streak
 * service's rule): a purchase pays the rule's flat amount.
 */
export async function memberEarnings(
  d: AgentToolDeps,
  context: Pick<AgentToolContext, 'clock'>,
  input: { brandId: string; userId: string; purchaseRule: BrandRule | undefined; rules: BrandRule[] },
) {
  const all = await membersEarnings(d, context, { userId: input.userId, brands: [input] });
  return all.get(input.brandId) as MemberEarnings;
}

export type MemberEarnings = ReturnType<typeof earningsAt>;

/**
 * memberEarnings at several brands (existing ones) for one member: three round trips whatever the number of
 * brands (the account key, then the streaks and the claim counters side by side).
 */
export async function membersEarnings(
  d: AgentToolDeps,
  context: Pick<AgentToolContext, 'clock'>,
  input: { userId: string; brands: { brandId: string; purchaseRule: BrandRule | undefined; rules: BrandRule[] }[] },
): Promise<Map<string, MemberEarnings>> {
  const now = context.clock.now();
  const accountKey = await resolveAccountKey(d.db, input.userId);
  const [streaks, claims] = await Promise.all([
    streakViews(
      d,
      context,
      input.brands.map((b) => b.brandId),
      accountKey,
    ),
    readMemberClaimsAt(
      d.db,
      input.userId,
      input.brands.flatMap((b) =>
        b.purchaseRule ? [{ brandId: b.brandId, eventType: b.purchaseRule.eventType }] : [],
      ),
    ),
  ]);
  const earnings = new Map<string, MemberEarnings>();
  for (const brand of input.brands) {
    const streak = streaks.get(brand.brandId);
    if (!streak) continue;
    earnings.set(
      brand.brandId,
      earningsAt(brand, streak, claims.get(brand.brandId) ?? { count: 0, lastAt: null }, now),
    );
  }
  return earnings;
}

function earningsAt(
  input: { purchaseRule: BrandRule | undefined; rules: BrandRule[] },
  streak: Awaited<ReturnType<typeof streakViews>> extends Map<string, infer V> ? V : never,
  claims: { count: number; lastAt: Date | null },
  now: Date,
) {
  const purchase = input.purchaseRule ? eligibility(input.purchaseRule, claims, now) : null;
  const checkinRule = input.rules.find((r) => r.active && r.eventType === CHECKIN_EVENT_TYPE);
  const checkinBonusPts =
    checkinRule && !streak.checkedInToday
      ? BigInt(checkinReward(Number(checkinRule.rewardAmount), streak.multiplier))
      : 0n;
  const purchasePts = purchase?.eligible && input.purchaseRule ? input.purchaseRule.rewardAmount : 0n;
  return {
    purchase: purchase ? { ...purchase, previousClaims: claims.count } : null,
    purchasePts,
    streak,
    checkinBonusPts,
    totalPts: purchasePts + checkinBonusPts,
  };
}

/** Whether the rule still pays this member now: its per-member limit and cooldown. */
function eligibility(rule: BrandRule, claims: { count: number; lastAt: Date | null }, now: Date) {
  if (!isUnlimited(rule.maxClaimsPerUser) && claims.count >= rule.maxClaimsPerUser) {
    return { eligible: false, reason: `already claimed ${claims.count} of ${rule.maxClaimsPerUser} times` };
  }
  if (rule.cooldownHours > 0 && claims.lastAt) {
    const until = new Date(claims.lastAt.getTime() + rule.cooldownHours * 3_600_000);
    if (until > now) return { eligible: false, reason: `in cooldown until ${until.toISOString()}` };
  }
  return { eligible: true, reason: null };
}
