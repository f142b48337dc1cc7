import { z } from 'zod';

/**
 * The brand analytics read model (core-api `modules/analytics`, docs/ledger.md "Brand analytics"): what a
 * brand's dashboard and the agent's analytics tools read. pts are decimal strings (exact whole pts).
 */

/** Longest window one brand analytics read covers. */
export const BRAND_ANALYTICS_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

const pts = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe('UTC date YYYY-MM-DD');

/** A brand analytics window: `from` ≤ t < `to`, ISO 8601, at most BRAND_ANALYTICS_MAX_DAYS long. */
export const brandAnalyticsWindowSchema = z
  .object({
    from: z.coerce.date({ message: 'from must be an ISO 8601 date or date-time' }),
    to: z.coerce.date({ message: 'to must be an ISO 8601 date or date-time' }),
  })
  .refine((w) => w.from.getTime() < w.to.getTime(), { message: 'from must be before to', path: ['from'] })
  .refine((w) => w.to.getTime() - w.from.getTime() <= BRAND_ANALYTICS_MAX_DAYS * DAY_MS, {
    message: `the window must be at most ${BRAND_ANALYTICS_MAX_DAYS} days`,
    path: ['to'],
  });
export type BrandAnalyticsWindow = z.output<typeof brandAnalyticsWindowSchema>;

/** One bucket of a time series: a UTC day, or a week starting on Monday (clipped to the window). */
export const analyticsBucketSchema = z.object({
  start: isoDay,
  acceptedEvents: z.number().int(),
  refusedEvents: z.number().int(),
  activeMembers: z.number().int().describe('Distinct members with an accepted event in the bucket'),
  ptsIssued: pts,
  redemptions: z.number().int(),
  ptsSpent: pts,
});
export type AnalyticsBucket = z.infer<typeof analyticsBucketSchema>;

export const brandAnalyticsSchema = z.object({
  brandId: z.string(),
  window: z.object({ from: z.string(), to: z.string(), days: z.number() }),
  members: z.object({
    total: z.number().int().describe('Distinct members with an accepted event at the brand before `to`'),
    new: z.number().int().describe('Members whose first accepted event at the brand falls in the window'),
    active: z
      .object({
        day: z.number().int(),
        week: z.number().int(),
        month: z.number().int(),
      })
      .describe('Distinct members with an accepted event in the 1, 7 and 30 days before `to`'),
    inWindow: z.number().int().describe('Distinct members with an accepted event in the window'),
  }),
  events: z.object({
    accepted: z.number().int(),
    refused: z.number().int(),
    refusedByReason: z.array(z.object({ reason: z.string(), count: z.number().int() })),
  }),
  ptsIssued: pts.describe("Rewards of the window's accepted events (the member ledger's earned)"),
  redemptions: z.object({
    count: z.number().int().describe('Perk redemptions pending or confirmed in the window'),
    ptsSpent: pts,
    redeemers: z.number().int().describe('Distinct redeemers in the window who are members of the brand'),
    ratePercent: z
      .number()
      .nullable()
      .describe("Share of the window's active members who redeemed in it; null without members"),
  }),
  series: z.object({ day: z.array(analyticsBucketSchema), week: z.array(analyticsBucketSchema) }),
  topEventTypes: z.array(
    z.object({
      eventType: z.string(),
      accepted: z.number().int(),
      refused: z.number().int(),
      members: z.number().int(),
      ptsIssued: pts,
    }),
  ),
  topPerks: z.array(
    z.object({
      perkId: z.string().describe('The perk uuid'),
      name: z.string(),
      redemptions: z.number().int(),
      redeemers: z.number().int(),
      ptsSpent: pts,
    }),
  ),
});
export type BrandAnalytics = z.infer<typeof brandAnalyticsSchema>;
