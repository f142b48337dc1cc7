import type { PerkCatalogueItem } from '@pts/shared';
import { brandIdSchema, emailSchema, perkCatalogueItemSchema } from '@pts/shared';
import { z } from 'zod';
import { brandPerksToken, earliestAfter, memberToken, nextUtcDay } from '../../../modules/ledger/member-answers.ts';
import { formatCents } from '../../../modules/payments/payment-amounts.ts';
import { judgeCatalogueItem, redeemableWithEnoughPts } from '../../../modules/perks/redemption-rule.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { cachedBrandRules } from '../../actions/cached-brands.ts';
import { readMemberSpendable } from '../../actions/member-spendable.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { agentPerkLimits } from '../../agent-limits.ts';
import type { AgentToolContext } from '../../agent-tool.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { BrandRule } from '../../analytics/analytics.repository.ts';
import { periodWindows, pricedPurchaseRule, ptsToUsd, purchaseReward } from '../../analytics/formulas.ts';
import type { MemberEarnings } from '../../commerce/member-earnings.ts';
import { memberEarnings } from '../../commerce/member-earnings.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { usdCents } from '../analytics.tools.ts';
import { amount, basis, basisOf, COMMERCE_PERIOD, memberView, streakSchema } from './commerce-schemas.ts';
import type { StackToolDeps } from './commerce-tool-deps.ts';

const resultSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  purchaseAmountUsd: z.string(),
  purchase: z
    .object({
      eventType: z.string(),
      eventId: z.string(),
      rewardPts: amount,
      rewardUsd: z.string(),
      cashbackPercent: z.number().nullable(),
      eligible: z.boolean(),
      reason: z.string().nullable(),
      previousClaims: z.number().int(),
    })
    .nullable(),
  streak: streakSchema,
  earn: z.object({ purchasePts: amount, checkinBonusPts: amount, totalPts: amount, totalUsd: z.string() }),
  balance: z.object({ now: amount, afterPurchase: amount }),
  perks: z.object({
    affordableNow: z.array(perkCatalogueItemSchema),
    unlockedByThisPurchase: z.array(perkCatalogueItemSchema),
    next: perkCatalogueItemSchema.extend({ missingPts: amount }).nullable(),
  }),
  basis,
});

const stackQuery = z.object({
  brandId: brandIdSchema,
  purchaseAmount: usdCents('purchaseAmount'),
  userId: emailSchema.describe('The member (email-shaped)'),
});

/**
 * The brand's available perks the member may still redeem, judged with the balance now and after the purchase
 * (judgeRedemption): affordable now, unlocked by this purchase, and the next one out of reach.
 */
function stackedPerks(perks: { item: PerkCatalogueItem; memberClaims: bigint }[], balance: bigint, after: bigint) {
  // judgeRedemption with the balance now and after the purchase: a perk the member cannot redeem
  // whatever their balance (held at its per-member limit) is in none of the lists.
  const judged = perks
    .map(({ item, memberClaims }) => ({
      item,
      now: judgeCatalogueItem(item, balance, memberClaims),
      after: judgeCatalogueItem(item, after, memberClaims),
    }))
    .filter((p) => redeemableWithEnoughPts(p.now))
    .sort((a, b) => a.item.cost - b.item.cost || a.item.id - b.item.id);
  const next = judged.find((p) => !p.after.allowed);
  return {
    affordableNow: judged.filter((p) => p.now.allowed).map((p) => agentPerkLimits(p.item)),
    unlockedByThisPurchase: judged.filter((p) => !p.now.allowed && p.after.allowed).map((p) => agentPerkLimits(p.item)),
    next: next ? { ...agentPerkLimits(next.item), missingPts: next.after.missing.toString() } : null,
  };
}

/** The purchase rule's reward for the purchase and whether it still pays this member. */
function purchaseView(rule: BrandRule, earnings: MemberEarnings, purchaseAmount: bigint) {
  return {
    eventType: rule.eventType,
    eventId: rule.eventId,
    ...purchaseReward(rule, purchaseAmount),
    eligible: earnings.purchase?.eligible ?? false,
    reason: earnings.purchase?.reason ?? null,
    previousClaims: earnings.purchase?.previousClaims ?? 0,
  };
}

