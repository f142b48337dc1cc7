import { z } from 'zod';
import { WINDOW_STATUSES } from '../rules/windows.ts';
import { brandIdSchema, cleanString, emailSchema, eventTypeSchema, metadataSchema } from './common.ts';
import { valueSchema } from './money.ts';

// Endpoints the seed system's clients call that pts had no equivalent for (docs/compatibility.md). Every one
// is brand-signed.

const userIdentifier = emailSchema;
const isoDate = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z' });

/** `POST /services/drops/create`: a time-boxed claimable amount with a supply and a per-user limit. */
export const createDropRequestSchema = z
  .object({
    brandId: brandIdSchema,
    name: cleanString(z.string().min(1).max(100)).default('Drop'),
    amount: z.number().int().min(1, 'must be at least 1').max(1_000_000_000),
    totalSupply: z.number().int().min(1, 'must be at least 1').max(1_000_000),
    perUserLimit: z.number().int().min(1, 'must be at least 1').max(1000).default(1),
    startsAt: isoDate.optional(),
    endsAt: isoDate,
  })
  .meta({ id: 'CreateDropRequest' });
export type CreateDropRequest = z.output<typeof createDropRequestSchema>;

export const dropSchema = z
  .object({
    dropId: z.string(),
    brandId: z.string(),
    name: z.string(),
    amount: z.number().int(),
    totalSupply: z.number().int(),
    claimed: z.number().int(),
    remaining: z.number().int(),
    perUserLimit: z.number().int(),
    startsAt: z.string(),
    endsAt: z.string(),
    status: z.enum(WINDOW_STATUSES).meta({
      description:
        "Where the claim window stands by the server's clock when it answered: scheduled (before startsAt), active, or ended (from endsAt on)",
    }),
  })
  .meta({ id: 'Drop' });
export type Drop = z.infer<typeof dropSchema>;

export const createDropResponseSchema = z.object({ success: z.literal(true), drop: dropSchema });

/** The portal's `POST /portal/api/brands/:brandId/drops`: the brand is the page's (docs/portal.md). */
export const portalCreateDropRequestSchema = z
  .strictObject(createDropRequestSchema.omit({ brandId: true }).shape)
  .meta({ id: 'PortalCreateDropRequest' });
export type PortalCreateDropRequest = z.input<typeof portalCreateDropRequestSchema>;

/**
 * `PATCH …/drops/:dropId` (portal and admin API, `pts drop update`): the create form's fields, each where a
 * change is safe (docs/portal.md, "Changing a drop"): the name, supply (not below what is claimed) and per-member limit
 * any time before the drop ends; the amount only before the first claim; the start only before it opens;
 * the end only to a later moment than now (ending at once is `POST …/end`).
 */
export const updateDropRequestSchema = z
  .strictObject({
    name: cleanString(z.string().min(1).max(100)).optional(),
    amount: createDropRequestSchema.shape.amount.optional(),
    totalSupply: createDropRequestSchema.shape.totalSupply.optional(),
    perUserLimit: z.number().int().min(1, 'must be at least 1').max(1000).optional(),
    startsAt: isoDate.optional(),
    endsAt: isoDate.optional(),
  })
  .refine((value) => Object.values(value).some((field) => field !== undefined), {
    message: 'give at least one of name, amount, totalSupply, perUserLimit, startsAt, endsAt',
  })
  .meta({ id: 'UpdateDropRequest' });
export type UpdateDropRequest = z.output<typeof updateDropRequestSchema>;

/** A brand's drops, newest first. */
export const dropsResponseSchema = z.object({ success: z.literal(true), drops: z.array(dropSchema) });

/** `POST /services/drops/claim`. */
export const claimDropRequestSchema = z
  .object({
    brandId: brandIdSchema,
    dropId: cleanString(z.string().regex(/^drop_[0-9a-f]{16}$/, 'must be a drop id (drop_ and 16 hex characters)')),
    userIdentifier,
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'ClaimDropRequest' });
export type ClaimDropRequest = z.output<typeof claimDropRequestSchema>;

/** `…/drops/:dropId` routes (portal, admin API): the brand and one of its drops. */
export const dropParamsSchema = z.object({ brandId: brandIdSchema, dropId: claimDropRequestSchema.shape.dropId });

export const claimDropResponseSchema = z
  .object({
    success: z.literal(true),
    dropId: z.string(),
    amount: z.number().int(),
    remaining: z.number().int(),
    eventId: z.string(),
    walletAddress: z.string(),
    transactionHash: z.string().optional(),
    mintStatus: z.enum(['none', 'pending', 'submitted', 'confirmed']),
  })
  .meta({ id: 'ClaimDropResponse' });
export type ClaimDropResponse = z.infer<typeof claimDropResponseSchema>;

