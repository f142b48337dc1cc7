import { z } from 'zod';
import { addressSchema, brandIdSchema, TX_HASH_PATTERN } from './common.ts';

/** Most charges one `redeem-perk` call may spend. */
export const REDEEM_PERK_MAX_AMOUNT = 1000;
/** Largest page of `list-perk-holders`. */
export const PERK_HOLDERS_MAX_LIMIT = 100;
export const PERK_HOLDERS_DEFAULT_LIMIT = 50;

/** A perk collection id (the PerkNFT token id): a whole number, in JSON or as decimal digits in a query. */
export const collectionIdSchema = z
  .union([z.number(), z.string().regex(/^\d{1,16}$/, 'must be a whole number')])
  .transform((value) => Number(value))
  .pipe(
    z
      .number('must be a whole number')
      .int('must be a whole number')
      .min(0, 'must be 0 or more')
      .max(Number.MAX_SAFE_INTEGER, 'is too large'),
  );

const userAddressSchema = addressSchema.transform((value) => value.toLowerCase());

/** `POST /relayer/redeem-perk` body: spend `amount` charges of a holder's perk (brand-signed). */
export const redeemPerkRequestSchema = z
  .object({
    brand_id: brandIdSchema,
    user_address: userAddressSchema,
    collection_id: collectionIdSchema,
    amount: z
      .number('must be a whole number of charges')
      .int('must be a whole number of charges')
      .min(1, 'must be at least 1')
      .max(REDEEM_PERK_MAX_AMOUNT, `must be at most ${REDEEM_PERK_MAX_AMOUNT}`)
      .default(1),
  })
  .meta({ id: 'RedeemPerkRequest' });
export type RedeemPerkRequest = z.input<typeof redeemPerkRequestSchema>;
export type RedeemPerkInput = z.output<typeof redeemPerkRequestSchema>;

export const redeemPerkResponseSchema = z
  .object({
    success: z.literal(true),
    /** Stable id of the relayed `useCharge` transaction. */
    transactionId: z.string(),
    transactionHash: z.string().regex(TX_HASH_PATTERN),
    /** `confirmed` once mined; `pending` when the receipt did not come within the relayer's wait. */
    status: z.enum(['pending', 'confirmed']),
    collectionId: z.number().int(),
    userAddress: z.string(),
    amount: z.number().int(),
    /** Charges left after this redemption (read from the chain once confirmed; expected value while pending). */
    remainingCharges: z.number().int(),
    blockNumber: z.number().int().nullable(),
    gasUsed: z.string().nullable(),
  })
  .meta({ id: 'RedeemPerkResponse' });
export type RedeemPerkResponse = z.infer<typeof redeemPerkResponseSchema>;

/** `GET /relayer/check-perk-status` query (brand-signed; GET signs the empty body). */
export const checkPerkStatusQuerySchema = z.object({
  brand_id: brandIdSchema,
  user_address: userAddressSchema,
  collection_id: collectionIdSchema,
});

export const perkStatusResponseSchema = z
  .object({
    success: z.literal(true),
    collectionId: z.number().int(),
    userAddress: z.string(),
    /** Tokens of the collection the user claimed. */
    claimed: z.number().int(),
    remainingCharges: z.number().int(),
    chargesPerToken: z.number().int(),
    active: z.boolean(),
  })
  .meta({ id: 'PerkStatusResponse' });
export type PerkStatusResponse = z.infer<typeof perkStatusResponseSchema>;

/** `GET /relayer/list-perk-holders` query (brand-signed). `cursor` is the `nextCursor` of the previous page. */
export const listPerkHoldersQuerySchema = z.object({
  brand_id: brandIdSchema,
  collection_id: collectionIdSchema,
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${PERK_HOLDERS_MAX_LIMIT}`)
    .transform(Number)
    .pipe(
      z.number().min(1, 'must be at least 1').max(PERK_HOLDERS_MAX_LIMIT, `must be at most ${PERK_HOLDERS_MAX_LIMIT}`),
    )
    .default(PERK_HOLDERS_DEFAULT_LIMIT),
  cursor: addressSchema.optional().describe('The last holder address of the previous page'),
});

export const perkHolderSchema = z
  .object({
    userAddress: z.string(),
    claimed: z.number().int(),
    remainingCharges: z.number().int(),
  })
  .meta({ id: 'PerkHolder' });
export type PerkHolder = z.infer<typeof perkHolderSchema>;

export const listPerkHoldersResponseSchema = z
  .object({
    success: z.literal(true),
    collectionId: z.number().int(),
    chargesPerToken: z.number().int(),
    holders: z.array(perkHolderSchema),
    /** Pass as `cursor` for the next page; null on the last page. */
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'ListPerkHoldersResponse' });
export type ListPerkHoldersResponse = z.infer<typeof listPerkHoldersResponseSchema>;
