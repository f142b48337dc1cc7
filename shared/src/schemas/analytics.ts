import { z } from 'zod';
import { leaderboardEntrySchema } from './leaderboards.ts';

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

/** Days a brand analytics read covers when only `days` (or nothing) is given: the window ending now. */
export const BRAND_ANALYTICS_DEFAULT_DAYS = 30;

/**
 * The query of the dashboard's reads (the portal's `GET …/dashboard` and the agent's `get_brand_dashboard`):
 * `from` and `to` (ISO 8601), or `days` back from now (default 30); `to` alone defaults to now.
 */
export const brandAnalyticsQuerySchema = z.object({
  from: z.string().optional().describe('ISO 8601 start (inclusive); with `to`, instead of `days`'),
  to: z.string().optional().describe('ISO 8601 end (exclusive); default now'),
  days: z.coerce
    .number({ message: 'days must be a number' })
    .int('days must be a whole number')
    .min(1, 'days must be at least 1')
    .max(BRAND_ANALYTICS_MAX_DAYS, `days must be at most ${BRAND_ANALYTICS_MAX_DAYS}`)
    .optional()
    .describe(`The window's length in days, ending at \`to\` (default ${BRAND_ANALYTICS_DEFAULT_DAYS})`),
});
export type BrandAnalyticsQuery = z.infer<typeof brandAnalyticsQuerySchema>;

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
  reversals: z
    .object({
      count: z.number().int().describe('Reversals (refunds) and manual deductions recorded in the window'),
      ptsReversed: pts.describe('Pts they took back: refunds’ reversals and deductions together'),
      ptsDeducted: pts.describe('The part of ptsReversed taken back by manual deductions'),
    })
    .describe('What was taken back in the window (docs/ledger.md, "Brand rollups"), from the reversal rollups'),
  ptsNetIssued: z
    .string()
    .regex(/^-?\d+$/)
    .describe('ptsIssued − reversals.ptsReversed: the window’s pts issued net of what was taken back in it'),
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
  tokenPurchases: z
    .object({
      count: z.number().int(),
      usdCents: z.number().int(),
      usdAmount: z.string().describe('USD, 2 decimals'),
      pts: pts,
    })
    .describe("The brand's token purchases (checkout) fulfilled in the window"),
  relayerGas: z
    .object({
      transactions: z.number().int().describe('Relayed transactions with a receipt (reverted ones included)'),
      gasUsed: z.string().describe('Decimal gas units'),
      costWei: z.string().describe('Σ gasUsed × effectiveGasPrice, decimal wei'),
      costEth: z.string(),
    })
    .describe('Gas the relayer paid for the brand, for transactions relayed in the window'),
  leaderboard: z
    .object({
      metric: z.literal('pts_earned'),
      period: z.literal('all_time'),
      total: z.number().int().describe('Members ranked'),
      top: z.array(leaderboardEntrySchema),
    })
    .describe("The brand's all-time pts leaderboard now: its top 10"),
});
export type BrandAnalytics = z.infer<typeof brandAnalyticsSchema>;
