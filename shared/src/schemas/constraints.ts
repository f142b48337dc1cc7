import { z } from 'zod';
import { addressSchema, brandIdSchema, cleanString, httpUrlSchema } from './common.ts';

export const CONSTRAINT_KINDS = ['external_api', 'min_balance', 'chat_role'] as const;
export type ConstraintKind = (typeof CONSTRAINT_KINDS)[number];
export const CHAT_PLATFORMS = ['discord', 'telegram'] as const;

const ttlSeconds = z.number().int('must be a whole number').min(0, 'must be ≥ 0').max(86_400, 'must be ≤ 86400');
const platformId = cleanString(
  z
    .string()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .regex(/^[A-Za-z0-9_@.:-]+$/, 'must be letters, digits, _ @ . : or -'),
);

/** `POST /admin/perks/:id/constraints`: one condition a user must meet to claim the perk. */
export const addConstraintRequestSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('external_api'),
    /** Asked `GET <url>?user_address=0x…&collection_id=N`; must answer JSON `{ "eligible": boolean }`. */
    url: httpUrlSchema,
    /** How long an answer is cached per user; PTS_CONSTRAINT_DEFAULT_TTL_SECONDS when absent. */
    ttlSeconds: ttlSeconds.optional(),
  }),
  z.strictObject({
    kind: z.literal('min_balance'),
    /** Reward tokens the wallet must hold (live balance). */
    amount: z.number().int('must be a whole number').min(1, 'must be ≥ 1').max(Number.MAX_SAFE_INTEGER),
  }),
  z.strictObject({
    kind: z.literal('chat_role'),
    platform: z.enum(CHAT_PLATFORMS),
    /** Discord guild id or Telegram chat id. */
    guildId: platformId,
    /** The role (Discord role id; Telegram `member`, `administrator`, `creator`) the member must have. */
    role: platformId,
  }),
]);
export type AddConstraintRequest = z.input<typeof addConstraintRequestSchema>;
export type AddConstraintInput = z.output<typeof addConstraintRequestSchema>;

export const constraintParamsSchema = z.object({
  id: z.string().regex(/^[1-9]\d{0,17}$/, 'must be a perk id (a positive whole number)'),
  constraintId: z.uuid('must be a constraint id (uuid)'),
});

export const perkConstraintSchema = z.object({
  constraintId: z.string(),
  perkId: z.number().int(),
  kind: z.enum(CONSTRAINT_KINDS),
  config: z.record(z.string(), z.unknown()),
  ttlSeconds: z.number().int(),
  createdAt: z.string(),
});
export type PerkConstraint = z.infer<typeof perkConstraintSchema>;
export const perkConstraintResponseSchema = z.object({ success: z.literal(true), constraint: perkConstraintSchema });
export const perkConstraintsResponseSchema = z.object({
  success: z.literal(true),
  constraints: z.array(perkConstraintSchema),
});

/** One constraint's verdict. `cached` is true when the answer came from the constraint cache. */
export const constraintResultSchema = z.object({
  constraintId: z.string(),
  kind: z.enum(CONSTRAINT_KINDS),
  eligible: z.boolean(),
  reason: z.string(),
  cached: z.boolean(),
});
export type ConstraintResult = z.infer<typeof constraintResultSchema>;

/** `POST /services/perks/check-eligibility`. */
export const checkEligibilityRequestSchema = z.strictObject({
  brandId: brandIdSchema,
  perkId: z.union([z.number().int().min(1), z.string().regex(/^[1-9]\d{0,17}$/)], {
    message: 'must be a perk id (a positive whole number)',
  }),
  userAddress: cleanString(addressSchema.transform((value) => value.toLowerCase())),
});
export type CheckEligibilityRequest = z.input<typeof checkEligibilityRequestSchema>;

export const checkEligibilityResponseSchema = z.object({
  success: z.literal(true),
  brandId: z.string(),
  perkId: z.number().int(),
  userAddress: z.string(),
  /** Every constraint passed (true when the perk has none). */
  eligible: z.boolean(),
  results: z.array(constraintResultSchema),
});
export type CheckEligibilityResponse = z.infer<typeof checkEligibilityResponseSchema>;

/** `POST /constraint-updater/invalidate-external-api` (spec 4.11). */
export const invalidateExternalApiRequestSchema = z.object({
  api_url: httpUrlSchema,
  user_address: cleanString(addressSchema.transform((value) => value.toLowerCase())).optional(),
  collection_id: z.number().int('must be a whole number').min(1, 'must be ≥ 1').optional(),
});
export type InvalidateExternalApiRequest = z.input<typeof invalidateExternalApiRequestSchema>;

export const invalidateExternalApiResponseSchema = z.object({
  success: z.literal(true),
  invalidated_count: z.number().int(),
  message: z.string(),
});
export type InvalidateExternalApiResponse = z.infer<typeof invalidateExternalApiResponseSchema>;

/** `POST /services/chat-roles` (brand-signed): a bot reports one member's current roles. */
export const reportChatRolesRequestSchema = z.strictObject({
  brandId: brandIdSchema,
  platform: z.enum(CHAT_PLATFORMS),
  guildId: platformId,
  userId: platformId,
  roles: z.array(platformId).max(250, 'at most 250 roles'),
});
export type ReportChatRolesRequest = z.input<typeof reportChatRolesRequestSchema>;
export const reportChatRolesResponseSchema = z.object({
  success: z.literal(true),
  refreshedAt: z.string(),
  roles: z.array(z.string()),
});
