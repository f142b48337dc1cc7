import { z } from 'zod';
import {
  COMPUTED_ACHIEVEMENT_TYPES,
  CUSTOM_ACHIEVEMENT_TYPE,
  isReportableAchievementType,
  REPORTED_ACHIEVEMENT_TYPES,
} from '../rules/achievements.ts';
import { brandIdSchema, cleanString } from './common.ts';

const userIdentifier = cleanString(z.string().min(3).max(320)).transform((value) => value.toLowerCase());

/** Path of `GET /services/achievements/:brandId/:userIdentifier`. */
export const achievementsParamsSchema = z.object({ brandId: brandIdSchema, userIdentifier });

export const achievementSchema = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  description: z.string(),
  threshold: z.number().int(),
  /** Progress so far, capped at the threshold. */
  progress: z.number(),
  /** 0 to 1. */
  fraction: z.number(),
  unlocked: z.boolean(),
  unlockedAt: z.string().nullable(),
  // The seed clients' names for type, progress and unlocked (docs/compatibility.md).
  achievementType: z.string().optional(),
  currentProgress: z.number().optional(),
  isUnlocked: z.boolean().optional(),
});

export const achievementsResponseSchema = z.object({
  success: z.literal(true),
  brandId: z.string(),
  userIdentifier: z.string(),
  achievements: z.array(achievementSchema),
  unlockedCount: z.number().int(),
});
export type AchievementsResponse = z.infer<typeof achievementsResponseSchema>;

/**
 * `POST /services/achievements/progress` (brand-signed): bots and brand back-ends report progress of the
 * types they observe (messages, voice hours, level, custom types). `increment` adds to a running total;
 * `value` sets a high-water mark (levels); exactly one of them.
 */
export const reportAchievementProgressRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier,
    type: cleanString(z.string().min(1).max(60)).refine(isReportableAchievementType, {
      message:
        'type must be message_count, voice_hours, level_reached or custom_<name>; tokens, events, streaks and ' +
        'good-morning counts are computed by the platform',
    }),
    increment: z.number().int().min(1).max(1_000_000).optional(),
    value: z.number().int().min(0).max(1_000_000_000).optional(),
  })
  .refine((body) => (body.increment === undefined) !== (body.value === undefined), {
    message: 'send exactly one of increment or value',
    path: ['increment'],
  });

export const reportAchievementProgressResponseSchema = z.object({
  success: z.literal(true),
  type: z.string(),
  value: z.number(),
  /** Achievements this report unlocked (empty when none). */
  unlocked: z.array(z.object({ id: z.string(), name: z.string(), threshold: z.number().int() })),
});

/** Every built-in type: computed by the platform, then reported by bots and back-ends (`custom_<name>` besides). */
export const BUILT_IN_ACHIEVEMENT_TYPES = [...COMPUTED_ACHIEVEMENT_TYPES, ...REPORTED_ACHIEVEMENT_TYPES] as const;

export const achievementDefinitionInputSchema = z.object({
  id: cleanString(z.string().regex(/^[a-z0-9_]{1,60}$/, 'id must be 1 to 60 lowercase letters, digits or underscores')),
  type: cleanString(
    z
      .string()
      .refine(
        (type) =>
          (BUILT_IN_ACHIEVEMENT_TYPES as readonly string[]).includes(type) || CUSTOM_ACHIEVEMENT_TYPE.test(type),
        'type must be a built-in achievement type or custom_<name>',
      ),
  ),
  threshold: z.number().int().min(1).max(1_000_000_000),
  name: cleanString(z.string().min(1).max(80)),
  description: cleanString(z.string().max(300)).default(''),
});

/** `PUT /admin/brands/:brandId/achievements`: the brand's definitions (replace the defaults entirely). */
export const setAchievementDefinitionsRequestSchema = z.object({
  definitions: z
    .array(achievementDefinitionInputSchema)
    .max(200)
    .refine((list) => new Set(list.map((d) => d.id)).size === list.length, 'definition ids must be unique'),
});

/** One achievement definition in force for a brand. */
export const achievementDefinitionSchema = z
  .object({ id: z.string(), type: z.string(), threshold: z.number().int(), name: z.string(), description: z.string() })
  .meta({ id: 'AchievementDefinition' });
export type AchievementDefinitionView = z.infer<typeof achievementDefinitionSchema>;

/**
 * `GET|PUT /admin/brands/:brandId/achievements` and the portal's: the definitions in force; `defaults: true`
 * while the brand has none of its own (the platform's defaults apply).
 */
export const achievementDefinitionsResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    defaults: z.boolean(),
    definitions: z.array(achievementDefinitionSchema),
  })
  .meta({ id: 'AchievementDefinitionsResponse' });
export type AchievementDefinitionsResponse = z.infer<typeof achievementDefinitionsResponseSchema>;
