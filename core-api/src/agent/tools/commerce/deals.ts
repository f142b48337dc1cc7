import type { PerkCatalogueItem } from '@pts/shared';
import { rememberRead } from '../../../caching/answer-cache.ts';
import { earliestAfter } from '../../../modules/ledger/member-answers.ts';
import type { MemberPerkClaims, OfferedPerkRow } from '../../../modules/perks/perks.repository.ts';
import { judgeCatalogueItem, redeemableWithEnoughPts } from '../../../modules/perks/redemption-rule.ts';
import { type MemberSpendable, readMemberSpendable } from '../../actions/member-spendable.ts';
import { agentPerkLimits } from '../../agent-limits.ts';
import { periodWindows } from '../../analytics/formulas.ts';
import { perkRecommendationScore } from '../../intelligence/formulas.ts';
import { memberNotFound } from '../../intelligence/member-scope.ts';
import { catalogueItemsOf } from '../discovery/catalogue-items.ts';
import { basisOf, COMMERCE_PERIOD, intentTerms, matchCount } from './commerce-schemas.ts';
import type { DealsToolDeps } from './commerce-tool-deps.ts';

type DealMember = {
  balance: bigint;
  claims: Map<string, MemberPerkClaims>;
  scope: Set<string>;
  wallet: MemberSpendable;
};

/** The member of a signed find_deals: spendable balance and claims of every perk; 404 without activity at `brands`. */
async function readDealMember(
  d: DealsToolDeps,
  { userId, brands }: { userId: string; brands: string[] },
  now: Date,
): Promise<DealMember> {
  const scope = new Set(brands);
  const resolved = await d.commerceReads.resolveMember(userId);
  // The member's claims of every perk of the network (deals span brands; the per-member limit holds
  // wherever the perk is), read once for all candidates.
  const [activity, claims] = await Promise.all([
    d.commerceReads.readMemberActivity(resolved, brands, new Date(0), now),
    d.commerceReads.readMemberPerkClaims(resolved),
  ]);
  const redeemedHere = [...claims.values()].some((c) => scope.has(c.brandId));
  if (activity.brands === 0 && !redeemedHere) throw memberNotFound(userId);
  const wallet = await readMemberSpendable(d, resolved);
  return { balance: wallet.spendable, claims, scope, wallet };
}

/**
 * The available offered perks matching `terms`; for a member only those judgeRedemption lets them redeem with
 * enough pts, counting those held at their per-member limit.
 */
function judgeDeals(
  offered: { row: OfferedPerkRow; item: PerkCatalogueItem }[],
  member: DealMember | undefined,
  terms: string[],
) {
  let heldAtLimit = 0;
  const candidates = offered
    .filter(({ item }) => item.available)
    .map(({ row, item }) => ({
      row,
      item,
      // judgeRedemption, as redeem_perk will ask it: a perk the member cannot redeem whatever their
      // balance (held at its per-member limit, sold out) is never offered.
      decision: member
        ? judgeCatalogueItem(item, member.balance, member.claims.get(String(item.id))?.claims ?? 0n)
        : undefined,
      matches: matchCount(terms, [item.name, item.description, item.category, row.brand_name, row.brand_category]),
    }))
    .filter((c) => terms.length === 0 || c.matches > 0)
    .filter(({ decision }) => {
      if (!decision || redeemableWithEnoughPts(decision)) return true;
      if (decision.refusals.includes('claim_limit_reached')) heldAtLimit++;
      return false;
    });
  return { candidates, heldAtLimit };
}

/** One deal as find_deals shows it: the perk, its popularity and, for a member, its score and what is missing. */
function dealOf(
  { row, item, matches, decision }: ReturnType<typeof judgeDeals>['candidates'][number],
  member: DealMember | undefined,
  max30: number,
) {
  const cost = BigInt(item.cost);
  const popularity = max30 > 0 ? row.redemptions / max30 : 0;
  // Novelty counts redemptions at the key's brands only (what the key may know of the member).
  const alreadyRedeemed = member ? member.scope.has(row.brand_id) && member.claims.has(String(item.id)) : null;
  return {
    ...agentPerkLimits(item),
    brandName: row.brand_name,
    brandCategory: row.brand_category,
    redemptions30d: row.redemptions,
    intentMatches: matches,
    score: member
      ? perkRecommendationScore({
          balance: member.balance,
          cost,
          redemptions30: row.redemptions,
          maxRedemptions30: max30,
          alreadyRedeemed: alreadyRedeemed ?? false,
        })
      : Math.round(popularity * 10000) / 100,
    affordable: decision ? decision.allowed : null,
    missingPts: decision ? decision.missing.toString() : null,
    alreadyRedeemed,
  };
}

/**
 * find_deals' answer at `now`; for a member (`asked`, a signed call) only the perks judgeRedemption lets them
 * redeem. `changesAt`: the first perk window edge after `now` (the answer changes then by time alone).
 */
export async function dealsAt(
  d: DealsToolDeps,
  query: { intent?: string | undefined; category?: string | undefined; budget?: number | undefined; limit: number },
  now: Date,
  asked: { userId: string; brands: string[] } | undefined,
) {
  const { current } = periodWindows(now, COMMERCE_PERIOD);
  const member = asked ? await readDealMember(d, asked, now) : undefined;
  const terms = intentTerms(query.intent);
  // Unsigned, the catalogue and its redemption counts are public and shared by every caller: remembered like
  // the other population reads (at most PTS_AGENT_ANSWER_MAX_AGE_SECONDS old). For a member they are read
  // with the member's figures: the member's whole answer is kept instead, until a perk or the member changes
  // (the handler). Supply is read live below.
  const filter = {
    brandCategory: query.category,
    maxCost: query.budget === undefined ? undefined : BigInt(query.budget),
  };
  const rows = asked
    ? await d.commerceReads.readOfferedPerks(filter, current)
    : await rememberRead(d, 'deal_candidates', { ...filter, days: current.days }, () =>
        d.commerceReads.readOfferedPerks(filter, current),
      );
  const offered = await catalogueItemsOf(d, rows);
  const changesAt = earliestAfter(
    now,
    offered.flatMap(({ item }) => [item.startsAt, item.endsAt]),
  );
  const { candidates, heldAtLimit } = judgeDeals(offered, member, terms);
  const max30 = Math.max(0, ...candidates.map((c) => c.row.redemptions));
  const deals = candidates
    .map((candidate) => dealOf(candidate, member, max30))
    .sort((a, b) => b.intentMatches - a.intentMatches || b.score - a.score || a.cost - b.cost || a.id - b.id)
    .slice(0, query.limit);
  const sample = candidates.reduce((s, c) => s + c.row.redemptions, 0);
  let note: string | undefined;
  if (candidates.length === 0 && heldAtLimit > 0)
    note = `The member already holds the per-member maximum of every matching perk (${heldAtLimit})`;
  else if (candidates.length === 0) note = 'No available perk matches these filters';
  else if (sample === 0) note = 'No redemption of these perks in the last 30 days: popularity is 0 for all';
  const answer = {
    deals,
    personalised: member !== undefined,
    userId: asked?.userId ?? null,
    balance: member ? member.balance.toString() : null,
    intentTerms: terms,
    candidates: candidates.length,
    basis: basisOf(current, sample, note),
  };
  return { answer, changesAt, wallet: member?.wallet };
}
