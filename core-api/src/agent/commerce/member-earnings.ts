import { checkinReward } from '@pts/shared';
import { ruleKeyOf } from '../../modules/events/events.repository.ts';
import type { EarningPreview } from '../../modules/events/events.service.ts';
import { CHECKIN_EVENT_TYPE } from '../../modules/streaks/streaks.service.ts';
import type { AgentToolContext } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import type { BrandRule } from '../analytics/analytics.repository.ts';
import { streakViews } from '../tools/actions/streak-views.ts';

/** What a member's earnings at brands read: the commerce and member reads and the brand cache. */
export type MemberEarningsDeps = Pick<AgentToolDeps, 'commerceReads' | 'actionsReads' | 'events'>;

/**
 * What one member would earn at one brand around a purchase (docs/agent-api/commerce.md, "Member earnings"):
 * whether the purchase rule still pays them (the event judge's own rule: per-member claim limit, cooldown,
 * global limit — events.service `previewEarnings`), their daily streak, and the
 * check-in reward still open today. The streak multiplier applies to the daily check-in only (the streak
 * service's rule): a purchase pays the rule's flat amount.
 */
export async function memberEarnings(
  d: MemberEarningsDeps,
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
  d: MemberEarningsDeps,
  context: Pick<AgentToolContext, 'clock'>,
  input: { userId: string; brands: { brandId: string; purchaseRule: BrandRule | undefined; rules: BrandRule[] }[] },
): Promise<Map<string, MemberEarnings>> {
  const now = context.clock.now();
  const accountKey = await d.commerceReads.resolveAccountKey(input.userId);
  const purchaseRules = input.brands.flatMap((b) =>
    b.purchaseRule ? [{ brandId: b.brandId, rule: ruleRecordOf(b.brandId, b.purchaseRule) }] : [],
  );
  const [streaks, previews] = await Promise.all([
    streakViews(
      d,
      context,
      input.brands.map((b) => b.brandId),
      accountKey,
    ),
    d.commerceReads.previewEarnings(
      purchaseRules.map((p) => p.rule),
      input.userId,
      now,
    ),
  ]);
  const earnings = new Map<string, MemberEarnings>();
  for (const brand of input.brands) {
    const streak = streaks.get(brand.brandId);
    if (!streak) continue;
    const preview = brand.purchaseRule
      ? previews.get(ruleKeyOf({ brand_id: brand.brandId, id: brand.purchaseRule.eventId }))
      : undefined;
    earnings.set(brand.brandId, earningsAt(brand, streak, preview));
  }
  return earnings;
}

/** A rule as the event judge reads it. */
function ruleRecordOf(brandId: string, rule: BrandRule) {
  return {
    brand_id: brandId,
    id: rule.eventId,
    event_type: rule.eventType,
    cooldown_hours: rule.cooldownHours,
    max_claims_per_user: rule.maxClaimsPerUser,
  };
}

function earningsAt(
  input: { purchaseRule: BrandRule | undefined; rules: BrandRule[] },
  streak: Awaited<ReturnType<typeof streakViews>> extends Map<string, infer V> ? V : never,
  preview: EarningPreview | undefined,
) {
  const purchase = input.purchaseRule && preview ? eligibility(input.purchaseRule, preview) : null;
  const checkinRule = input.rules.find((r) => r.active && r.eventType === CHECKIN_EVENT_TYPE);
  const checkinBonusPts =
    checkinRule && !streak.checkedInToday
      ? BigInt(checkinReward(Number(checkinRule.rewardAmount), streak.multiplier))
      : 0n;
  const purchasePts = purchase?.eligible && input.purchaseRule ? input.purchaseRule.rewardAmount : 0n;
  return {
    purchase: purchase
      ? { eligible: purchase.eligible, reason: purchase.reason, previousClaims: preview?.claims ?? 0 }
      : null,
    purchasePts,
    streak,
    checkinBonusPts,
    totalPts: purchasePts + checkinBonusPts,
    /**
     * When the answer changes by time alone (kept answers, modules/ledger/member-answers.ts): the purchase
     * rule's cooldown ending, the streak lapsing. The UTC day turning (checkedInToday) is the caller's.
     */
    changesAt: [purchase?.cooldownUntil ?? null, streak.expiresAt],
    /** The purchase rule has a global limit: whether it pays depends on every member's claims. */
    capped: preview?.capped ?? false,
  };
}

/** The event judge's answer for the purchase rule, said for a person. */
function eligibility(
  rule: BrandRule,
  preview: EarningPreview,
): { eligible: boolean; reason: string | null; cooldownUntil?: Date } {
  const { refusal } = preview;
  if (!refusal) return { eligible: true, reason: null };
  const details = (refusal.details ?? {}) as { maxClaims?: number; maxTotal?: number; message?: string };
  switch (refusal.code) {
    case 'MAX_CLAIMS_REACHED':
      return { eligible: false, reason: `already claimed ${preview.claims} of ${details.maxClaims} times` };
    case 'COOLDOWN_ACTIVE': {
      const until = new Date((preview.lastClaimAt?.getTime() ?? 0) + rule.cooldownHours * 3_600_000);
      return { eligible: false, reason: `in cooldown until ${until.toISOString()}`, cooldownUntil: until };
    }
    case 'MAX_TOTAL_CLAIMS_REACHED':
      return { eligible: false, reason: `the rule reached its limit of ${details.maxTotal} claims for all members` };
    default:
      return { eligible: false, reason: details.message ?? refusal.message };
  }
}
