import { z } from 'zod';
import { brandIdSchema, cleanString, emailSchema } from './common.ts';
import { userIdentifierSchema } from './streaks.ts';

/** How an identity was linked to its account: a link code confirmed on a second platform, or a proven email. */
export const ACCOUNT_LINK_METHODS = ['code', 'email'] as const;
export type AccountLinkMethod = (typeof ACCOUNT_LINK_METHODS)[number];

/** Alphabet of link codes: no 0/O, 1/I/L, so a code read aloud or typed on a phone survives. */
export const LINK_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const LINK_CODE_LENGTH = 8;

/** A link code as typed by a user: case, spaces and dashes are forgiven. */
export const linkCodeSchema = cleanString(
  z
    .string()
    .max(32, 'must be at most 32 characters')
    .transform((value) => value.replace(/[\s-]/g, '').toUpperCase())
    .pipe(
      z
        .string()
        .length(LINK_CODE_LENGTH, `must be the ${LINK_CODE_LENGTH}-character code the bot gave you`)
        .regex(/^[A-Z0-9]+$/, 'must contain only letters and digits'),
    ),
);

/** `POST /services/link/code`: issue a code for the identity that asks to link (brand-signed). */
export const issueLinkCodeRequestSchema = z
  .object({ brandId: brandIdSchema, userIdentifier: userIdentifierSchema })
  .meta({ id: 'IssueLinkCodeRequest' });
export type IssueLinkCodeRequest = z.infer<typeof issueLinkCodeRequestSchema>;

export const issueLinkCodeResponseSchema = z
  .object({
    success: z.literal(true),
    code: z.string(),
    expiresAt: z.string().meta({ description: 'ISO time; the code works once, until then' }),
    accountKey: z.string().meta({ description: 'The account the confirming identity will join' }),
  })
  .meta({ id: 'IssueLinkCodeResponse' });
export type IssueLinkCodeResponse = z.infer<typeof issueLinkCodeResponseSchema>;

/** `POST /services/link/confirm`: the identity on the second platform types the code (brand-signed). */
export const confirmLinkCodeRequestSchema = z
  .object({ brandId: brandIdSchema, userIdentifier: userIdentifierSchema, code: linkCodeSchema })
  .meta({ id: 'ConfirmLinkCodeRequest' });
export type ConfirmLinkCodeRequest = z.infer<typeof confirmLinkCodeRequestSchema>;

/**
 * `POST /services/link/revoke`: a bot saw the code where others could read it (typed in a group chat) and
 * voids it (brand-signed). `revoked` is false when the code was unknown, used or revoked already.
 */
export const revokeLinkCodeRequestSchema = z
  .object({ brandId: brandIdSchema, code: linkCodeSchema })
  .meta({ id: 'RevokeLinkCodeRequest' });
export type RevokeLinkCodeRequest = z.infer<typeof revokeLinkCodeRequestSchema>;

export const revokeLinkCodeResponseSchema = z
  .object({ success: z.literal(true), revoked: z.boolean() })
  .meta({ id: 'RevokeLinkCodeResponse' });
export type RevokeLinkCodeResponse = z.infer<typeof revokeLinkCodeResponseSchema>;

/** `POST /services/link/email`: the plugin proved the user owns `email` (brand-signed: the brand vouches). */
export const linkEmailRequestSchema = z
  .object({ brandId: brandIdSchema, userIdentifier: userIdentifierSchema, email: emailSchema })
  .meta({ id: 'LinkEmailRequest' });
export type LinkEmailRequest = z.infer<typeof linkEmailRequestSchema>;

export const linkedIdentitySchema = z
  .object({
    identityKey: z.string(),
    platform: z.string().meta({ description: '`discord`, `telegram`, … or `email`' }),
    primary: z.boolean().meta({ description: 'True for the account key itself' }),
    method: z.enum(ACCOUNT_LINK_METHODS).nullable(),
    linkedAt: z.string().nullable(),
  })
  .meta({ id: 'LinkedIdentity' });
export type LinkedIdentity = z.infer<typeof linkedIdentitySchema>;

export const linkResultSchema = z
  .object({
    success: z.literal(true),
    accountKey: z.string(),
    userIdentifier: z.string(),
    alreadyLinked: z.boolean().meta({ description: 'The identity already belonged to this account' }),
    walletAddress: z.string().meta({ description: "The account's wallet; rewards to any linked identity go here" }),
    previousWalletAddress: z
      .string()
      .nullable()
      .meta({ description: 'The wallet the identity had before, if any; its tokens stay there' }),
    previousWalletBalance: z
      .number()
      .nullable()
      .meta({ description: 'Token balance left on the previous wallet (null when none or not readable)' }),
    identities: z.array(linkedIdentitySchema),
  })
  .meta({ id: 'AccountLinkResult' });
export type LinkResult = z.infer<typeof linkResultSchema>;

/** `GET /services/link/:brandId/:userIdentifier` (brand-signed). */
export const accountParamsSchema = z.object({ brandId: brandIdSchema, userIdentifier: userIdentifierSchema });

export const accountResponseSchema = z
  .object({
    success: z.literal(true),
    userIdentifier: z.string(),
    accountKey: z.string(),
    walletAddress: z.string().nullable(),
    identities: z.array(linkedIdentitySchema),
  })
  .meta({ id: 'AccountResponse' });
export type AccountResponse = z.infer<typeof accountResponseSchema>;

/**
 * `POST /services/link/unlink` (brand-signed): `userIdentifier` asks to take `identityKey` (default: itself)
 * out of its account. The account's primary identity holds the wallet and cannot leave it.
 */
export const unlinkIdentityRequestSchema = z
  .object({
    brandId: brandIdSchema,
    userIdentifier: userIdentifierSchema,
    identityKey: userIdentifierSchema
      .optional()
      .meta({ description: 'The identity to take out; another identity of the same account, or the caller (default)' }),
  })
  .meta({ id: 'UnlinkIdentityRequest' });
export type UnlinkIdentityRequest = z.infer<typeof unlinkIdentityRequestSchema>;

export const unlinkResultSchema = z
  .object({
    success: z.literal(true),
    accountKey: z.string().meta({ description: 'The account the identity left (it keeps its wallet and balance)' }),
    unlinked: z.string().meta({ description: 'The identity taken out: from now on an account of its own' }),
    walletAddress: z.string().meta({
      description: 'The wallet of the unlinked identity from now on (its own; empty of the account’s tokens)',
    }),
    identities: z.array(linkedIdentitySchema).meta({ description: 'The identities left in the account' }),
  })
  .meta({ id: 'UnlinkResult' });
export type UnlinkResult = z.infer<typeof unlinkResultSchema>;