/** stack_commerce's answer for the member at `now`, with what it depends on. */
async function stackAt(d: StackToolDeps, context: AgentToolContext, query: z.output<typeof stackQuery>, now: Date) {
  const { current } = periodWindows(now, COMMERCE_PERIOD);
  const rules = (await cachedBrandRules(d, [query.brandId])).get(query.brandId) ?? [];
  const rule = pricedPurchaseRule(rules, query.purchaseAmount);
  const member = await d.commerceReads.resolveMember(query.userId);
  const [earnings, wallet, catalogue] = await Promise.all([
    memberEarnings(d, context, { brandId: query.brandId, userId: query.userId, purchaseRule: rule, rules }),
    readMemberSpendable(d, member),
    d.commerceReads.listMemberCatalogue(
      {
        clock: context.clock,
        perkChain: d.perkChain,
        logger: context.logger,
        brands: d.events.brands,
      },
      query.brandId,
      member,
    ),
  ]);
  const perks = catalogue.filter(({ item }) => item.available);
  const balance = wallet.spendable;
  const after = balance + earnings.totalPts;
  const answer = {
    brandId: query.brandId,
    userId: query.userId,
    purchaseAmountUsd: formatCents(query.purchaseAmount),
    purchase: rule ? purchaseView(rule, earnings, query.purchaseAmount) : null,
    streak: memberView(earnings).streak,
    earn: {
      purchasePts: earnings.purchasePts.toString(),
      checkinBonusPts: earnings.checkinBonusPts.toString(),
      totalPts: earnings.totalPts.toString(),
      totalUsd: ptsToUsd(earnings.totalPts),
    },
    balance: { now: balance.toString(), afterPurchase: after.toString() },
    perks: stackedPerks(perks, balance, after),
    basis: basisOf(
      current,
      rules.filter((r) => r.active).length + perks.length,
      rule ? undefined : 'The brand has no active purchase rule: a purchase earns no pts here',
    ),
  };
  return {
    value: answer,
    // The member's claims, wallet and redemptions (every identity) and streak (their account); the
    // brand's perks (terms, anyone's redemption); supply and the balance are the chain's.
    tokens: [memberToken(query.userId), ...wallet.tokens, brandPerksToken(query.brandId)],
    chain: true,
    validUntil: earliestAfter(now, [
      nextUtcDay(now),
      ...earnings.changesAt,
      ...catalogue.flatMap(({ item }) => [item.startsAt, item.endsAt]),
    ]),
    // A purchase rule with a global limit pays or not by every member's claims: not kept.
    keep: !earnings.capped && wallet.keep,
  };
}

/** `stack_commerce`: Everything one purchase at a brand earns a member, and which perks it unlocks. */
export function stackCommerceTool(d: StackToolDeps): AgentTool {
  return defineAgentTool({
    name: 'stack_commerce',
    method: 'get',
    path: '/commerce/stack',
    summary: 'Everything one purchase at a brand earns a member, and which perks it unlocks',
    description:
      "For member `userId` buying for `purchaseAmount` USD at `brandId` (a brand this key acts for, else 403): the brand's best active purchase rule (reward in pts, USD at 1000 pts = 1 USD, cashback %) and whether it still pays this member (per-member claim limit, cooldown); the member's daily streak and today's open check-in reward (daily rule × streak multiplier — the multiplier applies to check-ins, not purchases); `earn.totalPts` = purchase + check-in; the member's spendable balance (their wallet on chain less pending redemptions, every identity of their account: pts are one token) now and after; and the brand's available perks the member may still redeem (never one they hold the per-member maximum of — the rule redeem_perk applies) split into affordable now, unlocked by this purchase, and the next one out of reach with the pts missing. A member new to the brand is answered with zeros. Without a purchase rule the purchase earns 0 and a note says so." +
      WINDOWED_ANSWER_NOTE,
    access: 'key',
    request: { query: stackQuery },
    result: resultSchema,
    example: (f) => ({ query: { brandId: f.brandId, purchaseAmount: '25', userId: f.userId } }),
    async handle({ query }, context) {
      memberScope(context, query.brandId);
      await requireKnownBrand(d, query.brandId);
      const key = ['stack_commerce', query.brandId, query.userId, String(query.purchaseAmount)];
      return keptWindowedAnswer(d, context, key, (now) => stackAt(d, context, query, now));
    },
  });
}
