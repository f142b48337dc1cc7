import { z } from 'zod';
import { eventTypeSchema } from './common.ts';
import { decimalAmountSchema, rateSchema } from './money.ts';
import { setTiersRequestSchema } from './tiers.ts';

/**
 * The what-if simulator (issue 36 §3, docs/simulator.md): `POST /admin/brands/:brandId/simulate` replays the
 * brand's last `days` of events through the event path's own judge under proposed rules, tiers or campaign
 * terms, and answers what was issued against what would have been. pts are decimal strings (exact).
 */

export const SIMULATION_MAX_DAYS = 90;
export const SIMULATION_MAX_RULES = 100;
export const SIMULATION_MAX_CAMPAIGNS = 50;
/** How many members the answer lists under `topChanges`. */
export const SIMULATION_TOP_CHANGES = 10;

const INT32_MAX = 2_147_483_647;

/**
 * A proposed rule: the fields sent replace the brand's current rule of that event type for the replay; the
 * fields left out keep their current value (a new event type needs `rewardAmount` or `rate`).
 */
export const simulatedRuleSchema = z
  .object({
    eventType: eventTypeSchema,
    rewardAmount: z.number().int().min(0).max(1_000_000_000).optional(),
    rate: rateSchema.optional(),
    minValue: decimalAmountSchema.optional(),
    maxReward: z.number().int().min(1).max(1_000_000_000).optional(),
    cooldownHours: z.number().int().min(0).max(87_600).optional(),
    maxClaims: z
      .number()
      .int()
      .min(-1)
      .max(INT32_MAX)
      .refine((value) => value !== 0, 'must be positive, or -1 / 999999 for unlimited')
      .optional(),
    maxTotal: z.number().int().min(0).max(INT32_MAX).nullable().optional(),
    active: z.boolean().optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.rewardAmount !== undefined && rule.rate !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['rate'], message: 'send either rewardAmount or rate, not both' });
    }
    if (rule.rate === undefined) {
      for (const field of ['minValue', 'maxReward'] as const) {
        if (rule[field] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: `${field} applies only to a rate rule: send rate too`,
          });
      }
    }
  })
  .meta({ id: 'SimulatedRule' });
export type SimulatedRule = z.output<typeof simulatedRuleSchema>;

/** Proposed terms of one of the brand's hashtag campaigns (the fields left out keep their current value). */
export const simulatedCampaignSchema = z
  .object({
    id: z.uuid('must be one of the brand’s campaign ids (GET /admin/brands/:brandId/campaigns)'),
    reward: z.number().int().min(0).max(1_000_000_000).nullable().optional(),
    rewardMultiplier: z.number().min(0).max(100).nullable().optional(),
    maxClaimsPerUser: z.number().int().min(-1).max(INT32_MAX).optional(),
  })
  .meta({ id: 'SimulatedCampaign' });
export type SimulatedCampaign = z.output<typeof simulatedCampaignSchema>;

/** `POST /admin/brands/:brandId/simulate`. */
export const simulateRequestSchema = z
  .strictObject({
    days: z
      .number('must be a number of days')
      .int('must be a whole number of days')
      .min(1, 'must be at least 1 day')
      .max(SIMULATION_MAX_DAYS, `must be at most ${SIMULATION_MAX_DAYS} days`)
      .default(30),
    rules: z
      .array(simulatedRuleSchema)
      .max(SIMULATION_MAX_RULES, `must list at most ${SIMULATION_MAX_RULES} rules`)
      .default([])
      .meta({ description: 'Proposed rules: each replaces the fields it sends of the current rule of its event type' }),
    tiers: setTiersRequestSchema
      .optional()
      .meta({ description: 'A proposed tier table (as PUT …/tiers takes it); the current one when left out' }),
    campaigns: z
      .array(simulatedCampaignSchema)
      .max(SIMULATION_MAX_CAMPAIGNS, `must list at most ${SIMULATION_MAX_CAMPAIGNS} campaigns`)
      .default([])
      .meta({ description: 'Proposed terms of existing hashtag campaigns' }),
  })
  .meta({ id: 'SimulateRequest' });
export type SimulateRequest = z.input<typeof simulateRequestSchema>;
export type SimulateSettings = z.output<typeof simulateRequestSchema>;

const pts = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
const signedPts = z
  .string()
  .regex(/^-?\d+$/)
  .describe('Whole pts, as a decimal string (exact; negative = fewer)');
const usd = z
  .string()
  .regex(/^-?\d+\.\d{3}$/)
  .describe('USD at the token price, exact to the thousandth (1 pt = 0.001 USD)');

const issuedSchema = z.object({
  ptsIssued: pts,
  cost: usd,
  /** Members who earned anything (> 0 pts) in the window. */
  membersEarning: z.number().int(),
});

const tierCountSchema = z.object({ name: z.string(), members: z.number().int() });

export const simulationSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    days: z.number().int(),
    from: z.string().meta({ description: 'Start of the replayed window (ISO 8601)' }),
    to: z.string().meta({ description: 'End of the window: when the simulation ran' }),
    tokenPrice: z.object({
      currency: z.literal('USD'),
      ptsPerUsd: z.number().int().meta({ description: 'The platform’s token price (1 USD buys 1000 pts)' }),
    }),
    events: z.object({
      total: z.number().int(),
      replayed: z.number().int().meta({ description: 'Judged again under the proposed rules' }),
      passedThrough: z.number().int().meta({
        description:
          'Kept as recorded in both columns: manual awards, tier entry rewards, check-ins, milestones, drops, and events refused before the judge',
      }),
    }),
    actual: issuedSchema,
    simulated: issuedSchema,
    difference: z.object({ pts: signedPts, cost: usd }),
    membersAffected: z.object({
      earnMore: z.number().int(),
      earnLess: z.number().int(),
      same: z.number().int(),
    }),
    topChanges: z
      .array(z.object({ member: z.string(), actual: pts, simulated: pts, difference: signedPts }))
      .meta({ description: `The members whose pts change most (at most ${SIMULATION_TOP_CHANGES})` }),
    tiers: z
      .object({
        before: z.array(tierCountSchema).nullable().meta({ description: 'Under the current table (null: none)' }),
        after: z.array(tierCountSchema),
      })
      .nullable()
      .meta({
        description:
          'Members of the window per tier at its end (null when the brand has no tiers and none was proposed)',
      }),
    durationMs: z.number().int(),
  })
  .meta({ id: 'Simulation' });
export type Simulation = z.infer<typeof simulationSchema>;
