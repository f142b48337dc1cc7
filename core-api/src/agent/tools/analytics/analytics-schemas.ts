import { brandIdSchema } from '@pts/shared';
import { z } from 'zod';
import type { WindowTotals } from '../../../modules/analytics/analytics.repository.ts';
import { parseUsdToCents } from '../../../modules/payments/payment-amounts.ts';
import { growthPercent, PERIODS, type Period, percentOf, ratio, type TimeWindow } from '../../analytics/formulas.ts';
import { BRAND_CATEGORIES } from '../discovery/discovery-schemas.ts';

/** A brand's dashboard through the agent API is kept at most this long (served stale up to 3× while recomputed). */
export const BRAND_DASHBOARD_MAX_AGE_SECONDS = 10;

/** Spec 8 bounds. */
export const COMPARE_BRANDS_MIN = 2;
export const COMPARE_BRANDS_MAX = 5;
export const CASHBACK_BRANDS_MAX = 10;
export const RANKINGS_MAX = 10;
export const TRENDING_MAX = 50;
/** Flows listed at most (the busiest first). */
export const FLOWS_MAX = 50;
/** Health, rankings and cashback observations look at the last 30 days. */
export const HEALTH_PERIOD: Period = '30d';

export const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
export const basis = z.object({
  period: z.string(),
  from: z.string().nullable().describe('ISO 8601; null for all time'),
  to: z.string(),
  sampleSize: z.number().int().describe('Records the numbers are computed from (events, members or redemptions)'),
  note: z.string().optional(),
});
export const brandParams = z.object({ brandId: brandIdSchema });

/** `period` (7d, 30d, 90d) with a default. */
export const periodQuery = (fallback: Period) =>
  z
    .enum(PERIODS, { message: `period must be one of ${PERIODS.join(', ')}` })
    .default(fallback)
    .describe(`Window ending now: ${PERIODS.join(', ')} (default ${fallback})`);

/** `limit` within 1..max (REST sends strings). */
export const limitQuery = (max: number, fallback: number) =>
  z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(max, `limit must be at most ${max}`)
    .default(fallback);

/** A comma list of distinct Brand IDs (0x addresses, any case), `min..max` of them. */
export const brandIdList = (min: number, max: number) =>
  z
    .string({ message: `brandIds must list ${min} to ${max} Brand IDs, comma-separated` })
    .transform((value, ctx) => {
      const ids = [...new Set(value.split(',').map((id) => id.trim().toLowerCase()))].filter(Boolean);
      const bad = ids.filter((id) => !brandIdSchema.safeParse(id).success);
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `brandIds: not a Brand ID (0x address): ${bad.join(', ')}` });
        return z.NEVER;
      }
      if (ids.length < min || ids.length > max) {
        ctx.addIssue({
          code: 'custom',
          message: `brandIds must list ${min} to ${max} distinct Brand IDs, comma-separated (got ${ids.length})`,
        });
        return z.NEVER;
      }
      return ids;
    })
    .describe(`${min} to ${max} Brand IDs (0x addresses), comma-separated`);

/** A USD amount above 0 with up to 2 decimals (`25`, `19.99`) → integer cents (exact). */
export const usdCents = (field: string) =>
  z
    .string({ message: `${field} is required: a USD amount such as 25 or 19.99` })
    .trim()
    .transform((value, ctx) => {
      const cents = parseUsdToCents(value);
      if (cents === undefined || cents === 0n) {
        ctx.addIssue({
          code: 'custom',
          message: `${field} must be a USD amount above 0 with up to 2 decimals, such as 25 or 19.99`,
        });
        return z.NEVER;
      }
      return cents;
    });

export const category = z
  .string()
  .trim()
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(BRAND_CATEGORIES, { message: `category must be one of ${BRAND_CATEGORIES.join(', ')}` }));

