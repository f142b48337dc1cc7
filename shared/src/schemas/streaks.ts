import { z } from 'zod';
import { brandIdSchema, cleanString, emailSchema, metadataSchema } from './common.ts';

/** Streak kinds named by spec 4.3; any other `streakType` is its own streak too (`engagement`, …). */
export const STREAK_TYPES = ['daily'] as const;

/** A streak type: `daily` (check-ins and milestones count it) or another lowercase name, each its own streak. */
export const streakTypeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be 1 to 32 lowercase letters, digits or underscores, e.g. daily');

/** A platform name (`discord`, `telegram`, `x`, `web`, `cms`…): letters, digits, `_` and `-`. */
export const streakPlatformSchema = cleanString(
  z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, underscores or hyphens (e.g. discord)')
    .transform((value) => value.toLowerCase()),
);

/** `userIdentifier`: an email, or a platform user's synthetic email `<platform>_<id>@<service domain>`. */
export const userIdentifierSchema = emailSchema;

export const streakMultiplierTierSchema = z.object({
  days: z.number().int().min(1).max(3650),
  multiplier: z.number().min(1).max(10),
});

export const streakMilestoneSchema = z
  .object({
    days: z.number().int().min(1).max(3650),
    bonus: z.number().int().min(0).max(1_000_000_000),
  })
  .meta({ id: 'StreakMilestone' });

function strictlyAscending(items: { days: number }[]): boolean {
  return items.every((item, i) => i === 0 || item.days > items[i - 1]!.days);
}

/** A brand's streak settings (every field required when stored; the PUT body may leave fields out). */
export const streakSettingsSchema = z
  .object({
    graceHours: z.number().int().min(24, 'must be at least 24 (a day)').max(168, 'must be at most 168 (a week)'),
    multipliers: z
      .array(streakMultiplierTierSchema)
      .max(20)
      .refine(strictlyAscending, 'tiers must be sorted by days, each longer than the one before'),
    milestones: z
      .array(streakMilestoneSchema)
      .max(20)
      .refine(strictlyAscending, 'milestones must be sorted by days, each longer than the one before'),
    freezeEveryDays: z.number().int().min(0).max(365),
    maxFreezes: z.number().int().min(0).max(30),
  })
  .meta({ id: 'StreakSettings' });
export type StreakSettingsBody = z.infer<typeof streakSettingsSchema>;

/** `PUT /services/streak/settings/:brandId`: the fields to change; the others keep their value. */
export const updateStreakSettingsRequestSchema = streakSettingsSchema
  .partial()
  .strict()
  .refine((value) => Object.keys(value).length > 0, 'send at least one setting')
  .meta({ id: 'UpdateStreakSettingsRequest' });
export type UpdateStreakSettingsRequest = z.infer<typeof updateStreakSettingsRequestSchema>;

export const streakSettingsResponseSchema = z
  .object({ success: z.literal(true), brandId: z.string(), settings: streakSettingsSchema, custom: z.boolean() })
  .meta({ id: 'StreakSettingsResponse' });
export type StreakSettingsResponse = z.infer<typeof streakSettingsResponseSchema>;

/** `POST /services/streak/record-activity` (spec 4.3). */
export const recordActivityRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier: userIdentifierSchema,
    platform: streakPlatformSchema,
    streakType: streakTypeSchema.default('daily'),
    /** `displayName` (≤ 64 characters once cleaned) is shown for the user on the brand's leaderboards. */
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'RecordActivityRequest' });
export type RecordActivityRequest = z.infer<typeof recordActivityRequestSchema>;

/** `POST /services/checkin` (and the CMS plugin's `/checkin`). */
export const checkinRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier: userIdentifierSchema,
    platform: streakPlatformSchema,
    /** `displayName` (≤ 64 characters once cleaned) is shown for the user on the brand's leaderboards. */
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'CheckinRequest' });
export type CheckinRequest = z.infer<typeof checkinRequestSchema>;

/** `POST /services/streak/claim-milestone`. */
export const claimMilestoneRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier: userIdentifierSchema,
    milestoneDays: z.number().int().min(1).max(3650),
  })
  .meta({ id: 'ClaimMilestoneRequest' });
export type ClaimMilestoneRequest = z.infer<typeof claimMilestoneRequestSchema>;

export const streakStatusParamsSchema = z.object({ brandId: brandIdSchema, userIdentifier: userIdentifierSchema });
/** `?streakType=` of the status read: `daily` unless asked. */
export const streakStatusQuerySchema = z.object({ streakType: streakTypeSchema.default('daily') });

export const streakSettingsParamsSchema = z.object({ brandId: brandIdSchema });