/** `POST /services/activity/log`: an activity that counts on the activity board (no reward). */
export const logActivityRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier,
    activityType: cleanString(
      z
        .string()
        .regex(/^[a-z][a-z0-9_]{0,39}$/, 'must be 1 to 40 lowercase letters, digits or underscores')
        .refine((value) => !['earned', 'claimed', 'spent'].includes(value), {
          message: 'earned, claimed and spent are recorded by pts itself; name the activity (e.g. message_sent)',
        }),
    ),
    platform: cleanString(z.string().regex(/^[a-z0-9_-]{1,32}$/, 'must be a platform name, e.g. discord')).default(
      'web',
    ),
    /** Makes a repeat harmless: the same id is logged once per brand. */
    activityId: cleanString(z.string().min(1).max(128)).optional(),
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'LogActivityRequest' });

/** `POST /services/reward/calculate`: what an event would pay the user now. */
export const calculateRewardRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier,
    eventType: eventTypeSchema,
  })
  .meta({ id: 'CalculateRewardRequest' });

/** `POST /services/integrations/process`: a third-party event mapped to one of the brand's event types. */
export const processIntegrationRequestSchema = z
  .object({
    brandId: brandIdSchema,
    integration: cleanString(z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/, 'must name the integration, e.g. shopify')),
    event: cleanString(z.string().regex(/^[a-zA-Z0-9_.:-]{1,60}$/, 'must name the event, e.g. order_created')),
    userEmail: userIdentifier,
    /** The brand event type to record; else `<integration>_<event>`, then `<event>`. */
    eventType: eventTypeSchema.optional(),
    metadata: metadataSchema.optional(),
    /** An order's total (a shop's `order_created`, `orders/paid`): recorded as the event's value; a rate rule pays by it. */
    value: valueSchema.optional().meta({
      description:
        'The order total, {"amount": "59.90", "currency": "USD"} in the brand\'s currency: the event\'s value, by which a rate rule pays',
    }),
  })
  .meta({ id: 'ProcessIntegrationRequest' });

/** `GET|POST /pts-api/user-balance`. */
export const userBalanceRequestSchema = z.object({ brandId: brandIdSchema, userEmail: userIdentifier });

// The seed MCP server's own request bodies (issue 25), recognised on pts's paths and mapped onto pts's
// requests at the edge. A member is named as the bots name it: a platform and the platform's user id.

/** A platform as seed clients name it (`discord`, `telegram`, `twitter`, …). */
const seedPlatform = cleanString(
  z
    .string()
    .regex(/^[a-zA-Z][a-zA-Z0-9_]{0,31}$/, 'must name the platform, e.g. discord')
    .transform((value) => value.toLowerCase()),
);
/** A platform's user id (a Discord snowflake, a Telegram id), or the member's email. */
const platformUserId = cleanString(
  z.string().regex(/^\S{1,254}$/, 'must be the platform user id, e.g. 123456789012345678'),
);

/** `POST /services/drops/create` as the seed MCP server's `create_drop` sends it. */
export const seedCreateDropRequestSchema = z.object({
  brandId: brandIdSchema,
  platform: seedPlatform,
  serverId: cleanString(z.string().min(1).max(64)),
  eventType: eventTypeSchema,
  reward: z.number().int('must be a whole number of pts').min(1, 'must be at least 1').max(1_000_000_000),
  maxClaims: z.number().int().min(1, 'must be at least 1').max(1_000_000),
  expiresInSeconds: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(366 * 24 * 3600, 'must be at most a year'),
  triggerType: z.enum(['reaction', 'button', 'command']).optional(),
  triggerEmoji: cleanString(z.string().max(64)).optional(),
  metadata: metadataSchema.optional(),
});

/** `POST /services/drops/claim` as `claim_drop` sends it: the drop id names the brand. */
export const seedClaimDropRequestSchema = z.object({
  dropId: claimDropRequestSchema.shape.dropId,
  platformUserId,
  platform: seedPlatform,
});

/** `POST /services/integrations/process` as `process_third_party_event` sends it (e.g. a MEE6 level-up). */
export const seedThirdPartyEventRequestSchema = z.object({
  brandId: brandIdSchema,
  platform: seedPlatform,
  sourceBot: processIntegrationRequestSchema.shape.integration,
  eventType: processIntegrationRequestSchema.shape.event,
  targetUserId: platformUserId,
  level: z.number().int().min(0).max(1_000_000).optional(),
  achievement: cleanString(z.string().max(100)).optional(),
  rawMessage: cleanString(z.string().max(500)).optional(),
  metadata: metadataSchema.optional(),
});

/** `POST /pts-api/check-eligibility` as `check_eligibility` sends it: an event type rather than a perk. */
export const seedEventEligibilityRequestSchema = z.object({
  brandId: brandIdSchema,
  eventType: eventTypeSchema,
  userEmail: userIdentifier,
});

/** `POST /services/leaderboard/update-stats` as `update_leaderboard_stats` sends it. */
export const seedLeaderboardStatsRequestSchema = z.object({
  brandId: brandIdSchema,
  userIdentifier,
  platform: seedPlatform.optional(),
  /** What the client says it paid: never counted (pts's boards read pts's own ledger). */
  ptsAmount: z.number().optional(),
  claimType: cleanString(z.string().max(60)).optional(),
  displayName: z.string().max(1000).optional(),
});
