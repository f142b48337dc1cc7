import { AppError, brandIdSchema, perkRefSchema, UNLIMITED } from '@pts/shared';
import { z } from 'zod';
import { rememberRead } from '../../caching/answer-cache.ts';
import type { PerkActivity } from '../../modules/analytics/perk-activity.ts';
import { countBelow } from '../../modules/ledger/member-activity.ts';
import { brandPerksToken, memberToken } from '../../modules/ledger/member-answers.ts';
import { judgeRedemption, REFUSAL_TEXT, redeemableWithEnoughPts } from '../../modules/perks/redemption-rule.ts';
import { requireKnownBrand } from '../actions/brand-authority.ts';
import { readMemberSpendable } from '../actions/member-spendable.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../actions/windowed-answers.ts';
import { limitTextOut, limitTextSchema } from '../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import {
  ARCHETYPES,
  type Archetype,
  archetypeDistribution,
  classifyArchetype,
  conversionRate,
  DORMANT_AFTER_DAYS,
  daysToSellOut,
  goalEstimate,
  heatScore,
  lowerMedian,
  mostCommon,
  percentileRank,
  perkRecommendationScore,
  ratio,
  redemptionVelocity,
  sharePercent,
} from '../intelligence/formulas.ts';
import { memberNotFound, memberScope, windowOf } from '../intelligence/member-scope.ts';
import { boundedInt } from './discovery.tools.ts';

/** Persona and earning rates look at this many days before now. */
const WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

const userParams = z.object({ userId: z.string().trim().min(1).max(320) });
const brandParams = z.object({ brandId: brandIdSchema });
const amount = z
  .string()
  .regex(/^-?\d+$/)
  .describe('integer pts, as a string');
const basis = z.object({
  period: z.string(),
  from: z.string(),
  to: z.string(),
  sampleSize: z.number().int(),
  note: z.string().optional(),
});

const archetypeSchema = z.enum(ARCHETYPES as [Archetype, ...Archetype[]]);

const personaResult = z.object({
  userId: z.string(),
  archetype: archetypeSchema,
  behaviour: z.object({
    events: z.number().int(),
    eventsPerActiveDay: z.number(),
    activeDays: z.number().int(),
    daysSinceLastEvent: z.number().int().nullable(),
    eventTypeMix: z.array(z.object({ eventType: z.string(), count: z.number().int(), share: z.number() })),
    redemptions: z.number().int(),
    earned: amount,
    spent: amount,
  }),
  brandAffinities: z.array(
    z.object({ brandId: z.string(), events: z.number().int(), earned: amount, share: z.number() }),
  ),
  network: z.object({
    brands: z.number().int(),
    earningsPercentile: z.number().nullable(),
    population: z.number().int(),
  }),
  basis,
});

const perkRecommendation = z.object({
  kind: z.literal('perk'),
  perkId: z.string(),
  brandId: z.string(),
  name: z.string(),
  cost: amount,
  score: z.number(),
  affordable: z.boolean(),
  reason: z.string(),
});

const perkIntelligenceResult = z.object({
  brandId: z.string(),
  members: z.number().int(),
  perks: z.array(
    z.object({
      perkId: z.string(),
      name: z.string(),
      cost: amount,
      active: z.boolean(),
      heatScore: z.number(),
      redemptions7d: z.number().int(),
      redemptions30d: z.number().int(),
      velocityPerDay: z.number(),
      funnel: z.object({
        couldAfford: z.number().int(),
        redeemers30d: z.number().int(),
        conversionPercent: z.number().nullable(),
      }),
      supply: z.object({
        max: limitTextSchema,
        sold: amount,
        remaining: amount.nullable(),
        daysToSellOut: z.number().int().nullable(),
      }),
    }),
  ),
  basis,
});

const goalsResult = z.object({
  userId: z.string(),
  balance: amount,
  dailyEarningRate: z.number(),
  goals: z.array(
    z.object({
      perkId: z.string(),
      brandId: z.string(),
      name: z.string(),
      cost: amount,
      missing: amount,
      progressPercent: z.number(),
      estimatedDays: z.number().int().nullable(),
    }),
  ),
  basis,
});

const distribution = z.array(z.object({ archetype: archetypeSchema, members: z.number().int(), share: z.number() }));

const perkAudienceResult = z.object({
  brandId: z.string(),
  perkId: z.string(),
  name: z.string(),
  cost: amount,
  redeemers: z.object({ members: z.number().int(), personas: distribution }),
  couldAfford: z.object({ members: z.number().int(), personas: distribution }),
  conversionByArchetype: z.array(
    z.object({
      archetype: archetypeSchema,
      couldAfford: z.number().int(),
      redeemed: z.number().int(),
      conversionPercent: z.number().nullable(),
    }),
  ),
  basis,
});

