import { z } from 'zod';
import { achievementSchema } from './achievements.ts';
import { cleanString } from './common.ts';
import { perkConstraintSchema } from './constraints.ts';
import { memberFiguresSchema } from './member-figures.ts';
import { createPerkRequestSchema, idempotencyKeySchema, portalPerkSchema } from './perks.ts';
import { portalBrandParamsSchema } from './portal.ts';
import { memberReversalSchema } from './reversals.ts';

// A brand's perks and loyalty members as the portal's Perks and Members pages read and change them
// (docs/portal.md). The services behind them are the perk, ledger, account and event modules'.

/** `POST /portal/api/brands/:brandId/perks`: the admin API's create body; the brand comes from the path. */
export const portalCreatePerkRequestSchema = createPerkRequestSchema
  .omit({ brandId: true })
  .meta({ id: 'PortalCreatePerkRequest' });
export type PortalCreatePerkRequest = z.input<typeof portalCreatePerkRequestSchema>;

export const portalPerkParamsSchema = portalBrandParamsSchema.extend({
  perkId: z.string().regex(/^[1-9]\d{0,17}$/, 'must be a perk id (a positive whole number)'),
});
export const portalPerkConstraintParamsSchema = portalPerkParamsSchema.extend({
  constraintId: z.uuid('must be a constraint id (uuid)'),
});

/** One redemption of a perk, as the brand sees it. */
export const brandRedemptionSchema = z.object({
  redemptionId: z.string(),
  perkId: z.number().int(),
  perkName: z.string(),
  /** The member's identity that redeemed (an e-mail or a platform identity). */
  userKey: z.string(),
  platform: z.string(),
  walletAddress: z.string(),
  status: z.enum(['pending', 'confirmed', 'failed']),
  cost: z.number().int(),
  confirmationCode: z.string(),
  transactionHash: z.string().nullable(),
  /** Why a failed redemption failed (nothing was spent). */
  error: z.string().nullable(),
  createdAt: z.string(),
});
export type BrandRedemption = z.infer<typeof brandRedemptionSchema>;

/** `GET /portal/api/brands/:brandId/perks/:perkId`: the perk, its collection, constraints and redemptions. */
export const portalPerkDetailSchema = z
  .object({
    success: z.literal(true),
    perk: portalPerkSchema,
    /** The PerkNFT contract and the collection id (= perkId) the perk is minted in. */
    collection: z.object({ contractAddress: z.string().nullable(), collectionId: z.number().int() }),
    constraints: z.array(perkConstraintSchema),
    /** Newest first, at most 100. */
    redemptions: z.array(brandRedemptionSchema),
  })
  .meta({ id: 'PortalPerkDetail' });
export type PortalPerkDetail = z.infer<typeof portalPerkDetailSchema>;

/** A member search: an e-mail (or its start), a platform identity (`discord:123`, or the id alone), a wallet. */
export const memberSearchQuerySchema = z.object({
  q: cleanString(
    z.string().min(2, 'type at least 2 characters of an e-mail, a platform id or a wallet').max(254, 'is too long'),
  ),
});

/** One member found by a search. */
export const memberMatchSchema = z.object({
  /** The identity that matched (an e-mail, or a platform identity `<platform>_<id>@<domain>`). */
  userKey: z.string(),
  /** The account it belongs to (itself when unlinked). */
  accountKey: z.string(),
  platform: z.string(),
  walletAddress: z.string().nullable(),
  lastSeenAt: z.string().nullable(),
});
export type MemberMatch = z.infer<typeof memberMatchSchema>;
export const memberSearchResponseSchema = z
  .object({ success: z.literal(true), members: z.array(memberMatchSchema) })
  .meta({ id: 'MemberSearchResponse' });

/** What the Members list sorts by (docs/portal.md, "Members"): the member ledger's figures and two dates. */
export const MEMBER_LIST_SORTS = ['balance', 'earned', 'lastActivity', 'joined'] as const;
export type MemberListSort = (typeof MEMBER_LIST_SORTS)[number];
/** Members one page of the list holds at most. */
export const MEMBER_LIST_MAX_LIMIT = 100;