const nextMilestoneSchema = z.object({
  days: z.number().int(),
  bonus: z.number().int(),
  daysRemaining: z.number().int(),
});

/** Streak object of the check-in response (spec 2.3), shared by every streak answer. */
export const streakSummarySchema = z
  .object({
    currentStreak: z.number().int(),
    multiplier: z.number(),
    nextMilestone: nextMilestoneSchema.nullable(),
    unclaimedMilestones: z.array(streakMilestoneSchema),
  })
  .meta({ id: 'StreakSummary' });
export type StreakSummary = z.infer<typeof streakSummarySchema>;

/** Freezes of a user: held, about to be used for missed days, and the brand's earning rule. */
export const streakFreezesSchema = z.object({
  available: z.number().int(),
  /** Freezes the next activity uses for days already missed (the streak is being held by them). */
  pending: z.number().int(),
  usedTotal: z.number().int(),
  lastUsedAt: z.string().nullable(),
  earnEveryDays: z.number().int(),
  max: z.number().int(),
});

export const recordActivityResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    userIdentifier: z.string(),
    streakType: streakTypeSchema,
    /** The activity counted a new UTC day (false: the user was already active today). */
    isNew: z.boolean(),
    /** The previous streak had lapsed and this activity started a new one. */
    streakBroken: z.boolean(),
    freezesConsumed: z.number().int(),
    freezeEarned: z.boolean(),
    longestStreak: z.number().int(),
    streak: streakSummarySchema,
    // The seed clients' top-level fields (docs/compatibility.md).
    isNewActivity: z.boolean().optional(),
    currentStreak: z.number().int().optional(),
    multiplier: z.number().optional(),
    nextMilestone: nextMilestoneSchema.nullable().optional(),
    unclaimedMilestones: z.array(streakMilestoneSchema).optional(),
    /** Recording activity pays nothing by itself: 0. */
    reward: z.number().int().optional(),
  })
  .meta({ id: 'RecordActivityResponse' });
export type RecordActivityResponse = z.infer<typeof recordActivityResponseSchema>;

export const streakStatusResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    userIdentifier: z.string(),
    currentStreak: z.number().int(),
    longestStreak: z.number().int(),
    multiplier: z.number(),
    nextMilestone: nextMilestoneSchema.nullable(),
    unclaimedMilestones: z.array(streakMilestoneSchema),
    claimedMilestones: z.array(z.number().int()),
    checkedInToday: z.boolean(),
    /** The streak lapsed (grace and freezes exceeded); the next activity starts at 1. */
    lapsed: z.boolean(),
    lastActivityAt: z.string().nullable(),
    /** The last moment an activity still continues the streak, held freezes included. */
    streakExpiresAt: z.string().nullable(),
    freezes: streakFreezesSchema,
    /** `nextMilestone.daysRemaining` (seed clients). */
    daysToNextMilestone: z.number().int().nullable().optional(),
  })
  .meta({ id: 'StreakStatusResponse' });
export type StreakStatusResponse = z.infer<typeof streakStatusResponseSchema>;

/** Check-in response (spec 2.3), plus the reward's event and mint. */
export const checkinResponseSchema = z
  .object({
    success: z.literal(true),
    streak: streakSummarySchema,
    /** Tokens given for this check-in: the daily reward × multiplier; 0 when already claimed or refused. */
    reward: z.number().int(),
    alreadyClaimed: z.boolean(),
    /** The UTC day of the check-in (`YYYY-MM-DD`). */
    day: z.string(),
    eventId: z.string().nullable(),
    walletAddress: z.string().nullable(),
    transactionHash: z.string().optional(),
    mintStatus: z.enum(['none', 'pending', 'submitted', 'confirmed']).optional(),
    /** Why the event pipeline refused the reward (the brand rule's limits); the check-in still counts. */
    rewardRefused: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .meta({ id: 'CheckinResponse' });
export type CheckinResponse = z.infer<typeof checkinResponseSchema>;

/** Milestone claim response (spec 2.3), plus the bonus's event and mint. */
export const claimMilestoneResponseSchema = z
  .object({
    success: z.literal(true),
    bonusPts: z.number().int(),
    /** `bonusPts` (seed clients). */
    bonus: z.number().int().optional(),
    milestone: z.number().int(),
    eventId: z.string(),
    walletAddress: z.string(),
    transactionHash: z.string().optional(),
    mintStatus: z.enum(['none', 'pending', 'submitted', 'confirmed']).optional(),
  })
  .meta({ id: 'ClaimMilestoneResponse' });
export type ClaimMilestoneResponse = z.infer<typeof claimMilestoneResponseSchema>;
