import { z } from 'zod';

/** Every event type a brand's webhook endpoint can receive. */
export const WEBHOOK_EVENT_TYPES = [
  'reward.distributed',
  'reward.reversed',
  'perk.redeemed',
  'streak.milestone',
  'achievement.unlocked',
  'member.tier_changed',
  'referral.paid',
  'payment.completed',
  'webhook.test',
] as const;
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const timestampMs = z.number().int().nonnegative().describe('milliseconds since the Unix epoch');
const address = z.string().regex(/^0x[a-fA-F0-9]{40}$/);
const txHash = z.string().regex(/^0x[a-fA-F0-9]{64}$/);

/**
 * `reward.distributed`: spec §6's `pts_distributed` notification, sent once the reward's mint transaction
 * is confirmed on chain (`transactionHash`); `timestamp` is when the event was accepted.
 */
export const rewardDistributedDataSchema = z.object({
  event: z.literal('pts_distributed'),
  brandId: z.string(),
  userId: z.string(),
  email: z.string(),
  walletAddress: address,
  ptsAmount: z.number().int().nonnegative(),
  transactionHash: txHash,
  /**
   * Extra (not in spec §6): `receipt` when `transactionHash` has a receipt on chain; `supply` when the chain
   * lost the transaction's receipt but the token supply proves the mint landed (docs/chain.md, "Confirmed by
   * supply"). Absent in notices queued before it existed.
   */
  confirmedBy: z.enum(['receipt', 'supply']).optional(),
  timestamp: timestampMs,
  /** Extra (not in spec §6): the event that earned the reward and its type. */
  eventId: z.string().optional(),
  eventType: z.string().optional(),
});

/**
 * `reward.reversed` (issue 35 §2): a reversal of an event's reward, or a manual deduction (kind `deduction`, no
 * event), was settled on chain: `taken` pts burned from
 * the member's wallet, `debt` pts the wallet no longer held (owed, paid first from the member's next rewards).
 */
export const rewardReversedDataSchema = z.object({
  brandId: z.string(),
  reversalId: z.string(),
  /** `reversal`: of the event named; `deduction`: pts taken back by hand by the brand's team (no event, a reason). */
  kind: z.enum(['reversal', 'deduction']),
  /** The event reversed; null for a deduction. */
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  /** A deduction's reason. */
  reason: z.string().optional(),
  email: z.string(),
  walletAddress: address.nullable(),
  requested: z.number().int().nonnegative(),
  taken: z.number().int().nonnegative(),
  debt: z.number().int().nonnegative(),
  /** The refunded value this reversal was for (null: the whole event). */
  refunded: z.object({ amount: z.string(), currency: z.string() }).nullable(),
  /** The `reverseBatch` that carried it (null when nothing was to be taken on chain). */
  transactionHash: txHash.nullable(),
  timestamp: timestampMs,
});

/** `perk.redeemed`: charges were used on a claimed perk token. */
export const perkRedeemedDataSchema = z.object({
  brandId: z.string(),
  walletAddress: address,
  collectionId: z.string(),
  tokenId: z.string(),
  chargesUsed: z.number().int().positive(),
  chargesRemaining: z.number().int().nonnegative(),
  timestamp: timestampMs,
});

/** `streak.milestone`: a user's streak reached a milestone length. */
export const streakMilestoneDataSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  email: z.string(),
  streakType: z.string(),
  streakLength: z.number().int().positive(),
  milestone: z.number().int().positive(),
  timestamp: timestampMs,
});

/** `achievement.unlocked`: a user unlocked an achievement. */
export const achievementUnlockedDataSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  email: z.string(),
  achievementId: z.string(),
  name: z.string(),
  timestamp: timestampMs,
});

/** `member.tier_changed`: a member was promoted, or downgraded at the period's turn (docs/tiers.md). */
export const memberTierChangedDataSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  email: z.string(),
  from: z.string().nullable(),
  to: z.string(),
  direction: z.enum(['up', 'down']),
  timestamp: timestampMs,
});

/** `referral.paid`: a referee's qualifying event paid the referral to both sides (docs/referrals.md). */
export const referralPaidDataSchema = z.object({
  brandId: z.string(),
  referrer: z.string(),
  referee: z.string(),
  code: z.string(),
  qualifyingEventId: z.string(),
  referrerReward: z.number().int().nonnegative(),
  refereeReward: z.number().int().nonnegative(),
  timestamp: timestampMs,
});

