import { z } from 'zod';
import { addressSchema, brandIdSchema, cleanString, domainSchema, eventTypeSchema } from './common.ts';
import { DETECTION_METHODS, detectionConfigSchema } from './events.ts';
import { amountProblem, currencySchema, decimalAmountSchema, rateSchema } from './money.ts';

/** The largest value an `integer` column holds (claim limits are stored as such). */
const INT32_MAX = 2_147_483_647;

export const X_HANDLE_PATTERN = /^[A-Za-z0-9_]{1,15}$/;

/** Unlimited per-user claims: either sentinel the spec names. */
export const UNLIMITED_CLAIMS = [-1, 999999] as const;

export const createBrandRequestSchema = z
  .object({
    name: cleanString(z.string().min(1, 'must not be empty').max(200)),
    domain: domainSchema,
    address: cleanString(addressSchema.transform((value) => value.toLowerCase())).optional(),
    automation: z.boolean().optional(),
  })
  .meta({ id: 'CreateBrandRequest' });
export type CreateBrandRequest = z.input<typeof createBrandRequestSchema>;
/** A create-brand request after parsing (address lowercased, strings cleaned). */
export type CreateBrandInput = z.output<typeof createBrandRequestSchema>;

/** An X handle: 1 to 15 letters, digits or underscores; a leading @ is dropped; "" or null clears it. */
export const xHandleInputSchema = z
  .union([
    z.null(),
    cleanString(
      z
        .string()
        .transform((value) => value.replace(/^@/, ''))
        .pipe(
          z.union([
            z.literal(''),
            z.string().regex(X_HANDLE_PATTERN, 'must be 1 to 15 letters, digits or _ (an X handle)'),
          ]),
        ),
    ),
  ])
  .transform((value) => (value === '' ? null : value));

export const updateBrandRequestSchema = z
  .object({
    name: cleanString(z.string().min(1).max(200)).optional(),
    domain: domainSchema.optional(),
    automation: z.boolean().optional(),
    /** false: only brand-signed events are accepted (docs/api/events.md, "What unsigned intake trusts"). */
    unsignedEvents: z.boolean().optional(),
    /** The brand's X handle (with or without @); null or "" clears it. */
    xHandle: xHandleInputSchema.optional(),
    /** The currency its events' values must be in (docs/shop-program.md); USD until set. */
    currency: currencySchema.optional(),
  })
  .meta({ id: 'UpdateBrandRequest' });
export type UpdateBrandRequest = z.input<typeof updateBrandRequestSchema>;
/** An update-brand request after parsing. */
export type UpdateBrandInput = z.output<typeof updateBrandRequestSchema>;

export const brandSchema = z
  .object({
    brandId: z.string(),
    name: z.string(),
    domain: z.string(),
    verifiedDomains: z.array(z.string()),
    automation: z.boolean(),
    unsignedEvents: z.boolean(),
    /** The brand's X handle (without @), or null. */
    xHandle: z.string().nullable(),
    /** ISO 4217: the currency of its events' values and its rate rules (docs/shop-program.md). */
    currency: z.string(),
    tier: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: 'Brand' });
export type Brand = z.infer<typeof brandSchema>;

export const createdBrandSchema = brandSchema
  .extend({
    /** Shown once; stored hashed and encrypted. */
    securityKey: z.string(),
    /** Shown once; stored hashed. */
    apiKey: z.string(),
  })
  .meta({ id: 'CreatedBrand' });
export type CreatedBrand = z.infer<typeof createdBrandSchema>;

/** The longest grace period of a rotated security key: a week to redeploy every integration, no more. */
export const MAX_KEY_GRACE_MINUTES = 7 * 24 * 60;

/**
 * The grace the portal's "Rotate key" offers first: a day for the brand's back end, WordPress plugin and bots to
 * move to the new key before the old one is refused ("End the old key now" ends it sooner).
 */
export const DEFAULT_PORTAL_KEY_GRACE_MINUTES = 24 * 60;

/** Body of `POST /admin/brands/:brandId/keys/rotate`. */
export const rotateBrandKeysRequestSchema = z.strictObject({
  /** Minutes the replaced security key still verifies signatures; 0 (the default) refuses it at once. */
  graceMinutes: z.number().int().min(0).max(MAX_KEY_GRACE_MINUTES).optional(),
});
export type RotateBrandKeysRequest = z.infer<typeof rotateBrandKeysRequestSchema>;

/** The state of a brand's keys, never a secret. */
export const brandKeyStatusSchema = z
  .object({
    brandId: z.string(),
    /** False after a revoke, until the next rotate. */
    active: z.boolean(),
    issuedAt: z.string(),
    rotatedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    /** Until when the security key replaced by the last rotation still verifies; null when it does not. */
    previousKeyValidUntil: z.string().nullable(),
  })
  .meta({ id: 'BrandKeyStatus' });