export function basisOf(window: TimeWindow, period: string, sampleSize: number, note?: string) {
  return {
    period,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

export const totalsSchema = z.object({
  acceptedEvents: z.number().int(),
  rejectedEvents: z.number().int(),
  members: z.number().int().describe('Distinct members with an accepted event'),
  newMembers: z.number().int().describe('Members whose first accepted event falls in the window'),
  ptsIssued: amount,
  redemptions: z.number().int(),
  redeemers: z.number().int().describe('Distinct redeemers in the window who are members of the brand'),
  ptsRedeemed: amount,
  eventsPerMember: z.number(),
  redemptionRatePercent: z
    .number()
    .nullable()
    .describe("Share of the window's members who redeemed in it, × 100; null without members"),
});

export function totalsView(t: WindowTotals) {
  return {
    acceptedEvents: t.acceptedEvents,
    rejectedEvents: t.rejectedEvents,
    members: t.members,
    newMembers: t.newMembers,
    ptsIssued: t.ptsIssued.toString(),
    redemptions: t.redemptions,
    redeemers: t.redeemers,
    ptsRedeemed: t.ptsRedeemed.toString(),
    eventsPerMember: ratio(t.acceptedEvents, t.members),
    redemptionRatePercent: percentOf(t.activeRedeemers, t.members),
  };
}

export const growthSchema = z
  .object({
    acceptedEvents: z.number().nullable(),
    members: z.number().nullable(),
    ptsIssued: z.number().nullable(),
    redemptions: z.number().nullable(),
  })
  .describe('Percent change from the previous window of the same length; null when the previous value is 0');

export function growthView(current: WindowTotals, previous: WindowTotals) {
  return {
    acceptedEvents: growthPercent(current.acceptedEvents, previous.acceptedEvents),
    members: growthPercent(current.members, previous.members),
    ptsIssued: growthPercent(Number(current.ptsIssued), Number(previous.ptsIssued)),
    redemptions: growthPercent(current.redemptions, previous.redemptions),
  };
}

export const eventTypeSchema = z.object({
  eventType: z.string(),
  accepted: z.number().int(),
  rejected: z.number().int(),
  members: z.number().int(),
  ptsIssued: amount,
  sharePercent: z.number().nullable().describe("Share of the scope's accepted events"),
});

export const healthSchema = z.object({
  brandId: z.string(),
  score: z.number().int().min(0).max(100),
  grade: z.enum(['A', 'B', 'C', 'D', 'F']),
  components: z.array(
    z.object({
      name: z.enum(['engagement', 'retention', 'growth', 'redemption', 'program']),
      score: z.number().nullable().describe('Null when the component cannot be measured yet (see note)'),
      max: z.literal(20),
      value: z.number().nullable(),
      note: z.string().optional(),
    }),
  ),
  notEnoughHistory: z
    .array(z.string())
    .describe('Components left out of the score for lack of history (retention without previous members)'),
  strengths: z.array(z.string()),
  weaknesses: z.array(z.string()),
  recommendations: z.array(z.string()),
  inputs: z.object({
    members: z.number().int(),
    previousMembers: z.number().int(),
    retainedMembers: z.number().int(),
    events: z.number().int(),
    redeemers: z.number().int(),
    streakMembers: z.number().int(),
    activeRules: z.number().int(),
    availablePerks: z.number().int(),
  }),
  basis,
});

export const trendItem = z.object({
  id: z.string(),
  name: z.string(),
  brandId: z.string().nullable(),
  current: z.number().int(),
  previous: z.number().int(),
  growthPercent: z.number().nullable(),
  momentum: z.number(),
});

export function eventTypeView(
  t: { eventType: string; accepted: number; rejected: number; members: number; ptsIssued: bigint },
  accepted: number,
) {
  return {
    eventType: t.eventType,
    accepted: t.accepted,
    rejected: t.rejected,
    members: t.members,
    ptsIssued: t.ptsIssued.toString(),
    sharePercent: percentOf(t.accepted, accepted),
  };
}
