import { z } from 'zod';
import { LEADERBOARD_PERIODS, normalizePeriod } from '../rules/periods.ts';
import { brandIdSchema, cleanString } from './common.ts';

/** What a leaderboard ranks. `pts_earned`: tokens earned (confirmed on chain); `streak`: current streak in
 * days; `activity`: rewarded actions; `claims`: perks claimed. */
export const LEADERBOARD_METRICS = ['pts_earned', 'streak', 'activity', 'claims'] as const;
export type LeaderboardMetric = (typeof LEADERBOARD_METRICS)[number];

const METRIC_ALIASES: Readonly<Record<string, LeaderboardMetric>> = {
  pts_earned: 'pts_earned',
  pts: 'pts_earned',
  tokens: 'pts_earned',
  tokens_earned: 'pts_earned',
  earned: 'pts_earned',
  streak: 'streak',
  streaks: 'streak',
  activity: 'activity',
  claims: 'claims',
  perks: 'claims',
};

export const LEADERBOARD_MAX_LIMIT = 100;

/** Path of `GET /services/leaderboard/:brandId`. */
export const leaderboardParamsSchema = z.object({ brandId: brandIdSchema });

/** Query of `GET /services/leaderboard/:brandId`; both period vocabularies of the spec are accepted. */
export const leaderboardQuerySchema = z.object({
  metric: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return 'pts_earned' as const;
      const metric = METRIC_ALIASES[value.trim().toLowerCase()];
      if (!metric) {
        ctx.addIssue({ code: 'custom', message: `metric must be one of ${LEADERBOARD_METRICS.join(', ')}` });
        return z.NEVER;
      }
      return metric;
    }),
  period: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return 'weekly' as const;
      const period = normalizePeriod(value);
      if (!period) {
        ctx.addIssue({
          code: 'custom',
          message: `period must be one of ${LEADERBOARD_PERIODS.join(', ')} (or week, month, all)`,
        });
        return z.NEVER;
      }
      return period;
    }),
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(LEADERBOARD_MAX_LIMIT, `limit must be at most ${LEADERBOARD_MAX_LIMIT}`)
    .default(10),
  platform: cleanString(
    z
      .string()
      .regex(/^[a-z0-9_-]{1,32}$/i, 'platform must be a platform name such as discord, telegram, x or web')
      .transform((value) => value.toLowerCase()),
  ).optional(),
  /** The caller: their own rank and value come back in `me`. */
  user: cleanString(z.string().min(3).max(320)).optional(),
});
export type LeaderboardQuery = z.infer<typeof leaderboardQuerySchema>;

export const leaderboardEntrySchema = z.object({
  userIdentifier: z.string(),
  username: z.string(),
  value: z.number(),
  rank: z.number().int().min(1),
  /** Seed clients' name for `username` (docs/compatibility.md). */
  displayName: z.string().optional(),
  /** `value` with its unit: `1,250 pts`, `12 days` (seed clients). */
  formattedValue: z.string().optional(),
});
export type LeaderboardEntry = z.infer<typeof leaderboardEntrySchema>;

/** Spec 2.3 leaderboard response, plus `platform`, `periodStart` and the caller's own entry. */
export const leaderboardResponseSchema = z.object({
  success: z.literal(true),
  leaderboard: z.array(leaderboardEntrySchema),
  metric: z.enum(LEADERBOARD_METRICS),
  period: z.enum(LEADERBOARD_PERIODS),
  /** Users ranked in this period (and platform). */
  total: z.number().int().nonnegative(),
  platform: z.string().nullable(),
  /** First day (UTC) of the period; null for `all_time` and `streak`. */
  periodStart: z.string().nullable(),
  me: leaderboardEntrySchema.nullable().optional(),
  /** Seed clients' name for `leaderboard`. */
  rankings: z.array(leaderboardEntrySchema).optional(),
  /** `me.rank` (null when the user is not ranked), when `user` was asked for (seed clients). */
  userRank: z.number().int().nullable().optional(),
});
export type LeaderboardResponse = z.infer<typeof leaderboardResponseSchema>;

/** Path of `GET /services/activity/:brandId/:userIdentifier`. */
export const activityParamsSchema = z.object({
  brandId: brandIdSchema,
  userIdentifier: cleanString(z.string().min(3).max(320)),
});

export const activityQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** Cursor: the `nextCursor` of the previous page. */
  before: z.coerce.number().int().positive().optional(),
});

export const activityItemSchema = z.object({
  id: z.string(),
  kind: z.string(),
  amount: z.number(),
  platform: z.string(),
  occurredAt: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

export const activityResponseSchema = z.object({
  success: z.literal(true),
  brandId: z.string(),
  userIdentifier: z.string(),
  items: z.array(activityItemSchema),
  nextCursor: z.string().nullable(),
});
export type ActivityResponse = z.infer<typeof activityResponseSchema>;
