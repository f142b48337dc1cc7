import { AppError, brandIdSchema, cleanString, emailSchema, perkCatalogueItemSchema } from '@pts/shared';
import { z } from 'zod';
import { rememberRead } from '../../caching/answer-cache.ts';
import {
  ANY_PERKS_TOKEN,
  brandPerksToken,
  earliestAfter,
  memberToken,
  nextUtcDay,
} from '../../modules/ledger/member-answers.ts';
import { formatCents } from '../../modules/payments/payment-amounts.ts';
import type { MemberPerkClaims } from '../../modules/perks/perks.repository.ts';
import { judgeCatalogueItem, redeemableWithEnoughPts } from '../../modules/perks/redemption-rule.ts';
import { requireKnownBrand } from '../actions/brand-authority.ts';
import { cachedBrandRules, cachedRouteBrands } from '../actions/cached-brands.ts';
import { type MemberSpendable, readMemberSpendable } from '../actions/member-spendable.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../actions/windowed-answers.ts';
import { agentPerkLimits } from '../agent-limits.ts';
import { type AgentTool, type AgentToolContext, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import {
  bestPurchaseRule,
  type Period,
  PTS_PER_USD,
  periodWindows,
  ptsToUsd,
  purchaseReward,
} from '../analytics/formulas.ts';
import { type MemberEarnings, memberEarnings, membersEarnings } from '../commerce/member-earnings.ts';
import { perkRecommendationScore } from '../intelligence/formulas.ts';
import { memberNotFound, memberScope } from '../intelligence/member-scope.ts';
import { usdCents } from './analytics.tools.ts';
import { BRAND_CATEGORIES, catalogueItemsOf } from './discovery.tools.ts';

// Commerce (spec 4.1): deals, where to buy, and what one purchase stacks up to (docs/agent-api/commerce.md).

/** Popularity and the purchase rule's observed use read the last 30 days. */
const COMMERCE_PERIOD: Period = '30d';
/** Bounds (docs/agent-api/commerce.md). */
export const DEALS_MAX = 50;
export const ROUTES_MAX = 10;
const INTENT_MAX = 200;
const INTENT_TERMS_MAX = 10;

const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
const basis = z.object({
  period: z.string(),
  from: z.string(),
  to: z.string(),
  sampleSize: z.number().int(),
  note: z.string().optional(),
});
const intent = cleanString(z.string().max(INTENT_MAX, `intent must be at most ${INTENT_MAX} characters`))
  .optional()
  .describe('Free text: what the shopper wants ("coffee", "running shoes"); words of 3+ letters are matched');
const brandCategory = cleanString(z.string().transform((value) => value.toLowerCase()))
  .pipe(z.enum(BRAND_CATEGORIES, { message: `category must be one of ${BRAND_CATEGORIES.join(', ')}` }))
  .optional();
const userId = emailSchema.describe('The member (email-shaped); needs a signed call').optional();

/** The words of an intent a text is searched for: lower-case, 3+ letters or digits, at most 10, distinct. */
export function intentTerms(text: string | undefined): string[] {
  if (!text) return [];
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  return [...new Set(words.filter((w) => w.length >= 3))].slice(0, INTENT_TERMS_MAX);
}

/** How many of `terms` occur in any of `texts`. */
function matchCount(terms: string[], texts: (string | null)[]): number {
  const haystack = texts.filter(Boolean).join(' ').toLowerCase();
  return terms.filter((t) => haystack.includes(t)).length;
}

/** 401 for a member-specific question asked without a signature. */
function requireSignedForMember(context: AgentToolContext, tool: string) {
  if (!context.principal) {
    throw new AppError(
      'UNAUTHORIZED',
      `${tool} with userId reads member data and needs a signed call (X-PTS-Agent-Key); drop userId for the public answer`,
    );
  }
}

function basisOf(window: { from: Date; to: Date }, sampleSize: number, note?: string) {
  return {
    period: COMMERCE_PERIOD,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

const streakSchema = z.object({
  current: z.number().int(),
  multiplier: z.number(),
  checkedInToday: z.boolean(),
  checkinBonusPts: amount.describe("Today's daily check-in reward still open: rule × multiplier; 0 when done"),
});

const memberEarningsSchema = z.object({
  purchaseEligible: z.boolean(),
  reason: z.string().nullable(),
  purchasePts: amount,
  streak: streakSchema,
  totalPts: amount,
});

function memberView(m: Awaited<ReturnType<typeof memberEarnings>>) {
  return {
    purchaseEligible: m.purchase?.eligible ?? false,
    reason: m.purchase ? m.purchase.reason : 'no active purchase rule',
    purchasePts: m.purchasePts.toString(),
    streak: {
      current: m.streak.current,
      multiplier: m.streak.multiplier,
      checkedInToday: m.streak.checkedInToday,
      checkinBonusPts: m.checkinBonusPts.toString(),
    },
    totalPts: m.totalPts.toString(),
  };
}

/** The commerce tools (spec 4.1): `find_deals`, `route_commerce`, `stack_commerce`. */
export function commerceTools(d: AgentToolDeps): AgentTool[] {
  const reads = d.commerceReads;

  /**
   * find_deals' answer at `now`; for a member (`asked`, a signed call) only the perks judgeRedemption lets them
   * redeem. `changesAt`: the first perk window edge after `now` (the answer changes then by time alone).
   */
  async function dealsAt(
    query: { intent?: string | undefined; category?: string | undefined; budget?: number | undefined; limit: number },
    now: Date,
    asked: { userId: string; brands: string[] } | undefined,
  ) {
    const { current } = periodWindows(now, COMMERCE_PERIOD);
    let member:
      | { balance: bigint; claims: Map<string, MemberPerkClaims>; scope: Set<string>; wallet: MemberSpendable }
      | undefined;
    if (asked) {
      const { userId, brands } = asked;
      const scope = new Set(brands);
      const resolved = await reads.resolveMember(userId);
      // The member's claims of every perk of the network (deals span brands; the per-member limit holds
      // wherever the perk is), read once for all candidates.
      const [activity, claims] = await Promise.all([
        reads.readMemberActivity(resolved, brands, new Date(0), now),
        reads.readMemberPerkClaims(resolved),
      ]);
      const redeemedHere = [...claims.values()].some((c) => scope.has(c.brandId));
      if (activity.brands === 0 && !redeemedHere) throw memberNotFound(userId);
      const wallet = await readMemberSpendable(d, resolved);
      member = { balance: wallet.spendable, claims, scope, wallet };
    }
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
      ? await reads.readOfferedPerks(filter, current)
      : await rememberRead(d, 'deal_candidates', { ...filter, days: current.days }, () =>
          reads.readOfferedPerks(filter, current),
        );
    let heldAtLimit = 0;
    const offered = await catalogueItemsOf(d, rows);
    const changesAt = earliestAfter(
      now,
      offered.flatMap(({ item }) => [item.startsAt, item.endsAt]),
    );
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
    const max30 = Math.max(0, ...candidates.map((c) => c.row.redemptions));
    const deals = candidates
      .map(({ row, item, matches, decision }) => {
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
      })
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

  /**
   * route_commerce's answer at `now`; for a member (`asked`, a signed call) with their earnings at the brands
   * of `asked.scope` (the key's), which are returned too.
   */
  async function routesAt(
    query: {
      intent?: string | undefined;
      category?: string | undefined;
      purchaseAmount: bigint;
      userId?: string | undefined;
    },
    context: AgentToolContext,
    now: Date,
    asked: { userId: string; scope: Set<string> } | undefined,
  ) {
    const { current } = periodWindows(now, COMMERCE_PERIOD);
    const scope = asked?.scope ?? new Set<string>();
    const terms = intentTerms(query.intent);
    const network = await cachedRouteBrands(d, query.category);
    const brands = network.brands.filter(
      (b) => terms.length === 0 || matchCount(terms, [b.name, b.domain, b.category]) > 0,
    );
    const ids = brands.map((b) => b.brandId);
    const rules = network.rules;
    const accepted = await rememberRead(d, 'accepted_by_type', { ids: [...ids].sort(), days: current.days }, () =>
      reads.readAcceptedByType(ids, current),
    );
    const withRule = brands.flatMap((brand) => {
      const brandRules = rules.get(brand.brandId) ?? [];
      const rule = bestPurchaseRule(brandRules);
      return rule ? [{ brand, rule, brandRules }] : [];
    });
    // The member's earnings at every brand of the key at once (three round trips, not three per brand).
    const members = asked
      ? await membersEarnings(d, context, {
          userId: asked.userId,
          brands: withRule
            .filter((c) => scope.has(c.brand.brandId))
            .map((c) => ({ brandId: c.brand.brandId, purchaseRule: c.rule, rules: c.brandRules })),
        })
      : new Map<string, MemberEarnings>();
    const candidates = [];
    for (const { brand, rule } of withRule) {
      const member = members.get(brand.brandId);
      const total = member ? member.totalPts : rule.rewardAmount;
      candidates.push({
        brand,
        rule,
        member,
        total,
        acceptedLast30d: accepted.get(`${brand.brandId} ${rule.eventType}`) ?? 0,
      });
    }
    candidates.sort(
      (a, b) =>
        (b.total > a.total ? 1 : b.total < a.total ? -1 : 0) ||
        b.acceptedLast30d - a.acceptedLast30d ||
        a.brand.brandId.localeCompare(b.brand.brandId),
    );
    const routes = candidates.slice(0, ROUTES_MAX).map((c, i) => ({
      rank: i + 1,
      brandId: c.brand.brandId,
      name: c.brand.name,
      category: c.brand.category,
      eventType: c.rule.eventType,
      eventId: c.rule.eventId,
      ...purchaseReward(c.rule.rewardAmount, query.purchaseAmount),
      acceptedLast30d: c.acceptedLast30d,
      member: c.member ? memberView(c.member) : null,
      totalPts: c.total.toString(),
      totalUsd: ptsToUsd(c.total),
    }));
    const sample = candidates.reduce((s, c) => s + c.acceptedLast30d, 0);
    let note: string | undefined;
    if (brands.length === 0) note = 'No brand matches the category and intent';
    else if (candidates.length === 0) note = 'None of the matching brands has an active purchase rule';
    const answer = {
      purchaseAmountUsd: formatCents(query.purchaseAmount),
      ptsPerUsd: PTS_PER_USD,
      category: query.category ?? null,
      intentTerms: terms,
      personalised: asked !== undefined,
      routes,
      brandsConsidered: brands.length,
      withoutPurchaseRule: brands.length - candidates.length,
      basis: basisOf(current, sample, note),
    };
    return { answer, members };
  }

  return [
    defineAgentTool({
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
      result: z.object({
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
      }),
      example: (f) => ({ query: { userId: f.userId, limit: 5 } }),
      async handle({ query }, context) {
        if (!query.userId) return (await dealsAt(query, context.clock.now(), undefined)).answer;
        requireSignedForMember(context, 'find_deals');
        const brands = memberScope(context);
        const userId = query.userId;
        const args = JSON.stringify([query.intent ?? null, query.category ?? null, query.budget ?? null, query.limit]);
        return keptWindowedAnswer(d, context, ['find_deals', brands.join(','), userId, args], async (now) => {
          const { answer, changesAt, wallet } = await dealsAt(query, now, { userId, brands });
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
    }),

    defineAgentTool({
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
      result: z.object({
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
      }),
      example: (f) => ({ query: { purchaseAmount: '25', userId: f.userId } }),
      async handle({ query }, context) {
        if (!query.userId) return (await routesAt(query, context, context.clock.now(), undefined)).answer;
        requireSignedForMember(context, 'route_commerce');
        const brands = memberScope(context);
        const userId = query.userId;
        const args = JSON.stringify([query.intent ?? null, query.category ?? null, String(query.purchaseAmount)]);
        return keptWindowedAnswer(d, context, ['route_commerce', brands.join(','), userId, args], async (now) => {
          const accountKey = await reads.resolveAccountKey(userId);
          const { answer, members } = await routesAt(query, context, now, { userId, scope: new Set(brands) });
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
    }),

    defineAgentTool({
      name: 'stack_commerce',
      method: 'get',
      path: '/commerce/stack',
      summary: 'Everything one purchase at a brand earns a member, and which perks it unlocks',
      description:
        "For member `userId` buying for `purchaseAmount` USD at `brandId` (a brand this key acts for, else 403): the brand's best active purchase rule (reward in pts, USD at 1000 pts = 1 USD, cashback %) and whether it still pays this member (per-member claim limit, cooldown); the member's daily streak and today's open check-in reward (daily rule × streak multiplier — the multiplier applies to check-ins, not purchases); `earn.totalPts` = purchase + check-in; the member's spendable balance (their wallet on chain less pending redemptions, every identity of their account: pts are one token) now and after; and the brand's available perks the member may still redeem (never one they hold the per-member maximum of — the rule redeem_perk applies) split into affordable now, unlocked by this purchase, and the next one out of reach with the pts missing. A member new to the brand is answered with zeros. Without a purchase rule the purchase earns 0 and a note says so." +
        WINDOWED_ANSWER_NOTE,
      access: 'key',
      request: {
        query: z.object({
          brandId: brandIdSchema,
          purchaseAmount: usdCents('purchaseAmount'),
          userId: emailSchema.describe('The member (email-shaped)'),
        }),
      },
      result: z.object({
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
      }),
      example: (f) => ({ query: { brandId: f.brandId, purchaseAmount: '25', userId: f.userId } }),
      async handle({ query }, context) {
        memberScope(context, query.brandId);
        await requireKnownBrand(d, query.brandId);
        const key = ['stack_commerce', query.brandId, query.userId, String(query.purchaseAmount)];
        return keptWindowedAnswer(d, context, key, async (now) => {
          const { current } = periodWindows(now, COMMERCE_PERIOD);
          const rules = (await cachedBrandRules(d, [query.brandId])).get(query.brandId) ?? [];
          const rule = bestPurchaseRule(rules);
          const member = await reads.resolveMember(query.userId);
          const [earnings, wallet, catalogue] = await Promise.all([
            memberEarnings(d, context, { brandId: query.brandId, userId: query.userId, purchaseRule: rule, rules }),
            readMemberSpendable(d, member),
            reads.listMemberCatalogue(
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
          const answer = {
            brandId: query.brandId,
            userId: query.userId,
            purchaseAmountUsd: formatCents(query.purchaseAmount),
            purchase: rule
              ? {
                  eventType: rule.eventType,
                  eventId: rule.eventId,
                  ...purchaseReward(rule.rewardAmount, query.purchaseAmount),
                  eligible: earnings.purchase?.eligible ?? false,
                  reason: earnings.purchase?.reason ?? null,
                  previousClaims: earnings.purchase?.previousClaims ?? 0,
                }
              : null,
            streak: memberView(earnings).streak,
            earn: {
              purchasePts: earnings.purchasePts.toString(),
              checkinBonusPts: earnings.checkinBonusPts.toString(),
              totalPts: earnings.totalPts.toString(),
              totalUsd: ptsToUsd(earnings.totalPts),
            },
            balance: { now: balance.toString(), afterPurchase: after.toString() },
            perks: {
              affordableNow: judged.filter((p) => p.now.allowed).map((p) => agentPerkLimits(p.item)),
              unlockedByThisPurchase: judged
                .filter((p) => !p.now.allowed && p.after.allowed)
                .map((p) => agentPerkLimits(p.item)),
              next: next ? { ...agentPerkLimits(next.item), missingPts: next.after.missing.toString() } : null,
            },
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
        });
      },
    }),
  ];
}