const memberListFilter = {
  sort: z
    .enum(MEMBER_LIST_SORTS, { message: `sort must be one of ${MEMBER_LIST_SORTS.join(', ')}` })
    .default('lastActivity'),
  order: z.enum(['asc', 'desc'], { message: 'order must be asc or desc' }).default('desc'),
  q: cleanString(
    z
      .string()
      .min(2, 'type at least 2 characters of an e-mail, a platform id or a wallet')
      .max(254, 'is too long')
      .optional(),
  ).describe('Found anywhere in an e-mail, an identity or a wallet; `%` and `_` are literal'),
};

/** `GET /portal/api/brands/:brandId/member-list`: one page of the brand's members, sorted, maybe searched. */
export const memberListQuerySchema = z.object({
  ...memberListFilter,
  cursor: z
    .string()
    .max(1000, 'cursor is too long')
    .optional()
    .describe("The previous page's `nextCursor`, with the same sort, order and search"),
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(MEMBER_LIST_MAX_LIMIT, `limit must be at most ${MEMBER_LIST_MAX_LIMIT}`)
    .default(50),
});
export type MemberListQuery = z.infer<typeof memberListQuerySchema>;

/** `GET /portal/api/brands/:brandId/member-list.csv`: the whole list with the same sort and search. */
export const memberExportQuerySchema = z.object(memberListFilter);
export type MemberExportQuery = z.infer<typeof memberExportQuerySchema>;

/** `GET /portal/api/brands/:brandId/events.csv`: the brand's events in [from, to). */
export const eventExportQuerySchema = z.object({
  from: z.iso.datetime({ offset: true, message: 'from must be an ISO 8601 date-time (2026-12-01T00:00:00Z)' }),
  to: z.iso.datetime({ offset: true, message: 'to must be an ISO 8601 date-time (2026-12-08T00:00:00Z)' }),
});

/** One member (an account with its identities) in the list, with the member ledger's figures at the brand. */
export const memberListEntrySchema = z.object({
  accountKey: z.string(),
  /** Every identity linked to the account, the account's own key first. */
  identityKeys: z.array(z.string()),
  walletAddress: z.string().nullable(),
  /** `earned − spent`: the brand's part of the member's pts (the wallet may hold more, bought or from other brands). */
  balance: z.number().int(),
  /** Rewards of accepted events at the brand. */
  earned: z.number().int(),
  /** Cost of redemptions pending or confirmed at the brand. */
  spent: z.number().int(),
  /** First event (accepted or refused) or redemption at the brand. */
  joinedAt: z.string(),
  /** Last event or redemption at the brand. */
  lastActivityAt: z.string(),
});
export type MemberListEntry = z.infer<typeof memberListEntrySchema>;

export const memberListResponseSchema = z
  .object({
    success: z.literal(true),
    members: z.array(memberListEntrySchema),
    /** Pass as `cursor` for the next page; null on the last page. */
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'MemberListResponse' });
export type MemberListResponse = z.infer<typeof memberListResponseSchema>;

export const memberParamsSchema = portalBrandParamsSchema.extend({
  userKey: cleanString(
    z
      .string()
      .min(3)
      .max(254, 'is too long')
      .transform((value) => value.toLowerCase()),
  ),
});

/** One event of a member at the brand, accepted or refused (with the refusal's code). */
export const memberEventSchema = z.object({
  eventId: z.string(),
  eventType: z.string(),
  userKey: z.string(),
  status: z.enum(['accepted', 'rejected']),
  /** The refusal's error code (COOLDOWN_ACTIVE, MAX_CLAIMS_REACHED, …); null when accepted. */
  reason: z.string().nullable(),
  rewardAmount: z.number().int(),
  /** Who sent it: `brand` (signed), `agent:<key>`, `portal:<e-mail>` (a manual award), or null (unsigned). */
  sentBy: z.string().nullable(),
  /** A manual award's reason. */
  note: z.string().nullable(),
  createdAt: z.string(),
});
export type MemberEvent = z.infer<typeof memberEventSchema>;