/** `payment.completed`: a brand's checkout was paid; the tokens it bought are minted (1 USD = 1000). */
export const paymentCompletedDataSchema = z.object({
  brandId: z.string(),
  sessionId: z.string(),
  /** In the currency's minor unit (cents). */
  amountTotal: z.number().int().nonnegative(),
  currency: z.string(),
  ptsAmount: z.number().int().nonnegative(),
  transactionHash: txHash.nullable(),
  timestamp: timestampMs,
});

/** `webhook.test`: sent on demand (`pts webhook test`) to check an endpoint. */
export const webhookTestDataSchema = z.object({
  brandId: z.string(),
  message: z.string(),
  timestamp: timestampMs,
});

/** The `data` schema of each event type. */
export const webhookDataSchemas = {
  'reward.distributed': rewardDistributedDataSchema,
  'reward.reversed': rewardReversedDataSchema,
  'perk.redeemed': perkRedeemedDataSchema,
  'streak.milestone': streakMilestoneDataSchema,
  'achievement.unlocked': achievementUnlockedDataSchema,
  'member.tier_changed': memberTierChangedDataSchema,
  'referral.paid': referralPaidDataSchema,
  'payment.completed': paymentCompletedDataSchema,
  'webhook.test': webhookTestDataSchema,
} as const satisfies Record<WebhookEventType, z.ZodType>;
export type WebhookEventData<T extends WebhookEventType> = z.infer<(typeof webhookDataSchemas)[T]>;

const envelope = <T extends WebhookEventType>(type: T) =>
  z.object({
    /** `evt_` + 32 hex: the same on every attempt and replay; deduplicate by it. */
    id: z.string().regex(/^evt_[0-9a-f]{32}$/),
    type: z.literal(type),
    /** Unix seconds when the event happened. */
    created: z.number().int().nonnegative(),
    data: webhookDataSchemas[type],
  });

/** The body of every webhook POST: `{ id, type, created, data }`, discriminated by `type`. */
export const webhookEventSchema = z
  .discriminatedUnion('type', [
    envelope('reward.distributed'),
    envelope('reward.reversed'),
    envelope('perk.redeemed'),
    envelope('streak.milestone'),
    envelope('achievement.unlocked'),
    envelope('member.tier_changed'),
    envelope('referral.paid'),
    envelope('payment.completed'),
    envelope('webhook.test'),
  ])
  .meta({ id: 'WebhookEvent' });
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

// ---- admin API -------------------------------------------------------------------------------------------

export const setWebhookRequestSchema = z
  .object({
    url: z
      .string()
      .trim()
      .max(2048)
      .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'must be an http(s) URL'),
    /** Issue a new secret for an existing endpoint (the old one stops working at once). */
    rotateSecret: z.boolean().optional(),
  })
  .meta({ id: 'SetWebhookRequest' });
export type SetWebhookRequest = z.input<typeof setWebhookRequestSchema>;

export const webhookEndpointSchema = z
  .object({
    brandId: z.string(),
    url: z.string(),
    active: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

/** Answer of `PUT …/webhook`: `secret` is present only when one was issued (new endpoint or rotation). */
export const savedWebhookEndpointSchema = webhookEndpointSchema
  .extend({ secret: z.string().optional() })
  .meta({ id: 'SavedWebhookEndpoint' });
export type SavedWebhookEndpoint = z.infer<typeof savedWebhookEndpointSchema>;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed', 'dead'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string(),
    brandId: z.string(),
    type: z.string(),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const webhookDeliveriesQuerySchema = z.object({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export type WebhookDeliveriesQuery = z.input<typeof webhookDeliveriesQuerySchema>;

export const webhookDeliveryParamsSchema = z.object({ id: z.uuid('must be a delivery id (uuid)') });

/** Answer of `POST …/webhook/test`: what the receiver said. */
export const webhookTestResultSchema = z
  .object({
    delivered: z.boolean(),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    durationMs: z.number().int().nonnegative(),
    delivery: webhookDeliverySchema,
  })
  .meta({ id: 'WebhookTestResult' });
export type WebhookTestResult = z.infer<typeof webhookTestResultSchema>;
