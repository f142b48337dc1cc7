import { z } from 'zod';
import {
  ADDRESS_PATTERN,
  brandIdSchema,
  cleanString,
  domainSchema,
  emailSchema,
  eventTypeSchema,
  httpUrlSchema,
  metadataSchema,
  TX_HASH_PATTERN,
} from './common.ts';
import { isEmailAddress } from './email.ts';
import { rateSchema, valueSchema } from './money.ts';
import { referralCodeSchema, referralOutcomeSchema } from './referrals.ts';

/** Sources that bypass cooldown and per-user max claims when the request is brand-signed (spec 4.1 rule 8). */
export const PRIVILEGED_SOURCES = ['chat_manual_reward', 'voice_claim', 'gateway_event'] as const;
export type PrivilegedSource = (typeof PRIVILEGED_SOURCES)[number];

/** Longest accepted `externalId`. */
export const EXTERNAL_ID_MAX = 128;

export const eventRequestSchema = z
  .object({
    brandId: brandIdSchema,
    eventType: eventTypeSchema,
    userEmail: emailSchema,
    domain: domainSchema.optional(),
    sourceUrl: httpUrlSchema.optional(),
    userIdentifier: cleanString(
      z
        .union(
          [z.string().refine(isEmailAddress), z.string().regex(ADDRESS_PATTERN)],
          'must be an email or a 0x address',
        )
        .optional(),
    ),
    metadata: metadataSchema.optional(),
    channel_id: cleanString(z.string().min(1).max(100)).optional(),
    /** What the event is worth (an order's total): a rate rule pays by it; kept on the event either way. */
    value: valueSchema.optional().meta({
      description:
        'The event\'s value, e.g. {"amount": "12.50", "currency": "USD"}: required by a rate rule, which pays points per unit of it. Must be in the brand\'s currency, with at most its minor units.',
    }),
    /**
     * Idempotency key (a post id, an order id): the same brand, event type and externalId is rewarded at
     * most once, whenever and however often it is sent; repeats answer the first event with `duplicate: true`.
     */
    externalId: cleanString(
      z.string().min(1, 'must not be empty').max(EXTERNAL_ID_MAX, `must be at most ${EXTERNAL_ID_MAX} characters`),
    )
      .optional()
      .meta({
        description:
          'Idempotency key (1 to 128 characters, e.g. a post or order id). A repeat of the same brand, eventType and externalId is never rewarded again: it answers the first accepted event with duplicate: true.',
      }),
    /** The referral code a new member signed up with (docs/referrals.md): sent on their first event. */
    referralCode: referralCodeSchema.optional().meta({
      description:
        'A member’s referral code (GET /services/referral/:brandId/:userIdentifier), sent with the new member’s first event (sign-up): the brand’s referral program pays both once the qualifying event happens. A refused code (self-referral, not a new member) never fails the event: the answer’s `referral` says why.',
    }),
  })
  .meta({ id: 'EventRequest' });
export type EventRequest = z.infer<typeof eventRequestSchema>;
export type EventRequestInput = z.input<typeof eventRequestSchema>;

export const rewardSchema = z.object({
  amount: z.number().int(),
  eventType: z.string(),
  walletAddress: z.string(),
  transactionHash: z.string().optional(),
});

export const eventResponseSchema = z
  .object({
    success: z.boolean(),
    eventId: z.uuid(),
    message: z.string(),
    rewardAmount: z.number().int(),
    /** The value the reward was computed on, echoed with exactly its currency's decimals. */
    value: valueSchema.optional().meta({
      description:
        'The event\'s value as recorded ({"amount": "12.50", "currency": "USD"}), present when the event carried one: a rate rule computed rewardAmount from it.',
    }),
    eventType: z.string(),
    walletCreated: z.boolean(),
    walletAddress: z.string().regex(ADDRESS_PATTERN),
    transactionHash: z.string().regex(TX_HASH_PATTERN).optional(),
    /** `submitted`: the mint transaction is sent; `pending`: queued for the minter; `none`: a zero reward, nothing to mint. */
    mintStatus: z.enum(['none', 'pending', 'submitted', 'confirmed']),
    /** With `mintStatus: confirmed` (a repeat): how the mint was proven (docs/chain.md, "Which confirmations have a receipt"). */
    confirmedBy: z.enum(['receipt', 'supply']).optional().meta({
      description:
        'With mintStatus confirmed: receipt when transactionHash has a receipt on chain; supply when the chain lost that receipt but the token supply proves the mint landed (the tokens are in the wallet; no receipt can be shown).',
    }),
    reward: rewardSchema,
    /** Present (true) when this request repeated an `externalId`: the body describes the first event, nothing new was rewarded. */
    duplicate: z.literal(true).optional().meta({
      description:
        'true when the request repeated an externalId already rewarded: the answer is the first event (its eventId, amount, mint), and nothing new was rewarded.',
    }),
    /** What became of the request's `referralCode`, or of the referral this qualifying event paid. */
    referral: referralOutcomeSchema.optional(),
  })
  .meta({ id: 'EventResponse' });
export type EventResponse = z.infer<typeof eventResponseSchema>;

export const BULK_EVENTS_MAX = 100;

export const bulkEventsRequestSchema = z
  .object({
    events: z
      .array(z.unknown())
      .min(1, 'must contain at least 1 event')
      .max(BULK_EVENTS_MAX, `must contain at most ${BULK_EVENTS_MAX} events`),
  })
  .meta({ id: 'BulkEventsRequest' });

export const bulkEventFailureSchema = z
  .object({
    success: z.literal(false),
    index: z.number().int(),
    error: z.string(),
    code: z.string(),
    status: z.number().int(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'BulkEventFailure' });
export type BulkEventFailure = z.infer<typeof bulkEventFailureSchema>;

export const bulkEventsResponseSchema = z
  .object({
    success: z.boolean(),
    processed: z.number().int(),
    failed: z.number().int(),
    results: z.array(z.union([eventResponseSchema, bulkEventFailureSchema])),
  })
  .meta({ id: 'BulkEventsResponse' });
export type BulkEventsResponse = z.infer<typeof bulkEventsResponseSchema>;

export const DETECTION_METHODS = ['manual', 'url_pattern', 'form_auto', 'sdk_auto'] as const;

export const detectionConfigSchema = z.object({
  urlPatterns: z.array(z.string().max(2048)).max(50).optional(),
  successSelectors: z.array(z.string().max(500)).max(50).optional(),
  channels: z.array(z.string().min(1).max(100)).max(100).optional(),
});

export const eventConfigItemSchema = z
  .object({
    eventId: z.string(),
    eventType: z.string(),
    /** The fixed reward; 0 for a rate rule. */
    rewardAmount: z.number().int(),
    /** A rate rule's points per unit of the event's value (send `value` with its events). */
    rate: rateSchema.optional(),
    minValue: z.string().optional(),
    maxReward: z.number().int().optional(),
    maxClaims: z.number().int(),
    cooldownHours: z.number().int(),
    detectionMethod: z.enum(DETECTION_METHODS),
    detectionConfig: detectionConfigSchema,
    isCustom: z.boolean(),
  })
  .meta({ id: 'EventConfigItem' });
export type EventConfigItem = z.infer<typeof eventConfigItemSchema>;

export const eventConfigQuerySchema = z.object({ brandId: brandIdSchema });

export const eventConfigResponseSchema = z
  .object({
    success: z.boolean(),
    brandId: z.string(),
    events: z.array(eventConfigItemSchema),
    count: z.number().int(),
  })
  .meta({ id: 'EventConfigResponse' });
export type EventConfigResponse = z.infer<typeof eventConfigResponseSchema>;
