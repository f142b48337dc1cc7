import { z } from 'zod';
import { addressSchema, emailSchema } from './common.ts';

/** `POST /admin/users/token` body. */
export const issueUserTokenRequestSchema = z.object({ email: emailSchema });
export type IssueUserTokenRequest = z.input<typeof issueUserTokenRequestSchema>;

/** `POST /admin/users/token` answer: an ES256 access token for the user and the user's wallet. */
export const issuedUserTokenSchema = z.object({
  token: z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'must be a compact JWS'),
  walletAddress: addressSchema,
  expiresAt: z.iso.datetime(),
});
export type IssuedUserToken = z.output<typeof issuedUserTokenSchema>;

export const issueUserTokenResponseSchema = issuedUserTokenSchema.extend({ success: z.literal(true) });