export type BrandKeyStatus = z.infer<typeof brandKeyStatusSchema>;

/** The answer of ending the replaced key's grace early: the keys' state, and until when the old key had verified. */
export const endedPreviousBrandKeySchema = brandKeyStatusSchema
  .extend({ endedKeyWasValidUntil: z.string() })
  .meta({ id: 'EndedPreviousBrandKey' });
export type EndedPreviousBrandKey = z.infer<typeof endedPreviousBrandKeySchema>;

/** A rotation's answer: the new keys, shown this once. */
export const rotatedBrandKeysSchema = brandKeyStatusSchema
  .extend({ securityKey: z.string(), apiKey: z.string() })
  .meta({ id: 'RotatedBrandKeys' });
export type RotatedBrandKeys = z.infer<typeof rotatedBrandKeysSchema>;

const ruleFields = z.object({
  eventType: eventTypeSchema,
  /** A fixed reward per event; a rate rule sends `rate` instead. */
  rewardAmount: z.number().int().min(0).max(1_000_000_000).optional(),
  /** A reward by value: `pts` per `per` of the event's value (docs/shop-program.md). */
  rate: rateSchema.optional(),
  /** With a rate: events worth less than this earn nothing (refused with VALUE_BELOW_MINIMUM). */
  minValue: decimalAmountSchema.optional(),
  /** With a rate: the most one event pays. */
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
  channels: z
    .array(cleanString(z.string().min(1).max(100)))
    .max(100)
    .optional(),
  detectionMethod: z.enum(DETECTION_METHODS).optional(),
  detectionConfig: detectionConfigSchema.optional(),
  active: z.boolean().optional(),
});

/** A rule pays a fixed `rewardAmount` or a `rate`, never both; minValue and maxReward belong to a rate. */
function checkRewardKind(
  rule: {
    rewardAmount?: number | undefined;
    rate?: { currency: string } | undefined;
    minValue?: string | undefined;
    maxReward?: number | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (rule.rewardAmount === undefined && rule.rate === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['rewardAmount'],
      message: 'send rewardAmount (fixed points) or rate (points per unit of value)',
    });
  }
  if (rule.rewardAmount !== undefined && rule.rate !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['rate'], message: 'send either rewardAmount or rate, not both' });
  }
  if (rule.rate === undefined) {
    for (const field of ['minValue', 'maxReward'] as const) {
      if (rule[field] !== undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} applies only to a rate rule: send rate too` });
    }
  } else if (rule.minValue !== undefined) {
    const problem = amountProblem(rule.minValue, rule.rate.currency as Parameters<typeof amountProblem>[1]);
    if (problem) ctx.addIssue({ code: 'custom', path: ['minValue'], message: problem });
  }
}

export const ruleInputSchema = ruleFields.superRefine(checkRewardKind).meta({ id: 'RuleInput' });
export type RuleInput = z.input<typeof ruleInputSchema>;
/** A rule input after parsing: what `setRule` receives, and what a typed caller may send. */
export type RuleSettings = z.output<typeof ruleInputSchema>;

/** Body of `PUT /admin/brands/:brandId/rules/:eventType`: the event type comes from the path. */
export const setRuleRequestSchema = ruleFields
  .omit({ eventType: true })
  .superRefine(checkRewardKind)
  .meta({ id: 'SetRuleRequest' });
export type SetRuleRequest = z.output<typeof setRuleRequestSchema>;

export const ruleSchema = z
  .object({
    eventId: z.string(),
    brandId: z.string(),
    eventType: z.string(),
    /** The fixed reward; 0 for a rate rule (its reward depends on each event's value). */
    rewardAmount: z.number().int(),
    /** Present on a rate rule: points per unit of the event's value. */
    rate: rateSchema.optional(),
    minValue: z.string().optional(),
    maxReward: z.number().int().optional(),
    cooldownHours: z.number().int(),
    maxClaims: z.number().int(),
    maxTotal: z.number().int().nullable(),
    /** Claims counted against maxTotal; null while no max total is set (the count is kept only then). */
    totalClaims: z.number().int().nullable(),
    detectionMethod: z.enum(DETECTION_METHODS),
    detectionConfig: detectionConfigSchema,
    isCustom: z.boolean(),
    active: z.boolean(),
    /** When the brand archived the rule (present only then): its events are refused with RULE_ARCHIVED. */
    archivedAt: z.string().optional(),
  })
  .meta({ id: 'Rule' });
export type Rule = z.infer<typeof ruleSchema>;

export const brandIdParamsSchema = z.object({ brandId: brandIdSchema });
/** Path parameters of `/admin/brands/:brandId/domains/:domain`. */
export const brandDomainParamsSchema = brandIdParamsSchema.extend({ domain: domainSchema });
/** Path parameters of `/admin/brands/:brandId/rules/:eventType`. */
export const ruleParamsSchema = brandIdParamsSchema.extend({ eventType: eventTypeSchema });
