import { z } from 'zod';
import { ADDRESS_PATTERN, cleanString, emailSchema, metadataSchema } from './common.ts';

/** Spec 4.8: the eight social-login providers, in the spec's order. */
export const OAUTH_PROVIDERS = [
  'discord',
  'twitter',
  'github',
  'google',
  'telegram',
  'spotify',
  'instagram',
  'tiktok',
] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

export const oauthProviderSchema = cleanString(
  z
    .string()
    .transform((value) => value.toLowerCase())
    .pipe(z.enum(OAUTH_PROVIDERS)),
);

/** Longest `oauth_user_id` accepted for any provider. */
export const OAUTH_USER_ID_MAX = 128;

/** Per-provider `oauth_user_id` formats (spec 4.8 table): pattern, what it means, and a valid example. */
export const OAUTH_USER_ID_FORMATS: Record<OAuthProvider, { pattern: RegExp; description: string; example: string }> = {
  discord: {
    pattern: /^[1-9][0-9]{16,19}$/,
    description: 'a Discord user id (snowflake): a numeric string of 17 to 20 digits',
    example: '123456789012345678',
  },
  twitter: {
    pattern: /^[1-9][0-9]{0,19}$/,
    description: 'a numeric user id string (not the @handle)',
    example: '1234567890123456789',
  },
  github: {
    pattern: /^[1-9][0-9]{0,19}$/,
    description: 'a numeric user id string (not the login name)',
    example: '583231',
  },
  google: {
    pattern: /^[1-9][0-9]{9,63}$/,
    description: 'the long numeric subject (`sub` claim) of the Google ID token, usually 21 digits',
    example: '110169484474386276334',
  },
  telegram: {
    pattern: /^[1-9][0-9]{0,15}$/,
    description: 'a numeric Telegram user id (not the @username)',
    example: '123456789',
  },
  spotify: {
    pattern: /^[A-Za-z0-9]{1,128}$/,
    description: 'an alphanumeric Spotify user id',
    example: 'smedjan',
  },
  instagram: {
    pattern: /^[1-9][0-9]{0,24}$/,
    description: 'a numeric Instagram user id (not the @username)',
    example: '17841405793187218',
  },
  tiktok: {
    pattern: /^[A-Za-z0-9]{1,128}$/,
    description: 'an alphanumeric TikTok user id (open_id)',
    example: '000a1b2c3d4e5f6g7h8i9j',
  },
};

/** True when `userId` has the format the provider uses. */
export function isOAuthUserIdFormat(provider: OAuthProvider, userId: string): boolean {
  return userId.length <= OAUTH_USER_ID_MAX && OAUTH_USER_ID_FORMATS[provider].pattern.test(userId);
}

export const oauthUsernameSchema = cleanString(z.string().max(100, 'must be at most 100 characters'));

/** Spec 2.7 request (the OAuth form). Field by field checks and their error shapes are in the route. */
export const pregenerateUserRequestSchema = z
  .object({
    brand_id: cleanString(z.string().regex(ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters')).transform(
      (value) => value.toLowerCase(),
    ),
    oauth_provider: oauthProviderSchema,
    oauth_user_id: cleanString(z.string().min(1).max(OAUTH_USER_ID_MAX)),
    oauth_username: oauthUsernameSchema.optional(),
    metadata: metadataSchema.optional(),
  })
  .superRefine((value, ctx) => {
    if (!isOAuthUserIdFormat(value.oauth_provider, value.oauth_user_id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['oauth_user_id'],
        message: `must be ${OAUTH_USER_ID_FORMATS[value.oauth_provider].description}`,
      });
    }
  })
  .meta({ id: 'PregenerateUserRequest' });
export type PregenerateUserRequest = z.infer<typeof pregenerateUserRequestSchema>;

/** The form bot clients send: the wallet is the user's email wallet (the one events reward). */
export const pregenerateEmailRequestSchema = z
  .object({
    brand_id: cleanString(z.string().regex(ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters')).transform(
      (value) => value.toLowerCase(),
    ),
    email: emailSchema,
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'PregenerateEmailRequest' });
export type PregenerateEmailRequest = z.infer<typeof pregenerateEmailRequestSchema>;

/** How far the identity was checked: with the provider, only its format, or refused. */
export const IDENTITY_VERIFICATIONS = ['verified', 'format_only', 'rejected'] as const;
export type IdentityVerification = (typeof IDENTITY_VERIFICATIONS)[number];

/** Spec 2.7 response. The email form answers `oauth_provider: 'email'`, `oauth_user_id: <email>` and `email`. */
export const pregenerateUserResponseSchema = z
  .object({
    success: z.literal(true),
    wallet_address: z.string().regex(ADDRESS_PATTERN),
    idp_user_id: z.string(),
    oauth_provider: z.string(),
    oauth_user_id: z.string(),
    created_new: z.boolean(),
    message: z.string(),
    next_steps: z.array(z.string()),
    email: z.string().optional(),
  })
  .meta({ id: 'PregenerateUserResponse' });
export type PregenerateUserResponse = z.infer<typeof pregenerateUserResponseSchema>;

/** Spec 4.8 error bodies (they are not the usual envelope). */
export const pregenerateErrorSchemas = {
  missingFields: z.object({ error: z.string(), required: z.array(z.string()) }),
  invalidProvider: z.object({ error: z.string(), valid_providers: z.array(z.string()) }),
  invalidFormat: z.object({ error: z.string(), details: z.string(), example: z.string() }),
  invalidCredentials: z.object({ error: z.string(), hint: z.string(), provider: z.string() }),
  notFound: z.object({ error: z.string() }),
  rateLimited: z.object({ error: z.string() }),
  internal: z.object({ error: z.string(), details: z.string() }),
} as const;

/** The fields the missing-fields error names (spec 4.8). */
export const PREGENERATE_REQUIRED_FIELDS = ['brand_id', 'oauth_provider', 'oauth_user_id'] as const;
