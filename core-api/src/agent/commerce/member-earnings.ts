import { checkinReward } from '@pts/shared';
import { isUnlimited } from '../../modules/events/event-rules.ts';
import { CHECKIN_EVENT_TYPE } from '../../modules/streaks/streaks.service.ts';
import type { AgentToolContext, AgentToolDeps } from '../agent-tool.ts';
import type { BrandRule } from '../analytics/analytics.repository.ts';
import { streakView } from '../tools/actions.tools.ts';
import { readMemberClaims } from './commerce.repository.ts';

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
  const now = context.clock.now();
  const [streak, claims] = await Promise.all([
    streakView(d, context, input.brandId, input.userId),
    input.purchaseRule
      ? readMemberClaims(d.deps.db, input.brandId, input.userId, input.purchaseRule.eventType)
      : Promise.resolve({ count: 0, lastAt: null }),
  ]);
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
