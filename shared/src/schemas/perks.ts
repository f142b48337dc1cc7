import { z } from 'zod';
import { PERK_STATUSES } from '../rules/perk-status.ts';
import { brandIdSchema, cleanString, emailAddressSchema, httpUrlSchema } from './common.ts';

/** Whole reward tokens (0 decimals); kept within JSON's safe integers. */
const tokenAmount = z.number().int('must be a whole number').min(0, 'must be ≥ 0').max(Number.MAX_SAFE_INTEGER);
const count = z.number().int('must be a whole number').min(0, 'must be ≥ 0').max(Number.MAX_SAFE_INTEGER);
/** A moment of a perk's redemption window: ISO 8601 with its offset. */
const windowMoment = cleanString(
  z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2027-01-31T18:00:00Z' }),
);

export const PERK_CATEGORY_PATTERN = /^[a-z0-9][a-z0-9_-]{0,49}$/;
/** Lowercase letters, digits, `_` and `-`, 1 to 50 characters. */
export const perkCategorySchema = cleanString(
  z
    .string()
    .transform((value) => value.toLowerCase())
    .pipe(z.string().regex(PERK_CATEGORY_PATTERN, 'must be 1 to 50 lowercase letters, digits, _ or -')),
);
export const PERK_DEFAULT_CATEGORY = 'general';

const perkFields = {
  name: cleanString(z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters')),
  description: cleanString(z.string().max(2000, 'must be at most 2000 characters')),
  category: perkCategorySchema,
  /** Price of one perk in reward tokens. */
  cost: tokenAmount,
  /** Most perks ever claimed; null = unlimited. */
  maxSupply: z.number().int('must be a whole number').min(1, 'must be ≥ 1 (null = unlimited)').nullable(),
  /** Most perks one wallet may claim; 0 = unlimited. */
  maxPerUser: count,
  /** Uses granted per claimed perk; 0 = not redeemable. */
  chargesPerToken: count,
  active: z.boolean(),
  imageUrl: httpUrlSchema.nullable(),
  /** Redeemable from this moment; null = as soon as it is active. */
  startsAt: windowMoment.nullable(),
  /** Redeemable until this moment (exclusive); null = no end. */
  endsAt: windowMoment.nullable(),
};

/** `POST /admin/perks`. */
export const createPerkRequestSchema = z.strictObject({
  brandId: brandIdSchema,
  name: perkFields.name,
  description: perkFields.description.optional(),
  category: perkFields.category.optional(),
  cost: perkFields.cost,
  maxSupply: perkFields.maxSupply.optional(),
  maxPerUser: perkFields.maxPerUser.optional(),
  chargesPerToken: perkFields.chargesPerToken.optional(),
  active: perkFields.active.optional(),
  imageUrl: perkFields.imageUrl.optional(),
  startsAt: perkFields.startsAt.optional(),
  endsAt: perkFields.endsAt.optional(),
});
export type CreatePerkRequest = z.input<typeof createPerkRequestSchema>;
export type CreatePerkInput = z.output<typeof createPerkRequestSchema>;

/** `PATCH /admin/perks/:id`: at least one field. */
export const updatePerkRequestSchema = z
  .strictObject({
    name: perkFields.name.optional(),
    description: perkFields.description.optional(),
    category: perkFields.category.optional(),
    cost: perkFields.cost.optional(),
    maxSupply: perkFields.maxSupply.optional(),
    maxPerUser: perkFields.maxPerUser.optional(),
    chargesPerToken: perkFields.chargesPerToken.optional(),
    active: perkFields.active.optional(),
    imageUrl: perkFields.imageUrl.optional(),
    startsAt: perkFields.startsAt.optional(),
    endsAt: perkFields.endsAt.optional(),
  })
  .refine((value) => Object.values(value).some((field) => field !== undefined), {
    message: 'give at least one field to change',
  });
export type UpdatePerkRequest = z.input<typeof updatePerkRequestSchema>;
export type UpdatePerkInput = z.output<typeof updatePerkRequestSchema>;

export const perkIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9]\d{0,17}$/, 'must be a perk id (a positive whole number)'),
});

export const listPerksQuerySchema = z.object({ brand: brandIdSchema.optional() });

/** A perk as the admin API shows it. `chainStatus` `pending` means the on-chain collection is not confirmed yet. */
export const perkSchema = z.object({
  perkId: z.number().int(),
  /** The perk's public id (spec 2.3 `perk.id`); accepted wherever a perk id is taken by the redeem endpoint. */
  uuid: z.uuid(),
  brandId: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  cost: z.number().int(),
  maxSupply: z.number().int().nullable(),
  maxPerUser: z.number().int(),
  chargesPerToken: z.number().int(),
  active: z.boolean(),
  imageUrl: z.string().nullable(),
  /** The redemption window (null: open from activation, or no end). */
  startsAt: z.string().nullable(),
  endsAt: z.string().nullable(),
  chainStatus: z.enum(['pending', 'synced']),
  chainTxHash: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** When the brand archived the perk (present only then): out of every catalogue, refused to redeem. */
  archivedAt: z.string().optional(),
});
export type Perk = z.infer<typeof perkSchema>;

export const perkResponseSchema = z.object({ success: z.literal(true), perk: perkSchema });

/**
 * A perk as the portal shows it: with `status` by the shared rule (shared/src/rules/perk-status.ts, at the
 * server's clock) and `totalClaimed` from PerkNFT (null when not on chain yet, or the chain did not answer).
 */
