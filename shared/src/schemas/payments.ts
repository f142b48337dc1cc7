import { z } from 'zod';
import { brandIdSchema, cleanString, emailSchema, httpUrlSchema } from './common.ts';

/** Spec 1 item 4 and 8: 1 USD buys 1000 tokens, so one cent buys 10. */
export const PTS_PER_USD = 1000;
/** Smallest and largest purchase in USD cents (1.00 and 10,000.00 USD). */
export const CHECKOUT_MIN_CENTS = 100;
export const CHECKOUT_MAX_CENTS = 1_000_000;
/** Currencies a checkout may be priced in. The token rate is defined in USD only. */
export const CHECKOUT_CURRENCIES = ['usd'] as const;

/** A checkout session id: Stripe's `cs_test_…`/`cs_live_…` or the local provider's `cs_local_…`. */
export const checkoutSessionIdSchema = cleanString(
  z.string().regex(/^[A-Za-z0-9_]{1,255}$/, 'must be a checkout session id (letters, digits, underscores)'),
);

export const createCheckoutRequestSchema = z
  .object({
    brandId: brandIdSchema,
    /** USD cents: 1000 = 10.00 USD. */
    amount: z
      .number('must be a number of USD cents')
      .int('must be a whole number of USD cents (1000 = 10.00 USD)')
      .min(CHECKOUT_MIN_CENTS, `must be at least ${CHECKOUT_MIN_CENTS} cents (1.00 USD)`)
      .max(CHECKOUT_MAX_CENTS, `must be at most ${CHECKOUT_MAX_CENTS} cents (10,000.00 USD)`),
    currency: cleanString(
      z
        .string()
        .transform((value) => value.toLowerCase())
        .pipe(z.enum(CHECKOUT_CURRENCIES, 'only usd is supported (the token rate is 1 USD = 1000 tokens)')),
    ).default('usd'),
    userEmail: emailSchema,
    successUrl: httpUrlSchema,
    cancelUrl: httpUrlSchema,
  })
  .meta({ id: 'CreateCheckoutRequest' });
export type CreateCheckoutRequest = z.input<typeof createCheckoutRequestSchema>;
export type CreateCheckoutInput = z.output<typeof createCheckoutRequestSchema>;

export const createCheckoutResponseSchema = z
  .object({
    success: z.literal(true),
    /** The hosted payment page: Stripe Checkout, or this service's own page with the local provider. */
    checkoutUrl: z.string(),
    sessionId: z.string(),
  })
  .meta({ id: 'CreateCheckoutResponse' });
export type CreateCheckoutResponse = z.infer<typeof createCheckoutResponseSchema>;

export const paymentMintRequestSchema = z
  .object({ sessionId: checkoutSessionIdSchema })
  .meta({ id: 'PaymentMintRequest' });
export type PaymentMintRequest = z.input<typeof paymentMintRequestSchema>;

export const MINT_STATUSES = ['pending', 'submitted', 'confirmed', 'failed'] as const;

export const paymentMintResponseSchema = z
  .object({
    success: z.literal(true),
    message: z.string(),
    /** Absent while the mint is still queued (`mintStatus: pending`); the reward processor sends it. */
    txHash: z.string().optional(),
    /** `<PTS_EXPLORER_URL>/tx/<txHash>`, present with `txHash`. */
    blockExplorer: z.string().optional(),
    /** The brand's wallet the tokens are minted to. */
    walletAddress: z.string(),
    /** Dollars, e.g. 10 for 10.00 USD. */
    usdAmount: z.number(),
    ptsAmount: z.number(),
    paymentIntentId: z.string().nullable(),
    /** Present (true) only when this session had already been fulfilled: nothing was minted now. */
    alreadyProcessed: z.literal(true).optional(),
    mintStatus: z.enum(MINT_STATUSES),
  })
  .meta({ id: 'PaymentMintResponse' });
export type PaymentMintResponse = z.infer<typeof paymentMintResponseSchema>;

/** Failure body of the payment endpoints: spec 4.7's `success:false, message` plus the usual envelope. */
export const paymentFailureSchema = z
  .object({
    success: z.literal(false),
    message: z.string(),
    error: z.string(),
    code: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'PaymentFailure' });
export type PaymentFailure = z.infer<typeof paymentFailureSchema>;

export const PAYMENT_WEBHOOK_OUTCOMES = [
  'fulfilled',
  'already_processed',
  'duplicate',
  'ignored',
  'payment_not_completed',
  'rejected',
] as const;

export const paymentWebhookResponseSchema = z
  .object({
    received: z.literal(true),
    outcome: z.enum(PAYMENT_WEBHOOK_OUTCOMES),
  })
  .meta({ id: 'PaymentWebhookResponse' });
export type PaymentWebhookResponse = z.infer<typeof paymentWebhookResponseSchema>;

export const PAYMENT_STATUSES = ['created', 'paid', 'fulfilled', 'canceled'] as const;

export const purchaseSchema = z
  .object({
    sessionId: z.string(),
    provider: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    /** Dollars as a decimal string, e.g. "10.00". */
    usdAmount: z.string(),
    usdCents: z.number().int(),
    ptsAmount: z.number().int(),
    userEmail: z.string().nullable(),
    paymentIntentId: z.string().nullable(),
    /** Progress of the mint once fulfilled; null before. */
    mintStatus: z.enum(MINT_STATUSES).nullable(),
    txHash: z.string().nullable(),
    /** Why a paid session was not fulfilled (status `paid`). */
    lastError: z.string().nullable(),
    createdAt: z.string(),
    fulfilledAt: z.string().nullable(),
  })
  .meta({ id: 'Purchase' });
export type Purchase = z.infer<typeof purchaseSchema>;

export const purchaseTotalsSchema = z
  .object({
    purchases: z.number().int(),
    fulfilled: z.number().int(),
    /** Sum over fulfilled purchases. */
    usdAmount: z.string(),
    usdCents: z.number().int(),
    ptsPurchased: z.number().int(),
    /** Tokens in a sent or confirmed mint transaction. */
    ptsMinted: z.number().int(),
    ptsConfirmed: z.number().int(),
  })
  .meta({ id: 'PurchaseTotals' });
export type PurchaseTotals = z.infer<typeof purchaseTotalsSchema>;

export const brandPurchasesResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    purchases: z.array(purchaseSchema),
    totals: purchaseTotalsSchema,
  })
  .meta({ id: 'BrandPurchases' });
export type BrandPurchases = z.infer<typeof brandPurchasesResponseSchema>;