const brandAudienceResult = z.object({
  brandId: z.string(),
  members: z.number().int(),
  personas: distribution,
  engagement: z.object({
    activeMembers30d: z.number().int(),
    newMembers30d: z.number().int(),
    events30d: z.number().int(),
    eventsPerActiveMember: z.number(),
    activeDaysPerActiveMember: z.number(),
    earned30d: amount,
    redemptions30d: z.number().int(),
    redeemers30d: z.number().int(),
  }),
  platforms: z.array(
    z.object({ platform: z.string(), events: z.number().int(), members: z.number().int(), share: z.number() }),
  ),
  basis,
});

const eventSuggestionsResult = z.object({
  brandId: z.string(),
  peers: z.number().int().describe('other brands with at least one active event rule'),
  suggestions: z.array(
    z.object({
      eventType: z.string(),
      rewardAmount: z.number().int(),
      maxClaims: z.number().int(),
      cooldownHours: z.number().int(),
      network: z.object({
        brands: z.number().int(),
        events30d: z.number().int(),
        membersPerBrand: z.number(),
        eventsPerBrand: z.number(),
        rewardRange: z.object({ min: z.number().int(), max: z.number().int() }),
      }),
      reason: z.string(),
    }),
  ),
  current: z.array(
    z.object({
      eventType: z.string(),
      rewardAmount: z.number().int(),
      cooldownHours: z.number().int(),
      maxClaims: z.number().int(),
      events30d: z.number().int(),
      members30d: z.number().int(),
      network: z.object({
        brands: z.number().int(),
        medianReward: z.number().int().nullable(),
        membersPerBrand: z.number(),
      }),
    }),
  ),
  basis,
});

const perkSuggestionsResult = z.object({
  brandId: z.string(),
  members: z.number().int(),
  pricePoints: z.array(
    z.object({
      tier: z.enum(['entry', 'core', 'premium']),
      percentile: z.number().int(),
      priceInPoints: z.number().int(),
      membersCanAffordNow: z.number().int(),
      share: z.number(),
    }),
  ),
  categories: z.array(
    z.object({
      category: z.string(),
      perks: z.number().int(),
      brands: z.number().int(),
      redemptions30d: z.number().int(),
      redemptionsPerPerk30d: z.number(),
      medianCost: z.number().int(),
      brandHas: z.boolean(),
    }),
  ),
  suggestions: z.array(
    z.object({
      category: z.string(),
      priceInPoints: z.number().int(),
      maxSupply: z.literal(UNLIMITED),
      reason: z.string(),
    }),
  ),
  basis,
});

type Window = { from: Date; to: Date; days: number };

