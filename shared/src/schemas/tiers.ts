import { z } from 'zod';
import { MAX_TIER_MULTIPLIER, MAX_TIERS, MIN_TIERS, TIER_BASES, TIER_PERIODS } from '../rules/tiers.ts';
import { brandIdSchema, cleanString } from './common.ts';
import { decimalAmountSchema } from './money.ts';

/**
 * VIP tiers over HTTP (docs/tiers.md): `PUT|GET /admin/brands/:brandId/tiers` and the brand-signed
 * `GET /services/tier/:brandId/:userIdentifier`.
 */

const userIdentifier = cleanString(z.string().min(3).max(320)).transform((value) => value.toLowerCase());

/** One tier as a brand sets it. */
export const tierInputSchema = z
  .object({
    name: cleanString(z.string().min(1, 'must name the tier').max(40, 'must be at most 40 characters')),
    threshold: z.union([z.number().int().nonnegative().max(1e15), decimalAmountSchema]).meta({
      description:
        'From what total the tier applies: whole pts for basis `earned`; an amount of the brand’s currency for `spent` ("500.00" or 500). The first tier starts at 0.',
    }),
    multiplier: z
      .number()
      .min(1, 'must be at least 1 (a tier never earns less than the rule pays)')
      .max(MAX_TIER_MULTIPLIER, `must be at most ${MAX_TIER_MULTIPLIER}`)
      .refine((m) => Number.isInteger(Math.round(m * 100)) && Math.abs(m * 100 - Math.round(m * 100)) < 1e-9, {
        message: 'must have at most 2 decimals (1.25, not 1.255)',
      })
      .default(1),
    entryReward: z.number().int().nonnegative().max(1_000_000).default(0).meta({
      description: 'Pts paid once when a member first reaches the tier (never again on keeping or regaining it)',
    }),
    perks: z
      .array(z.number().int().positive())
      .max(100)
      .optional()
      .meta({ description: 'Perk ids only members at this tier or above may redeem' }),
  })
  .meta({ id: 'TierInput' });

/** `PUT /admin/brands/:brandId/tiers`. */
export const setTiersRequestSchema = z
  .object({
    basis: z.enum(TIER_BASES, { error: `must be one of ${TIER_BASES.join(', ')}` }),
    period: z.enum(TIER_PERIODS, { error: `must be one of ${TIER_PERIODS.join(', ')}` }),
    graceDays: z.number().int().min(0).max(365).default(0).meta({
      description: 'Days a member keeps a tier after the period’s turn would lower it',
    }),
    tiers: z
      .array(tierInputSchema)
      .min(MIN_TIERS, `must list at least ${MIN_TIERS} tiers`)
      .max(MAX_TIERS, `must list at most ${MAX_TIERS} tiers`),
  })
  .meta({ id: 'SetTiersRequest' });
export type SetTiersRequest = z.input<typeof setTiersRequestSchema>;

export const tierSchema = z
  .object({
    name: z.string(),
    threshold: z.string().meta({ description: 'pts (earned) or an amount of the brand’s currency (spent)' }),
    multiplier: z.number(),
    entryReward: z.number().int(),
    perks: z.array(z.number().int()),
  })
  .meta({ id: 'Tier' });

/** The table in force (`tiers: null` while the brand has none). */
export const tiersResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    basis: z.enum(TIER_BASES).nullable(),
    period: z.enum(TIER_PERIODS).nullable(),
    graceDays: z.number().int(),
    currency: z.string().meta({ description: 'The brand’s currency, in which `spent` thresholds are given' }),
    tiers: z.array(tierSchema).nullable(),
  })
  .meta({ id: 'TiersResponse' });
export type TiersResponse = z.infer<typeof tiersResponseSchema>;

export const tierParamsSchema = z.object({ brandId: brandIdSchema, userIdentifier });

/** `GET /services/tier/:brandId/:userIdentifier`: the member's tier, the next one, and what is left. */
export const memberTierResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    userIdentifier: z.string(),
    tier: z.string().nullable().meta({ description: 'The tier’s name (null while the brand has no tiers)' }),
    multiplier: z.number(),
    next: z
      .object({ name: z.string(), threshold: z.string() })
      .nullable()
      .meta({ description: 'The next tier (null at the top)' }),
    progress: z.object({
      basis: z.enum(TIER_BASES).nullable(),
      period: z.enum(TIER_PERIODS).nullable(),
      current: z.string().meta({ description: 'The member’s total over the period: pts, or an amount spent' }),
      remaining: z.string().nullable().meta({ description: 'What is left to reach the next tier (null at the top)' }),
      graceUntil: z.string().nullable().meta({ description: 'Kept in the tier through a grace until then' }),
    }),
  })
  .meta({ id: 'MemberTier' });
export type MemberTierResponse = z.infer<typeof memberTierResponseSchema>;

/** How many members hold each tier (`tiers: []` while the brand has none): the portal dashboard and the agent's stats. */
export const tierDistributionSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    basis: z.enum(TIER_BASES).nullable(),
    period: z.enum(TIER_PERIODS).nullable(),
    members: z.number().int().meta({ description: 'Members of the brand (accounts), the sum of the counts' }),
    tiers: z.array(
      z.object({
        name: z.string(),
        threshold: z.string(),
        members: z.number().int().meta({
          description: 'Members holding the tier; a member not judged since the table was set counts in the first tier',
        }),
      }),
    ),
  })
  .meta({ id: 'TierDistribution' });
export type TierDistribution = z.infer<typeof tierDistributionSchema>;
