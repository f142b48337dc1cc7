import { rememberRead } from '../../../caching/answer-cache.ts';
import type { PerkActivity } from '../../../modules/analytics/perk-activity.ts';
import { memberToken } from '../../../modules/ledger/member-answers.ts';
import { judgeRedemption } from '../../../modules/perks/redemption-rule.ts';
import { memberNotFound, windowOf } from '../../intelligence/member-scope.ts';
import { WINDOW_DAYS } from './intelligence-schemas.ts';
import type { EarningsDeps, MemberReadDeps } from './intelligence-tool-deps.ts';

/**
 * Members' earnings at `brands` over the window, ascending: a population aggregate, so computed at most
 * once per PTS_AGENT_ANSWER_MAX_AGE_SECONDS per brand set (docs/agent-api.md, "Freshness").
 */
export function earningsTotals(d: EarningsDeps, brands: string[], window: { from: Date; to: Date }): Promise<bigint[]> {
  return rememberRead(d, 'earnings_totals', { brands: [...brands].sort(), days: WINDOW_DAYS }, () =>
    d.intelligenceReads.readEarningsTotals(brands, window.from, window.to),
  );
}

/**
 * The member `userId` names (every identity of their account, resolved once) and their activity at the key's
 * brands; 404 when they have none there.
 */
export async function loadMember(d: MemberReadDeps, userId: string, brands: string[], now: Date) {
  const window = windowOf(now, WINDOW_DAYS);
  const member = await d.intelligenceReads.resolveMember(userId);
  const [activity, redemptions] = await Promise.all([
    d.intelligenceReads.readMemberActivity(member, brands, window.from, window.to),
    d.intelligenceReads.readMemberRedemptions(member, brands, window.from, window.to),
  ]);
  if (activity.brands === 0 && redemptions.perkIds.length === 0) throw memberNotFound(userId);
  return { member, window, activity, redemptions, tokens: member.identityKeys.map(memberToken) };
}

/** Each brand's perks with their activity at `now`. */
export async function perksOf(d: MemberReadDeps, brands: string[], now: Date) {
  const byBrand = await d.intelligenceReads.readPerkActivities(brands, now);
  return brands.map((brandId) => ({ brandId, perks: byBrand.get(brandId) ?? [] }));
}

/**
 * judgeRedemption for a perk and the member (claims and balance read once for all perks): recommendations and
 * goals offer only perks for which more pts are all the member lacks, as redeem_perk will decide.
 */
export const judge = (perk: PerkActivity, claimsByPerk: Map<string, number>, spendable: bigint) =>
  judgeRedemption({
    perk: {
      cost: perk.cost,
      active: perk.active,
      onChain: perk.onChain,
      maxSupply: perk.maxSupply,
      maxPerUser: perk.maxPerUser,
    },
    spendable,
    claimedTotal: perk.sold,
    memberClaims: BigInt(claimsByPerk.get(perk.perkId) ?? 0),
  });
