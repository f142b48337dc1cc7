import { brandIdSchema, UNLIMITED } from '@pts/shared';
import { z } from 'zod';
import { limitTextSchema } from '../../agent-limits.ts';
import { ARCHETYPES, type Archetype, sharePercent } from '../../intelligence/formulas.ts';
import { tierStandingSchema } from '../tiers/get-user-tier.ts';

/** Persona and earning rates look at this many days before now. */
export const WINDOW_DAYS = 30;
export const DAY_MS = 86_400_000;

export const userParams = z.object({ userId: z.string().trim().min(1).max(320) });
export const brandParams = z.object({ brandId: brandIdSchema });
export const amount = z
  .string()
  .regex(/^-?\d+$/)
  .describe('integer pts, as a string');
export const basis = z.object({
  period: z.string(),
  from: z.string(),
  to: z.string(),
  sampleSize: z.number().int(),
  note: z.string().optional(),
});

const archetypeSchema = z.enum(ARCHETYPES as [Archetype, ...Archetype[]]);

export const personaResult = z.object({
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
  tiers: z
    .array(z.object({ brandId: z.string(), ...tierStandingSchema.shape }))
    .meta({ description: 'The VIP tier and progress at each of the brands with tiers (as get_user_tier)' }),
  basis,
});

export const perkRecommendation = z.object({
  kind: z.literal('perk'),
  perkId: z.string(),
  brandId: z.string(),
  name: z.string(),
  cost: amount,
  score: z.number(),
  affordable: z.boolean(),
  reason: z.string(),
});

export const perkIntelligenceResult = z.object({
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

export const goalsResult = z.object({
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

export const perkAudienceResult = z.object({
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

export const brandAudienceResult = z.object({
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

export const eventSuggestionsResult = z.object({
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

export const perkSuggestionsResult = z.object({
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

export function basisOf(window: Window, sampleSize: number, note?: string) {
  return {
    period: `${window.days}d`,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

export const share = sharePercent;
export const nonNegative = (value: bigint) => (value > 0n ? value : 0n);