export const portalPerkSchema = perkSchema
  .extend({ status: z.enum(PERK_STATUSES), totalClaimed: z.number().int().nullable() })
  .meta({ id: 'PortalPerk' });
export type PortalPerk = z.infer<typeof portalPerkSchema>;
export const portalPerksResponseSchema = z.object({ success: z.literal(true), perks: z.array(portalPerkSchema) });
export const perksResponseSchema = z.object({ success: z.literal(true), perks: z.array(perkSchema) });

/** `GET /services/perks/:brandId` query. */
export const perkCatalogueQuerySchema = z.object({
  category: perkCategorySchema.optional(),
  available: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .transform((value) => value === 'true')
    .optional(),
});
export const perkCatalogueParamsSchema = z.object({ brandId: brandIdSchema });

/** One perk of the public catalogue, with live supply from the chain. */
export const perkCatalogueItemSchema = z.object({
  id: z.number().int(),
  /** The perk's public id (spec 2.3 `perk.id`). */
  uuid: z.uuid(),
  brandId: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  cost: z.number().int(),
  maxSupply: z.number().int().nullable(),
  totalClaimed: z.number().int(),
  /** null = unlimited. */
  remainingSupply: z.number().int().nullable(),
  maxPerUser: z.number().int(),
  chargesPerToken: z.number().int(),
  imageUrl: z.string().nullable(),
  active: z.boolean(),
  /** The redemption window: redeemable from `startsAt` (null: at once) until `endsAt` (exclusive; null: no end). */
  startsAt: z.string().nullable(),
  endsAt: z.string().nullable(),
  /** Active, inside its redemption window (startsAt, endsAt) and not sold out. */
  available: z.boolean(),
});
export type PerkCatalogueItem = z.infer<typeof perkCatalogueItemSchema>;

export const perkCatalogueResponseSchema = z.object({
  success: z.literal(true),
  brandId: z.string(),
  perks: z.array(perkCatalogueItemSchema),
});
export type PerkCatalogueResponse = z.infer<typeof perkCatalogueResponseSchema>;

/** A perk id as callers give it: the public uuid, or the integer collection id (number or digits). */
export const perkRefSchema = z.union(
  [
    z.uuid().transform((value) => value.toLowerCase()),
    z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    z.string().regex(/^[1-9]\d{0,15}$/),
  ],
  { message: 'must be a perk id: its uuid, or its integer id' },
);

/** Longest accepted redemption idempotency key (as an event's `externalId`). */
export const IDEMPOTENCY_KEY_MAX = 128;

/**
 * A redemption's idempotency key (docs/perks.md "Retrying a redemption"): the caller's own id for the
 * redemption (an order id, a uuid), scoped to the brand and the member.
 */
export const idempotencyKeySchema = cleanString(
  z
    .string()
    .min(1, 'must not be empty')
    .max(IDEMPOTENCY_KEY_MAX, `must be at most ${IDEMPOTENCY_KEY_MAX} characters`)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (e.g. a uuid or an order id)'),
).meta({
  description:
    'Idempotency key (1 to 128 printable ASCII characters, e.g. a uuid or an order id), scoped to the brand and the member. A repeat with the same key answers the first redemption (replayed: true) and spends nothing; the same key with a different perk or platform is 409. A failed redemption frees its key.',
});

/** `POST /services/perks/redeem` (spec 4.3; brand-signed). */
export const perkRedemptionRequestSchema = z
  .strictObject({
    brandId: brandIdSchema,
    perkId: perkRefSchema,
    /** An email, or a platform user's synthetic email `<platform>_<id>@<service domain>`. */
    userIdentifier: cleanString(emailAddressSchema('must be an email or a synthetic email <platform>_<id>@<domain>')),
    /** Where the redemption happened (activity log); default: the synthetic email's platform, else `web`. */
    platform: cleanString(
      z
        .string()
        .regex(/^[a-zA-Z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, underscores or hyphens (e.g. discord)')
        .transform((value) => value.toLowerCase()),
    ).optional(),
    /** Also accepted as the `Idempotency-Key` header. */
    idempotencyKey: idempotencyKeySchema.optional(),
  })
  .meta({ id: 'PerkRedemptionRequest' });
export type PerkRedemptionRequest = z.input<typeof perkRedemptionRequestSchema>;
export type PerkRedemptionInput = z.output<typeof perkRedemptionRequestSchema>;

/** The perk in a redeem response (spec 2.3). */
export const redeemedPerkSchema = z.object({
  id: z.uuid(),
  /** The integer collection id (PerkNFT). */
  perkId: z.number().int(),
  name: z.string(),
  cost: z.number().int(),
  category: z.string(),
});

/** Redeem response (spec 2.3) plus the claim transaction. `pending`: sent, not yet mined within the wait. */
export const perkRedemptionResponseSchema = z
  .object({
    success: z.literal(true),
    confirmationCode: z.string().nullable(),
    perk: redeemedPerkSchema.nullable(),
    redemptionId: z.uuid(),
    status: z.enum(['confirmed', 'pending']),
    transactionHash: z.string().nullable(),
    walletAddress: z.string(),
    /** Present (true) when the request repeated an idempotency key: this is the first redemption; nothing was spent. */
    replayed: z.literal(true).optional(),
  })
  .meta({ id: 'PerkRedemptionResponse' });
export type PerkRedemptionResponse = z.infer<typeof perkRedemptionResponseSchema>;
