import { AppError, cleanString, emailSchema } from '@pts/shared';
import { z } from 'zod';
import type { AgentToolContext } from '../../agent-tool.ts';
import type { Period } from '../../analytics/formulas.ts';
import type { memberEarnings } from '../../commerce/member-earnings.ts';
import { BRAND_CATEGORIES } from '../discovery/discovery-schemas.ts';

// Commerce (spec 4.1): deals, where to buy, and what one purchase stacks up to (docs/agent-api/commerce.md).

/** Popularity and the purchase rule's observed use read the last 30 days. */
export const COMMERCE_PERIOD: Period = '30d';
/** Bounds (docs/agent-api/commerce.md). */
export const DEALS_MAX = 50;
export const ROUTES_MAX = 10;
const INTENT_MAX = 200;
const INTENT_TERMS_MAX = 10;

export const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
export const basis = z.object({
  period: z.string(),
  from: z.string(),
  to: z.string(),
  sampleSize: z.number().int(),
  note: z.string().optional(),
});
export const intent = cleanString(z.string().max(INTENT_MAX, `intent must be at most ${INTENT_MAX} characters`))
  .optional()
  .describe('Free text: what the shopper wants ("coffee", "running shoes"); words of 3+ letters are matched');
export const brandCategory = cleanString(z.string().transform((value) => value.toLowerCase()))
  .pipe(z.enum(BRAND_CATEGORIES, { message: `category must be one of ${BRAND_CATEGORIES.join(', ')}` }))
  .optional();
export const userId = emailSchema.describe('The member (email-shaped); needs a signed call').optional();

/** The words of an intent a text is searched for: lower-case, 3+ letters or digits, at most 10, distinct. */
export function intentTerms(text: string | undefined): string[] {
  if (!text) return [];
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  return [...new Set(words.filter((w) => w.length >= 3))].slice(0, INTENT_TERMS_MAX);
}

/** How many of `terms` occur in any of `texts`. */
export function matchCount(terms: string[], texts: (string | null)[]): number {
  const haystack = texts.filter(Boolean).join(' ').toLowerCase();
  return terms.filter((t) => haystack.includes(t)).length;
}

/** 401 for a member-specific question asked without a signature. */
export function requireSignedForMember(context: AgentToolContext, tool: string) {
  if (!context.principal) {
    throw new AppError(
      'UNAUTHORIZED',
      `${tool} with userId reads member data and needs a signed call (X-PTS-Agent-Key); drop userId for the public answer`,
    );
  }
}

export function basisOf(window: { from: Date; to: Date }, sampleSize: number, note?: string) {
  return {
    period: COMMERCE_PERIOD,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

export const streakSchema = z.object({
  current: z.number().int(),
  multiplier: z.number(),
  checkedInToday: z.boolean(),
  checkinBonusPts: amount.describe("Today's daily check-in reward still open: rule × multiplier; 0 when done"),
});

export const memberEarningsSchema = z.object({
  purchaseEligible: z.boolean(),
  reason: z.string().nullable(),
  purchasePts: amount,
  streak: streakSchema,
  totalPts: amount,
});

export function memberView(m: Awaited<ReturnType<typeof memberEarnings>>) {
  return {
    purchaseEligible: m.purchase?.eligible ?? false,
    reason: m.purchase ? m.purchase.reason : 'no active purchase rule',
    purchasePts: m.purchasePts.toString(),
    streak: {
      current: m.streak.current,
      multiplier: m.streak.multiplier,
      checkedInToday: m.streak.checkedInToday,
      checkinBonusPts: m.checkinBonusPts.toString(),
    },
    totalPts: m.totalPts.toString(),
  };
}