/** `GET /portal/api/brands/:brandId/loyalty-members/:userKey`. */
export const memberProfileSchema = z
  .object({
    success: z.literal(true),
    userKey: z.string(),
    accountKey: z.string(),
    walletAddress: z.string().nullable(),
    identities: z.array(
      z.object({
        identityKey: z.string(),
        platform: z.string(),
        primary: z.boolean(),
        linkedAt: z.string().nullable(),
      }),
    ),
    /** The wallet (one token across brands): on chain now, and rewards accepted but not on chain yet. */
    balance: z.object({ onChain: z.number().int(), pending: z.number().int(), reserved: z.number().int() }),
    /** Every figure, labelled, as every member surface shows it (schemas/member-figures.ts). */
    figures: memberFiguresSchema,
    /** What the member earned and spent at this brand (docs/ledger.md). */
    ledger: z.object({
      earned: z.number().int(),
      pendingEarned: z.number().int(),
      confirmedEarned: z.number().int(),
      acceptedEvents: z.number().int(),
      redeemed: z.number().int(),
      redeeming: z.number().int(),
    }),
    /** Newest first, at most 100. */
    events: z.array(memberEventSchema),
    /** Reversals of the member's events and manual deductions at the brand, newest first, at most 100. */
    reversals: z.array(memberReversalSchema),
    /** Pts the member owes the brand (reversals their wallet could not cover), paid first from their next rewards. */
    debt: z.number().int().nonnegative(),
    redemptions: z.array(brandRedemptionSchema),
    streak: z.object({
      current: z.number().int(),
      longest: z.number().int(),
      active: z.boolean(),
      lastActivityAt: z.string().nullable(),
    }),
    achievements: z.array(achievementSchema),
    /** The brand blocked the member (their events are refused with MEMBER_BLOCKED); null when not. */
    blocked: memberBlockSchemaOf().nullable().optional(),
  })
  .meta({ id: 'MemberProfile' });
export type MemberProfile = z.infer<typeof memberProfileSchema>;

/** A member's block at a brand: why, when and by whom (docs/portal.md, "Members"). */
function memberBlockSchemaOf() {
  return z.object({ reason: z.string(), blockedAt: z.string(), blockedBy: z.string() });
}
export const memberBlockSchema = memberBlockSchemaOf().meta({ id: 'MemberBlock' });
export type MemberBlockState = z.infer<typeof memberBlockSchema>;

/** `POST …/loyalty-members/:userKey/block`: blocking a member, always with the reason why. */
export const memberBlockRequestSchema = z
  .strictObject({
    reason: cleanString(
      z
        .string({ message: 'is required: say why the member is blocked' })
        .min(3, 'is required: say why the member is blocked (at least 3 characters)')
        .max(500, 'must be at most 500 characters'),
    ),
  })
  .meta({ id: 'MemberBlockRequest' });
export type MemberBlockRequest = z.input<typeof memberBlockRequestSchema>;

/** What blocking or unblocking answers: the member's block now (null once unblocked). */
export const memberBlockResponseSchema = z
  .object({ success: z.literal(true), userKey: z.string(), blocked: memberBlockSchemaOf().nullable() })
  .meta({ id: 'MemberBlockResponse' });
export type MemberBlockResponse = z.infer<typeof memberBlockResponseSchema>;

/** Most pts one manual award may give. */
export const MANUAL_AWARD_MAX = 1_000_000;

/** `POST …/loyalty-members/:userKey/awards`: pts given by hand, always with the reason why. */
export const manualAwardRequestSchema = z
  .strictObject({
    amount: z
      .number({ message: 'must be a number of pts' })
      .int('must be a whole number of pts')
      .min(1, 'must be at least 1 pt')
      .max(MANUAL_AWARD_MAX, `must be at most ${MANUAL_AWARD_MAX} pts`),
    reason: cleanString(
      z
        .string({ message: 'is required: say why the member gets these pts' })
        .min(3, 'is required: say why the member gets these pts (at least 3 characters)')
        .max(500, 'must be at most 500 characters'),
    ),
    idempotencyKey: idempotencyKeySchema.optional().meta({
      description:
        'Idempotency key (1 to 128 printable ASCII characters, e.g. a uuid), one per intended award. A repeat with the same key by the same person for the same member and amount answers the first award (replayed: true) and pays nothing; the key with another member, amount or person is 409.',
    }),
  })
  .meta({ id: 'ManualAwardRequest' });
