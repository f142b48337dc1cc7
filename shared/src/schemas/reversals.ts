import { z } from 'zod';
import { brandIdSchema, cleanString, eventTypeSchema } from './common.ts';
import { EXTERNAL_ID_MAX } from './events.ts';
import { valueSchema } from './money.ts';

/** Longest accepted `reversalId` (a refund id, a correction's reference). */
export const REVERSAL_ID_MAX = 128;

const reversalIdSchema = cleanString(
  z.string().min(1, 'must not be empty').max(REVERSAL_ID_MAX, `must be at most ${REVERSAL_ID_MAX} characters`),
).meta({
  description:
    'The brand’s id for this reversal (a refund id), 1 to 128 characters: the same reversalId again answers the first reversal and takes nothing more.',
});

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The fields of a reversal request; the schemas below add that the event is named once. */
const reversalFields = z.object({
  brandId: brandIdSchema,
  reversalId: reversalIdSchema,
  eventId: z
    .string()
    .regex(UUID_PATTERN, 'must be the eventId an event answered (a UUID)')
    .optional()
    .meta({ description: 'The event to reverse, as manual-event answered it' }),
  eventType: eventTypeSchema.optional().meta({ description: 'With externalId: the event to reverse' }),
  externalId: cleanString(
    z.string().min(1, 'must not be empty').max(EXTERNAL_ID_MAX, `must be at most ${EXTERNAL_ID_MAX} characters`),
  )
    .optional()
    .meta({ description: 'With eventType: the externalId (an order id) the event was sent with' }),
  value: valueSchema.optional().meta({
    description:
      'The refunded part of the event’s value, in the event’s currency. Absent: the reversal takes back all the event still holds.',
  }),
});

/** The event is named once: by eventId, or by eventType and externalId together. */
function nameTheEventOnce(
  body: { eventId?: string; eventType?: string; externalId?: string },
  ctx: z.RefinementCtx,
): void {
  const byId = body.eventId !== undefined;
  const byExternal = body.eventType !== undefined || body.externalId !== undefined;
  if (byId && byExternal) {
    ctx.addIssue({
      code: 'custom',
      path: ['eventId'],
      message: 'name the event either by eventId or by eventType and externalId, not both',
    });
  } else if (!byId && !byExternal) {
    ctx.addIssue({
      code: 'custom',
      path: ['eventId'],
      message: 'name the event to reverse: eventId, or eventType and externalId',
    });
  } else if (byExternal && (body.eventType === undefined || body.externalId === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [body.eventType === undefined ? 'eventType' : 'externalId'],
      message: 'eventType and externalId name an event together: send both',
    });
  }
}

/**
 * `POST /pts-api/reversals` (issue 35 §2): reverse an event named by its `eventId`, or by its `eventType` and
 * `externalId` (an order id). `value` is the refunded part of the event's value; absent, everything the event
 * still holds is taken back.
 */
export const reversalRequestSchema = reversalFields.superRefine(nameTheEventOnce).meta({ id: 'ReversalRequest' });
export type ReversalRequest = z.infer<typeof reversalRequestSchema>;
export type ReversalRequestInput = z.input<typeof reversalRequestSchema>;

/** `POST /admin/brands/:brandId/reversals` (admin token): the same request, the brand named by the path. */
export const adminReversalRequestSchema = reversalFields
  .omit({ brandId: true })
  .superRefine(nameTheEventOnce)
  .meta({ id: 'AdminReversalRequest' });
export type AdminReversalRequest = z.input<typeof adminReversalRequestSchema>;

export const REVERSAL_STATUSES = ['pending', 'submitted', 'confirmed'] as const;
export type ReversalChainStatus = (typeof REVERSAL_STATUSES)[number];

export const reversalResponseSchema = z
  .object({
    reversalId: z.string(),
    brandId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    /** The pts this reversal takes back from the member's earnings (the event's share for a partial refund). */
    requested: z.number().int().meta({ description: 'Pts this reversal takes back from what the event paid' }),
    taken: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Pts burned from the member’s wallet; null until the chain side is confirmed' }),
    debt: z.number().int().nullable().meta({
      description:
        'Pts the wallet no longer held (the member spent them): owed, paid first from the member’s next rewards at the brand; null until confirmed',
    }),
    refunded: valueSchema.nullable().meta({ description: 'The refunded value this reversal was for (null: all)' }),
    status: z.enum(REVERSAL_STATUSES).meta({
      description:
        '`pending`: recorded, its reverseBatch not sent yet; `submitted`: sent; `confirmed`: mined, taken and debt known',
    }),
    transactionHash: z.string().nullable(),
    createdAt: z.string(),
    /** true when this request repeated a reversalId: the answer is the first reversal, nothing more was taken. */
    duplicate: z.boolean().optional(),
  })
  .meta({ id: 'ReversalResponse' });
export type ReversalResponse = z.infer<typeof reversalResponseSchema>;

/** `reversal`: of an event's reward (a refund, a correction); `deduction`: pts taken back by hand, naming no event. */
export const REVERSAL_KINDS = ['reversal', 'deduction'] as const;
export type ReversalKind = (typeof REVERSAL_KINDS)[number];

/** One entry of a member's reversals at a brand, as their page lists it beside the event it reverses. */
export const memberReversalSchema = z
  .object({
    reversalId: z.string().meta({ description: 'The brand’s reversalId, or `deduction:<idempotency key>`' }),
    kind: z.enum(REVERSAL_KINDS),
    eventId: z.string().nullable().meta({ description: 'The event reversed; null for a deduction' }),
    eventType: z.string().nullable(),
    requested: z.number().int().meta({ description: 'Pts taken back from the member’s earnings' }),
    taken: z.number().int().nullable().meta({ description: 'Burned from the wallet; null until confirmed on chain' }),
    debt: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'What the wallet no longer held, owed to the brand; null until confirmed on chain' }),
    reason: z.string().nullable().meta({ description: 'A deduction’s reason; null for a brand’s reversal' }),
    actor: z.string().nullable().meta({ description: 'Who made a deduction (`portal:<e-mail>`, `admin`)' }),
    status: z.enum(REVERSAL_STATUSES),
    transactionHash: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'MemberReversal' });
export type MemberReversal = z.infer<typeof memberReversalSchema>;
