import { z } from 'zod';
import { normalizeReferralCode, REFERRAL_REFUSAL_REASONS } from '../rules/referrals.ts';
import { brandIdSchema, cleanString, eventTypeSchema } from './common.ts';
import { decimalAmountSchema } from './money.ts';

/**
 * Referrals over HTTP (docs/referrals.md): `PUT|GET /admin/brands/:brandId/referrals`, the stats, the
 * brand-signed `GET /services/referral/:brandId/:userIdentifier`, and `referralCode` on an event.
 */

/** A referral code as sent (any case, hyphens allowed), in its stored form; 400 when it is not one. */
export const referralCodeSchema = z
  .string()
  .max(32, 'must be at most 32 characters')
  .transform((value, ctx) => {
    const code = normalizeReferralCode(value);
    if (code === undefined) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must be a referral code: 8 letters and digits as GET /services/referral/:brandId/:userIdentifier gave it',
      });
      return z.NEVER;
    }
    return code;
  })
  .meta({ description: 'A member’s referral code (8 characters; case and hyphens ignored)' });

const reward = z
  .number()
  .int('must be a whole number of pts')
  .min(0, 'must not be negative')
  .max(1_000_000, 'must be at most 1000000');

/** `PUT /admin/brands/:brandId/referrals`. */
export const setReferralProgramRequestSchema = z
  .object({
    qualifyingEventType: eventTypeSchema.meta({
      description:
        'The brand event type whose first occurrence pays the referral: its account creation (e.g. `signup`) or a purchase (with `minValue`). Must be one of the brand’s active rules.',
    }),
    minValue: decimalAmountSchema.optional().meta({
      description:
        'The least value (in the brand’s currency) the qualifying event must carry, e.g. "25.00"; absent: any event of the type qualifies',
    }),
    referrerReward: reward.meta({ description: 'Pts paid to the member whose code was used' }),
    refereeReward: reward.meta({ description: 'Pts paid to the new member who used it' }),
    capPerReferrer: z
      .number()
      .int()
      .min(1, 'must be at least 1 (leave it out for no cap)')
      .max(100_000)
      .optional()
      .meta({ description: 'Most referrals paid to one referrer in a period of `capPeriodDays`' }),
    capPeriodDays: z
      .number()
      .int()
      .min(1, 'must be at least 1 day')
      .max(3650)
      .optional()
      .meta({ description: 'The cap’s window in days (rolling); with a cap and no period, the cap is for all time' }),
  })
  .refine((v) => v.capPeriodDays === undefined || v.capPerReferrer !== undefined, {
    message: 'capPeriodDays needs capPerReferrer: say how many referrals a referrer may be paid in that period',
    path: ['capPeriodDays'],
  })
  .meta({ id: 'SetReferralProgramRequest' });
export type SetReferralProgramRequest = z.input<typeof setReferralProgramRequestSchema>;
/** The program as the service takes it (parsed). */
export type ReferralProgramInput = z.infer<typeof setReferralProgramRequestSchema>;

/** The program in force (`program: null` while the brand has none). */
export const referralProgramResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    currency: z.string(),
    program: z
      .object({
        qualifyingEventType: z.string(),
        minValue: z.string().nullable(),
        referrerReward: z.number().int(),
        refereeReward: z.number().int(),
        capPerReferrer: z.number().int().nullable(),
        capPeriodDays: z.number().int().nullable(),
        updatedAt: z.string(),
      })
      .nullable(),
  })
  .meta({ id: 'ReferralProgramResponse' });
export type ReferralProgramResponse = z.infer<typeof referralProgramResponseSchema>;

const userIdentifier = cleanString(z.string().min(3).max(320)).transform((value) => value.toLowerCase());

export const referralCodeParamsSchema = z.object({ brandId: brandIdSchema, userIdentifier });

/** `GET /services/referral/:brandId/:userIdentifier`: the member's code and link at the brand. */
export const referralCodeResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    userIdentifier: z.string(),
    code: z.string(),
    link: z.string().meta({ description: 'The brand’s site with `?ref=<code>`' }),
  })
  .meta({ id: 'ReferralCodeResponse' });
export type ReferralCodeResponse = z.infer<typeof referralCodeResponseSchema>;

export const referralRefusalReasonSchema = z.enum(REFERRAL_REFUSAL_REASONS);

/** What became of an event's `referralCode` (on the event's answer). */
export const referralOutcomeSchema = z
  .object({
    status: z.enum(['attached', 'paid', 'refused']),
    reason: referralRefusalReasonSchema.optional(),
    message: z.string(),
  })
  .meta({ id: 'ReferralOutcome' });
export type ReferralOutcome = z.infer<typeof referralOutcomeSchema>;

/** `GET /admin/brands/:brandId/referrals/stats`. */
export const referralStatsResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    invites: z.number().int().meta({ description: 'Referees who sent a code (accepted or refused)' }),
    attached: z.number().int().meta({ description: 'Referrals accepted and waiting for the qualifying event' }),
    qualified: z.number().int().meta({ description: 'Referees whose qualifying event happened' }),
    paid: z.number().int().meta({ description: 'Referrals paid to both sides (reversed ones included)' }),
    reversed: z.number().int().meta({ description: 'Paid referrals whose qualifying purchase was reversed' }),
    pts: z.object({ referrers: z.number().int(), referees: z.number().int() }),
    refused: z.record(z.string(), z.number().int()).meta({ description: 'Refusals by reason' }),
  })
  .meta({ id: 'ReferralStatsResponse' });
export type ReferralStatsResponse = z.infer<typeof referralStatsResponseSchema>;