function basisOf(window: Window, sampleSize: number, note?: string) {
  return {
    period: `${window.days}d`,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

const share = sharePercent;
const nonNegative = (value: bigint) => (value > 0n ? value : 0n);

/** Intelligence tools (spec 4.1): member personas, recommendations, perk heat and goals, from real data. */
export function intelligenceTools(d: AgentToolDeps): AgentTool[] {
  const reads = d.intelligenceReads;

  /**
   * Members' earnings at `brands` over the window, ascending: a population aggregate, so computed at most
   * once per PTS_AGENT_ANSWER_MAX_AGE_SECONDS per brand set (docs/agent-api.md, "Freshness").
   */
  function earningsTotals(brands: string[], window: { from: Date; to: Date }): Promise<bigint[]> {
    return rememberRead(d, 'earnings_totals', { brands: [...brands].sort(), days: WINDOW_DAYS }, () =>
      reads.readEarningsTotals(brands, window.from, window.to),
    );
  }

  /**
   * The member `userId` names (every identity of their account, resolved once) and their activity at the key's
   * brands; 404 when they have none there.
   */
  async function loadMember(userId: string, brands: string[], now: Date) {
    const window = windowOf(now, WINDOW_DAYS);
    const member = await reads.resolveMember(userId);
    const [activity, redemptions] = await Promise.all([
      reads.readMemberActivity(member, brands, window.from, window.to),
      reads.readMemberRedemptions(member, brands, window.from, window.to),
    ]);
    if (activity.brands === 0 && redemptions.perkIds.length === 0) throw memberNotFound(userId);
    return { member, window, activity, redemptions, tokens: member.identityKeys.map(memberToken) };
  }

  const perksOf = async (brands: string[], now: Date) => {
    const byBrand = await reads.readPerkActivities(brands, now);
    return brands.map((brandId) => ({ brandId, perks: byBrand.get(brandId) ?? [] }));
  };

  /**
   * judgeRedemption for a perk and the member (claims and balance read once for all perks): recommendations and
   * goals offer only perks for which more pts are all the member lacks, as redeem_perk will decide.
   */
  const judge = (perk: PerkActivity, claimsByPerk: Map<string, number>, spendable: bigint) =>
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

  /** get_user_persona's answer at `now` (404 when the member has no activity at `brands`). */
  async function personaOf(userId: string, brands: string[], now: Date) {
    const { window, activity, redemptions, tokens } = await loadMember(userId, brands, now);
    const daysSinceLastEvent = activity.lastEventAt
      ? Math.floor((now.getTime() - activity.lastEventAt.getTime()) / DAY_MS)
      : null;
    const profile = {
      events: activity.events,
      distinctEventTypes: activity.distinctEventTypes,
      activeDays: activity.activeDays,
      daysSinceLastEvent,
      redemptions: redemptions.redemptions,
      earned: activity.earned,
      spent: redemptions.spent,
    };
    const totals = await earningsTotals(brands, window);
    const rank = { below: countBelow(totals, activity.earned), population: totals.length };
    const totalEvents = activity.perBrand.reduce((s, b) => s + b.events, 0);
    const persona = {
      userId: userId,
      archetype: classifyArchetype(profile, WINDOW_DAYS),
      behaviour: {
        events: activity.events,
        eventsPerActiveDay:
          activity.activeDays > 0 ? Math.round((activity.events / activity.activeDays) * 100) / 100 : 0,
        activeDays: activity.activeDays,
        daysSinceLastEvent,
        eventTypeMix: activity.eventTypeMix.map((m) => ({ ...m, share: share(m.count, activity.events) })),
        redemptions: redemptions.redemptions,
        earned: activity.earned.toString(),
        spent: redemptions.spent.toString(),
      },
      brandAffinities: activity.perBrand.map((b) => ({
        brandId: b.brandId,
        events: b.events,
        earned: b.earned.toString(),
        share: share(b.events, totalEvents),
      })),
      network: {
        brands: activity.brands,
        earningsPercentile: activity.events > 0 ? percentileRank(rank.below, rank.population) : null,
        population: rank.population,
      },
      basis: basisOf(
        window,
        activity.events,
        activity.events === 0
          ? `No accepted event in the last ${WINDOW_DAYS} days; dormant after ${DORMANT_AFTER_DAYS} days without one`
          : undefined,
      ),
    };
    return { persona, tokens };
  }

  return [
    defineAgentTool({
      name: 'get_user_persona',
      method: 'get',
      path: '/intelligence/users/:userId/persona',
      summary: "A member's behavioural profile and archetype at the key's brands",
      description:
        "Behaviour of one member over the last 30 days at the brands this key acts for: accepted events, active days, event-type mix, redemptions, pts earned and spent; a rule-based archetype (dormant, newcomer, redeemer, streaker, explorer, collector — rules in docs/agent-api/intelligence.md); brand affinities (share of the member's events per brand, all time); network position (brands the member is active at among the key's, percentile of 30-day earnings among the key's members, 0–100). 404 when the member has no activity at the key's brands. Amounts are integer pts as strings." +
        WINDOWED_ANSWER_NOTE,
      access: 'key',
      request: { params: userParams },
      result: personaResult,
      example: (f) => ({ params: { userId: f.userId } }),
      async handle({ params }, context) {
        const brands = memberScope(context);
        return keptWindowedAnswer(d, context, ['get_user_persona', brands.join(','), params.userId], async (now) => {
          const { persona, tokens } = await personaOf(params.userId, brands, now);
          // The member's events and redemptions; the population they are ranked in is a remembered aggregate.
          return { value: persona, tokens };
        });
      },
    }),

    defineAgentTool({
      name: 'get_user_recommendations',
      method: 'get',
      path: '/intelligence/users/:userId/recommendations',
      summary: "Perks at the key's brands ranked for one member",
      description:
        "Active perks (with supply left) of the brands this key acts for, ranked for one member by score = 50 × affordability (spendable balance ÷ cost, capped at 1; `balance` is what the member may spend now: their wallet's pts on chain less pending redemptions, every identity of their account — what redeem_perk judges with) + 30 × popularity (the perk's 30-day redemptions ÷ the brand's most redeemed perk's) + 20 × novelty (1 when the member never redeemed it). Score 0–100, highest first; `limit` 1–20 (default 5). Empty list with a note when the brands have no such perk. 404 when the member has no activity at the key's brands." +
        WINDOWED_ANSWER_NOTE,
      access: 'key',
      request: {
        params: userParams,
        query: z.object({ limit: boundedInt('limit', 1, 20, 5) }),
      },
      result: z.object({ userId: z.string(), balance: amount, recommendations: z.array(perkRecommendation), basis }),
      example: (f) => ({ params: { userId: f.userId }, query: { limit: 5 } }),
      async handle({ params, query }, context) {
        const brands = memberScope(context);
        return keptWindowedAnswer(
          d,
          context,
          ['get_user_recommendations', brands.join(','), params.userId, String(query.limit)],
          async (now) => {
            const { member, window, redemptions, tokens } = await loadMember(params.userId, brands, now);
            const [wallet, perBrand] = await Promise.all([readMemberSpendable(d, member), perksOf(brands, now)]);
            const { spendable } = wallet;
            const redeemed = new Set(redemptions.perkIds);
            let atLimit = 0;
            const scored = perBrand.flatMap(({ brandId, perks }) => {
              const max30 = Math.max(0, ...perks.map((p) => p.last30));
              return perks
                .map((p) => ({ p, decision: judge(p, redemptions.claimsByPerk, spendable) }))
                .filter(({ decision }) => {
                  if (redeemableWithEnoughPts(decision)) return true;
                  if (decision.refusals.includes('claim_limit_reached')) atLimit++;
                  return false;
                })
                .map(({ p, decision }) => {
                  const before = redeemed.has(p.perkId);
                  const affordable = decision.allowed;
                  return {
                    kind: 'perk' as const,
                    perkId: p.perkId,
                    brandId,
                    name: p.name,
                    cost: p.cost.toString(),
                    score: perkRecommendationScore({
                      balance: spendable,
                      cost: p.cost,
                      redemptions30: p.last30,
                      maxRedemptions30: max30,
                      alreadyRedeemed: before,
                    }),
                    affordable,
                    reason: `${affordable ? 'affordable now' : `${decision.missing} pts missing`}; ${p.last30} redemptions in 30 days; ${before ? 'already redeemed by this member' : 'never redeemed by this member'}`,
                  };
                });
            });
            scored.sort(
              (a, b) =>
                b.score - a.score || Number(BigInt(a.cost) - BigInt(b.cost)) || a.perkId.localeCompare(b.perkId),
            );
            const answer = {
              userId: params.userId,
              balance: spendable.toString(),
              recommendations: scored.slice(0, query.limit),
              basis: basisOf(
                window,
                scored.length,
                scored.length > 0
                  ? undefined
                  : atLimit > 0
                    ? `The member already holds the per-member maximum of every available perk (${atLimit}) at the brands this key acts for`
                    : 'The brands this key acts for have no active perk with supply left',
              ),
            };
            return {
              value: answer,
              tokens: [...tokens, ...wallet.tokens, ...brands.map(brandPerksToken)],
              chain: wallet.chain,
              keep: wallet.keep,
            };
          },
        );
      },
    }),

    defineAgentTool({
      name: 'get_brand_perk_intelligence',
      method: 'get',
      path: '/intelligence/brands/:brandId/perks',
      summary: "Heat, funnel and supply depletion of a brand's perks",
      description:
        'For each perk of the brand, hottest first: heat score = (2 × redemptions in the last 7 days + redemptions 8–30 days ago) ÷ 30 (weighted redemptions per day); velocity = 30-day redemptions ÷ 30; funnel = members whose all-time earnings at the brand reach the cost → distinct redeemers in 30 days (conversion in %, null when nobody could afford); supply = max (-1 = unlimited), sold, remaining and days to sell out at the 30-day rate (null: unlimited supply or no recent redemption). Aggregates only, no member data; agent identities excluded. A brand with no perk answers an empty list with a note.',
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: perkIntelligenceResult,
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const now = context.clock.now();
        const perks = await reads.readPerkActivity(params.brandId, now);
        const { members, afford } = await reads.readAffordCounts(
          params.brandId,
          perks.map((p) => p.cost),
          now,
        );
        const redemptions30 = perks.reduce((s, p) => s + p.last30, 0);
        let note: string | undefined;
        if (perks.length === 0) note = 'The brand has no perk';
        else if (redemptions30 === 0)
          note = 'No redemption in the last 30 days: heat and velocity are 0, days to sell out unknown';
        return {
          brandId: params.brandId,
          members,
          perks: perks
            .map((p) => {
              const remaining = p.maxSupply === null ? null : nonNegative(p.maxSupply - p.sold);
              const couldAfford = afford.get(p.cost.toString()) ?? 0;
              return {
                perkId: p.perkId,
                name: p.name,
                cost: p.cost.toString(),
                active: p.active,
                heatScore: heatScore(p.last7, p.last30),
                redemptions7d: p.last7,
                redemptions30d: p.last30,
                velocityPerDay: redemptionVelocity(p.last30),
                funnel: {
                  couldAfford,
                  redeemers30d: p.redeemers30,
                  conversionPercent: conversionRate(p.redeemers30, couldAfford),
                },
                supply: {
                  max: limitTextOut(p.maxSupply),
                  sold: p.sold.toString(),
                  remaining: remaining === null ? null : remaining.toString(),
                  daysToSellOut: daysToSellOut(remaining, p.last30),
                },
              };
            })
            .sort((a, b) => b.heatScore - a.heatScore || a.perkId.localeCompare(b.perkId)),
          basis: basisOf(windowOf(now, WINDOW_DAYS), redemptions30, note),
        };
      },
    }),

    defineAgentTool({
      name: 'get_user_goals',
      method: 'get',
      path: '/users/:userId/goals',
      summary: "A member's progress toward perks at the key's brands",
      description:
        "Progress of one member toward the active perks of the brands this key acts for (or one `brandId` of the key, or one `targetPerkId`): cost, pts missing (cost − spendable balance, ≥ 0), progress % and estimated days at the member's own rate (pts earned at those brands in the last 30 days ÷ 30); estimatedDays is null when the member earned nothing in 30 days and 0 when already affordable. `balance` = what the member may spend now: their wallet's pts on chain less pending redemptions (every identity of their account; integer pts as a string), the balance redeem_perk judges with. Fewest pts missing first. 403 for a brand the key does not act for, 404 for an unknown member or perk." +
        WINDOWED_ANSWER_NOTE,
      access: 'key',
      request: {
        params: userParams,
        query: z.object({
          brandId: brandIdSchema.optional(),
          targetPerkId: z
            .string()
            .regex(/^\d{1,18}$/, "must be a perk's integer id (perkId of get_brand_perks or browse_perks)")
            .optional(),
        }),
      },
      result: goalsResult,
      example: (f) => ({ params: { userId: f.userId }, query: { brandId: f.brandId } }),
      async handle({ params, query }, context) {
        const brands = memberScope(context, query.brandId);
        return keptWindowedAnswer(
          d,
          context,
          ['get_user_goals', brands.join(','), params.userId, query.targetPerkId ?? ''],
          async (now) => {
            const { member, window, activity, redemptions, tokens } = await loadMember(params.userId, brands, now);
            const [wallet, perBrand] = await Promise.all([readMemberSpendable(d, member), perksOf(brands, now)]);
            const balance = wallet.spendable;
            const candidates = perBrand.flatMap(({ brandId, perks }) =>
              perks
                .filter((p) => (query.targetPerkId ? p.perkId === query.targetPerkId : p.active))
                .map((perk) => ({ brandId, perk })),
            );
            if (query.targetPerkId && candidates.length === 0) {
              throw new AppError('PERK_NOT_FOUND', `No perk ${query.targetPerkId} at the brands this key acts for`);
            }
            const judged = candidates.map((c) => ({ ...c, decision: judge(c.perk, redemptions.claimsByPerk, 0n) }));
            const reachable = judged.filter(({ decision }) => redeemableWithEnoughPts(decision));
            const leftOut = judged.filter((c) => !reachable.includes(c));
            const limitNote =
              leftOut.length > 0
                ? `Left out: perks the member cannot redeem whatever their balance (${leftOut
                    .map(({ perk, decision }) => {
                      const why = decision.refusals.filter((refusal) => refusal !== 'insufficient_balance');
                      return `${perk.perkId}: ${why.map((refusal) => REFUSAL_TEXT[refusal]).join(', ')}`;
                    })
                    .join(', ')})`
                : undefined;
            const goals = reachable
              .map(({ brandId, perk }) => {
                const g = goalEstimate(perk.cost, balance, activity.earned, WINDOW_DAYS);
                return {
                  perkId: perk.perkId,
                  brandId,
                  name: perk.name,
                  cost: perk.cost.toString(),
                  missing: g.missing.toString(),
                  progressPercent: g.progressPercent,
                  estimatedDays: g.estimatedDays,
                };
              })
              .sort((a, b) => Number(BigInt(a.missing) - BigInt(b.missing)) || a.perkId.localeCompare(b.perkId));
            const answer = {
              userId: params.userId,
              balance: balance.toString(),
              dailyEarningRate: goalEstimate(0n, 0n, activity.earned, WINDOW_DAYS).dailyRate,
              goals,
              basis: basisOf(
                window,
                activity.events,
                [
                  activity.earned === 0n
                    ? `No pts earned in the last ${WINDOW_DAYS} days: no rate to estimate days`
                    : '',
                  limitNote ?? '',
                ]
                  .filter(Boolean)
                  .join('; ') || undefined,
              ),
            };
            return {
              value: answer,
              tokens: [...tokens, ...wallet.tokens, ...brands.map(brandPerksToken)],
              chain: wallet.chain,
              keep: wallet.keep,
            };
          },
        );
      },
    }),

    defineAgentTool({
      name: 'get_perk_audience',
      method: 'get',
      path: '/intelligence/brands/:brandId/perks/:collectionId/audience',
      summary: 'Persona breakdown of the members who redeemed a perk and of those who could afford it',
      description:
        "Who a perk reaches, as archetypes (`:collectionId` is the perk's integer collection id or its uuid; the persona rules of docs/agent-api/intelligence.md, applied to each member's last 30 days at this brand): `redeemers` = distinct members who ever redeemed the perk (pending or confirmed); `couldAfford` = members whose all-time accepted earnings at the brand reach its cost (the top of get_brand_perk_intelligence's funnel); `conversionByArchetype` = of those who could afford it, how many redeemed it (%, null when none could). Counts and shares (%) only, never member ids; agent identities excluded. Empty groups answer zeros with a note. 404 for an unknown brand or a perk that is not the brand's.",
      access: 'public',
      cached: true,
      request: {
        params: z.object({
          brandId: brandIdSchema,
          collectionId: perkRefSchema,
        }),
      },
      result: perkAudienceResult,
      example: (f) => ({ params: { brandId: f.brandId, collectionId: f.perkId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const now = context.clock.now();
        const window = windowOf(now, WINDOW_DAYS);
        const row = await reads.findBrandPerk(params.brandId, params.collectionId);
        const perk = (await reads.readPerkActivity(params.brandId, now)).find((p) => p.perkId === row.id.toString());
        if (!perk) throw new AppError('PERK_NOT_FOUND', `Brand ${params.brandId} has no perk ${params.collectionId}`);
        const [members, redeemerKeys] = await Promise.all([
          reads.readBrandMembers(params.brandId, window),
          reads.readPerkRedeemers(params.brandId, perk.perkId, now),
        ]);
        const redeemers = members.filter((m) => redeemerKeys.has(m.identityKey));
        const couldAfford = members.filter((m) => m.earnedAllTime >= perk.cost);
        const conversionByArchetype = ARCHETYPES.map((archetype) => {
          const able = couldAfford.filter((m) => m.archetype === archetype);
          const redeemed = able.filter((m) => redeemerKeys.has(m.identityKey)).length;
          return {
            archetype,
            couldAfford: able.length,
            redeemed,
            conversionPercent: conversionRate(redeemed, able.length),
          };
        });
        const sample = new Set([...redeemers, ...couldAfford].map((m) => m.identityKey)).size;
        let note: string | undefined;
        if (sample === 0) note = 'Nobody redeemed this perk and no member has earned its cost at the brand';
        else if (redeemers.length === 0) note = 'Nobody redeemed this perk yet';
        return {
          brandId: params.brandId,
          perkId: perk.perkId,
          name: perk.name,
          cost: perk.cost.toString(),
          redeemers: { members: redeemers.length, personas: archetypeDistribution(redeemers.map((m) => m.archetype)) },
          couldAfford: {
            members: couldAfford.length,
            personas: archetypeDistribution(couldAfford.map((m) => m.archetype)),
          },
          conversionByArchetype,
          basis: basisOf(window, sample, note),
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_audience',
      method: 'get',
      path: '/intelligence/brands/:brandId/audience',
      summary: "A brand's members by persona, their engagement and the platforms they use",
      description:
        "The brand's members (anyone with an accepted event or a redemption there; agent identities excluded): persona distribution (each member's archetype from their last 30 days at this brand, rules in docs/agent-api/intelligence.md; members with no event for 30 days are dormant); engagement over the last 30 days (active members = at least one accepted event, new members = first event in the window, events, events and active days per active member, pts earned, redemptions and distinct redeemers); platform split of the window's events (`metadata.platform` when the caller declared it, else the platform of a chat identity such as discord_…@, else web) with events, distinct members and share of events in %. Counts only, never member ids. A brand without members answers zeros with a note.",
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: brandAudienceResult,
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const window = windowOf(context.clock.now(), WINDOW_DAYS);
        const [members, platforms] = await Promise.all([
          reads.readBrandMembers(params.brandId, window),
          reads.readPlatformSplit(params.brandId, window.from, window.to),
        ]);
        const active = members.filter((m) => m.profile.events > 0);
        const events30d = active.reduce((s, m) => s + m.profile.events, 0);
        const activeDays = active.reduce((s, m) => s + m.profile.activeDays, 0);
        let note: string | undefined;
        if (members.length === 0) note = 'The brand has no member yet';
        else if (active.length === 0)
          note = `No accepted event in the last ${WINDOW_DAYS} days: every member is dormant`;
        return {
          brandId: params.brandId,
          members: members.length,
          personas: archetypeDistribution(members.map((m) => m.archetype)),
          engagement: {
            activeMembers30d: active.length,
            newMembers30d: members.filter((m) => m.firstEventAt !== null && m.firstEventAt >= window.from).length,
            events30d,
            eventsPerActiveMember: ratio(events30d, active.length),
            activeDaysPerActiveMember: ratio(activeDays, active.length),
            earned30d: members.reduce((s, m) => s + m.profile.earned, 0n).toString(),
            redemptions30d: members.reduce((s, m) => s + m.profile.redemptions, 0),
            redeemers30d: members.filter((m) => m.profile.redemptions > 0).length,
          },
          platforms: platforms.map((p) => ({ ...p, share: share(p.events, events30d) })),
          basis: basisOf(window, members.length, note),
        };
      },
    }),

    defineAgentTool({
      name: 'suggest_brand_events',
      method: 'get',
      path: '/brands/:brandId/suggestions/events',
      summary: 'Event rules this brand could add, configured from what works at other brands',
      description:
        "Suggested event configurations (the create_event body: eventType, rewardAmount, maxClaims, cooldownHours) for event types other brands run and this brand lacks, with the members they reached in the last 30 days at those brands. Per event type over the peers (other brands with the type as an active rule): rewardAmount = lower median of their rewards, cooldownHours = lower median of their cooldowns, maxClaims = their most common per-user maximum (-1 = unlimited); membersPerBrand = distinct members with an accepted event of the type ÷ peer brands, eventsPerBrand likewise. Only types with membersPerBrand > 0 are suggested, most members per brand first. `current` compares each of the brand's own active rules with the peers' median reward and reach. A network without peers or engagement answers an empty list with a note.",
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: eventSuggestionsResult,
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const window = windowOf(context.clock.now(), WINDOW_DAYS);
        const rules = await reads.readRuleEngagement(window.from, window.to);
        const own = rules.filter((r) => r.brandId === params.brandId);
        const peerRules = rules.filter((r) => r.brandId !== params.brandId);
        const byType = new Map<string, typeof peerRules>();
        for (const r of peerRules) byType.set(r.eventType, [...(byType.get(r.eventType) ?? []), r]);
        const network = (eventType: string) => {
          const list = byType.get(eventType) ?? [];
          const events = list.reduce((s, r) => s + r.events, 0);
          const members = list.reduce((s, r) => s + r.members, 0);
          return {
            list,
            brands: list.length,
            events,
            membersPerBrand: ratio(members, list.length),
            eventsPerBrand: ratio(events, list.length),
          };
        };
        const owned = new Set(own.map((r) => r.eventType));
        const suggestions = [...byType.keys()]
          .filter((eventType) => !owned.has(eventType))
          .map((eventType) => ({ eventType, n: network(eventType) }))
          .filter(({ n }) => n.membersPerBrand > 0)
          .sort(
            (a, b) =>
              b.n.membersPerBrand - a.n.membersPerBrand ||
              b.n.eventsPerBrand - a.n.eventsPerBrand ||
              b.n.brands - a.n.brands ||
              a.eventType.localeCompare(b.eventType),
          )
          .map(({ eventType, n }) => {
            const rewards = n.list.map((r) => r.rewardAmount);
            return {
              eventType,
              rewardAmount: lowerMedian(rewards) ?? 0,
              maxClaims: mostCommon(n.list.map((r) => r.maxClaims)) ?? -1,
              cooldownHours: lowerMedian(n.list.map((r) => r.cooldownHours)) ?? 0,
              network: {
                brands: n.brands,
                events30d: n.events,
                membersPerBrand: n.membersPerBrand,
                eventsPerBrand: n.eventsPerBrand,
                rewardRange: { min: Math.min(...rewards), max: Math.max(...rewards) },
              },
              reason: `${n.brands} other brand(s) run ${eventType}; it reached ${n.membersPerBrand} member(s) per brand in ${WINDOW_DAYS} days; this brand has no such rule`,
            };
          });
        const peers = new Set(peerRules.map((r) => r.brandId)).size;
        const peerEvents = peerRules.reduce((s, r) => s + r.events, 0);
        let note: string | undefined;
        if (peers === 0) note = 'No other brand has an active event rule: nothing to learn from yet';
        else if (suggestions.length === 0)
          note = `No event type this brand lacks reached a member at other brands in the last ${WINDOW_DAYS} days`;
        return {
          brandId: params.brandId,
          peers,
          suggestions,
          current: own.map((r) => {
            const n = network(r.eventType);
            return {
              eventType: r.eventType,
              rewardAmount: r.rewardAmount,
              cooldownHours: r.cooldownHours,
              maxClaims: r.maxClaims,
              events30d: r.events,
              members30d: r.members,
              network: {
                brands: n.brands,
                medianReward: lowerMedian(n.list.map((x) => x.rewardAmount)),
                membersPerBrand: n.membersPerBrand,
              },
            };
          }),
          basis: basisOf(window, peerEvents, note),
        };
      },
    }),

    defineAgentTool({
      name: 'suggest_brand_perks',
      method: 'get',
      path: '/brands/:brandId/suggestions/perks',
      summary: "Perk prices from this brand's members' balances and categories that redeem well",
      description:
        "Suggested perk configurations for the create_perk body (category, priceInPoints; maxSupply -1 = unlimited). Price points: the 25th, 50th and 75th percentiles (entry, core, premium; an actual member's balance) of the earned-minus-spent figures (accepted rewards network-wide − redemptions not failed, ≥ 0) of the brand's members (an accepted event there), with how many members can afford each now. Categories: every category of the network's active perks with perks, brands, redemptions in the last 30 days, redemptions per perk and lower median cost, best redeeming first. Suggestions: up to 3 categories the brand has no active perk in that were redeemed in the window, priced at the core price point (or the category's median cost when the brand has no member). Empty data answers empty lists with a note.",
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: perkSuggestionsResult,
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const now = context.clock.now();
        const window = windowOf(now, WINDOW_DAYS);
        const [balances, categoryRows] = await Promise.all([
          reads.readBalanceQuartiles(params.brandId, now),
          reads.readCategoryPerformance(params.brandId, window.from, window.to),
        ]);
        const tiers = ['entry', 'core', 'premium'] as const;
        const pricePoints = balances.quartiles.map((q, i) => ({
          tier: tiers[i] as (typeof tiers)[number],
          percentile: Math.round(q.quantile * 100),
          priceInPoints: Number(q.balance),
          membersCanAffordNow: q.atLeast,
          share: share(q.atLeast, balances.members),
        }));
        const categories = categoryRows
          .map((c) => ({
            category: c.category,
            perks: c.perks,
            brands: c.brands,
            redemptions30d: c.redemptions,
            redemptionsPerPerk30d: ratio(c.redemptions, c.perks),
            medianCost: Number(c.medianCost),
            brandHas: c.brandHas,
          }))
          .sort(
            (a, b) =>
              b.redemptionsPerPerk30d - a.redemptionsPerPerk30d ||
              b.redemptions30d - a.redemptions30d ||
              b.perks - a.perks ||
              a.category.localeCompare(b.category),
          );
        const core = pricePoints.find((p) => p.tier === 'core');
        const suggestions = categories
          .filter((c) => !c.brandHas && c.redemptions30d > 0)
          .slice(0, 3)
          .map((c) => ({
            category: c.category,
            priceInPoints: core ? core.priceInPoints : c.medianCost,
            maxSupply: UNLIMITED,
            reason: `${c.redemptions30d} redemption(s) of ${c.perks} ${c.category} perk(s) at ${c.brands} brand(s) in ${WINDOW_DAYS} days; this brand has none; ${
              core
                ? `priced at the median balance of its members (${core.membersCanAffordNow} of ${balances.members} can afford it now)`
                : 'priced at the category median (the brand has no member yet)'
            }`,
          }));
        const notes: string[] = [];
        if (balances.members === 0) notes.push('The brand has no member yet: no price points');
        if (categories.length === 0) notes.push('The network has no active perk');
        else if (suggestions.length === 0)
          notes.push(`No category this brand lacks had a redemption in the last ${WINDOW_DAYS} days`);
        return {
          brandId: params.brandId,
          members: balances.members,
          pricePoints,
          categories,
          suggestions,
          basis: basisOf(window, balances.members, notes.length > 0 ? notes.join('; ') : undefined),
        };
      },
    }),
  ];
}