export type ManualAwardRequest = z.input<typeof manualAwardRequestSchema>;

/**
 * `POST /admin/brands/:brandId/awards` (`pts member award`): the portal's manual award from the admin API, the
 * member named by e-mail, identity key (`discord_123@…`) or platform identity (`discord:123`).
 */
export const adminManualAwardRequestSchema = manualAwardRequestSchema
  .extend({
    member: cleanString(
      z
        .string({ message: 'is required: an e-mail, an identity (discord:123) or an identity key' })
        .min(3, 'must be an e-mail, an identity (discord:123) or an identity key')
        .max(254, 'is too long')
        .transform((value) => value.toLowerCase()),
    ),
  })
  .meta({ id: 'AdminManualAwardRequest' });
export type AdminManualAwardRequest = z.input<typeof adminManualAwardRequestSchema>;

export const manualAwardResponseSchema = z
  .object({
    success: z.literal(true),
    eventId: z.string(),
    rewardAmount: z.number().int(),
    walletAddress: z.string(),
    mintStatus: z.string(),
    /** A repeat of an idempotency key: the first award as it stands; nothing new was paid. */
    replayed: z.literal(true).optional(),
  })
  .meta({ id: 'ManualAwardResponse' });
export type ManualAwardResponse = z.infer<typeof manualAwardResponseSchema>;

/**
 * `POST …/loyalty-members/:userKey/deductions` (and the admin API's `POST /admin/brands/:brandId/deductions`):
 * pts taken back from a member by hand, always with the reason why. Recorded as a reversal of kind `deduction`.
 */
export const memberDeductionRequestSchema = z
  .strictObject({
    amount: z
      .number({ message: 'must be a number of pts' })
      .int('must be a whole number of pts')
      .min(1, 'must be at least 1 pt')
      .max(MANUAL_AWARD_MAX, `must be at most ${MANUAL_AWARD_MAX} pts`),
    reason: cleanString(
      z
        .string({ message: 'is required: say why these pts are taken back' })
        .min(3, 'is required: say why these pts are taken back (at least 3 characters)')
        .max(500, 'must be at most 500 characters'),
    ),
    idempotencyKey: idempotencyKeySchema.optional().meta({
      description:
        'Idempotency key (1 to 128 printable ASCII characters, e.g. a uuid), one per intended deduction. A repeat with the same key for the same member and amount answers the first deduction (replayed: true) and takes nothing more; the key with another member or amount is 409.',
    }),
  })
  .meta({ id: 'MemberDeductionRequest' });
export type MemberDeductionRequest = z.input<typeof memberDeductionRequestSchema>;

export const adminMemberDeductionRequestSchema = memberDeductionRequestSchema
  .extend({
    member: cleanString(
      z
        .string({ message: 'is required: an e-mail, an identity (discord:123) or an identity key' })
        .min(3, 'must be an e-mail, an identity (discord:123) or an identity key')
        .max(254, 'is too long')
        .transform((value) => value.toLowerCase()),
    ),
  })
  .meta({ id: 'AdminMemberDeductionRequest' });
export type AdminMemberDeductionRequest = z.input<typeof adminMemberDeductionRequestSchema>;

export const memberDeductionResponseSchema = z
  .object({
    success: z.literal(true),
    userKey: z.string(),
    deduction: memberReversalSchema,
    /** A repeat of an idempotency key: the first deduction as it stands; nothing more was taken. */
    replayed: z.literal(true).optional(),
  })
  .meta({ id: 'MemberDeductionResponse' });
export type MemberDeductionResponse = z.infer<typeof memberDeductionResponseSchema>;
