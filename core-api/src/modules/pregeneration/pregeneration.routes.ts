import {
  errorEnvelopeSchema,
  type IdentityVerification,
  isAppError,
  isOAuthUserIdFormat,
  OAUTH_PROVIDERS,
  OAUTH_USER_ID_FORMATS,
  type OAuthProvider,
  oauthUsernameSchema,
  PREGENERATE_REQUIRED_FIELDS,
  type PregenerateUserResponse,
  pregenerateEmailRequestSchema,
  pregenerateErrorSchemas,
  pregenerateUserRequestSchema,
  pregenerateUserResponseSchema,
  sanitizeJson,
} from '@pts/shared';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { jsonBody } from '../../http/json-body.ts';
import { createRateLimit, type RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import {
  createFormatOnlyVerifier,
  type IdentityVerifier,
  type PregeneratedWallet,
  type PregenerationService,
  toVerificationOutcome,
} from './pregeneration.service.ts';

export interface PregenerationRouterDeps {
  /** The wallets and audit rows (pregeneration.service.ts; compose.ts builds it). */
  pregeneration: PregenerationService;
  logger: Logger;
  /** Real-account check (spec 4.8 rule 1); default: format only, said so in `message`. */
  verifier?: IdentityVerifier;
  /** Per-brand limits (spec 8); default 100 per minute and 10,000 per day, in process. */
  limits?: { perMinute: RateLimit; perDay: RateLimit };
}

/** Spec 8: the event handler's 10 KB body limit applies here too. */
const BODY_LIMIT_BYTES = 10 * 1024;
const BRAND_ID_PATTERN = /^0x[a-fA-F0-9]{40}$/;
const BRAND_ID_EXAMPLE = '0x1234567890abcdef1234567890abcdef12345678';

/** A failure answered with one of the spec 4.8 bodies (not the usual envelope). */
class PregenerationError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown> & { error: string },
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error);
  }
}

const missingFields = (missing: string[], emailForm: boolean) =>
  new PregenerationError(400, {
    error: `Missing required fields: ${missing.join(', ')}${emailForm ? '' : ' (or send brand_id and email)'}`,
    required: [...PREGENERATE_REQUIRED_FIELDS],
  });

const invalidFormat = (error: string, details: string, example: string) =>
  new PregenerationError(400, { error, details, example });

const invalidCredentials = (error: string, hint: string, provider: string) =>
  new PregenerationError(400, { error, hint, provider });

const PROVIDER_LABELS: Record<OAuthProvider, string> = {
  discord: 'Discord',
  twitter: 'Twitter',
  github: 'GitHub',
  google: 'Google',
  telegram: 'Telegram',
  spotify: 'Spotify',
  instagram: 'Instagram',
  tiktok: 'TikTok',
};

const present = (value: unknown) => value !== undefined && value !== null && value !== '';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `POST /pregenerate-user` (spec 4.8), mounted under `/pts-api`. No authentication: server-side use only. */
export function pregenerationRoutes(deps: PregenerationRouterDeps): Route[] {
  const verifier = deps.verifier ?? createFormatOnlyVerifier();
  const limits = deps.limits ?? {
    perMinute: createRateLimit({ name: 'pregeneration brand per minute', points: 100, durationSeconds: 60 }),
    perDay: createRateLimit({ name: 'pregeneration brand per day', points: 10_000, durationSeconds: 86_400 }),
  };

  const consumeLimits = async (res: Response, brandId: string) => {
    try {
      await limits.perMinute.consume(res, brandId);
      await limits.perDay.consume(res, brandId);
    } catch (error) {
      if (!isAppError(error) || error.code !== 'RATE_LIMIT_EXCEEDED') throw error;
      const headers: Record<string, string> =
        error.retryAfter !== undefined ? { 'Retry-After': String(error.retryAfter) } : {};
      throw new PregenerationError(429, { error: error.message }, headers);
    }
  };

  return [
    defineRoute({
      method: 'post',
      path: '/pregenerate-user',
      summary: 'Create or fetch the wallet of a social-login identity (or of an email, `{email, brand_id}`)',
      description:
        'Error bodies follow spec 4.8, not the error envelope: 400 `{error, required}`, `{error, valid_providers}`, `{error, details, example}`, `{error, hint, provider}`; 404 unknown brand; 429 `{error}` (100 per minute, 10,000 per day per brand). A body that is not JSON, or over 10 KB, answers the error envelope. See docs/pregeneration.md.',
      tags: ['pregeneration'],
      // The body is read leniently (any JSON value) and checked field by field, so each answer names the field.
      before: [jsonBody(BODY_LIMIT_BYTES, { strict: false })],
      request: { body: pregenerateUserRequestSchema, bodyReader: 'own', validateBody: false },
      responses: {
        200: {
          description: 'The identity wallet (`created_new` says whether it was made now)',
          schema: pregenerateUserResponseSchema,
        },
        400: {
          description: 'A field missing or malformed, an unknown provider, or an account the provider refused',
          schema: z.union([
            pregenerateErrorSchemas.missingFields,
            pregenerateErrorSchemas.invalidProvider,
            pregenerateErrorSchemas.invalidFormat,
            pregenerateErrorSchemas.invalidCredentials,
            errorEnvelopeSchema,
          ]),
        },
        404: { description: 'Unknown brand', schema: pregenerateErrorSchemas.notFound },
        413: failure('Body over 10 KB'),
        429: {
          description: 'Over the brand limit (Retry-After says when)',
          schema: pregenerateErrorSchemas.rateLimited,
        },
        500: { description: 'Internal error (logged)', schema: pregenerateErrorSchemas.internal },
      },
      handle: ({ req, res }) => answer(req, res),
    }),
  ];

  async function answer(req: Request, res: Response): Promise<undefined> {
    try {
      const body: Record<string, unknown> = isPlainObject(req.body) ? req.body : {};
      const emailForm = !present(body.oauth_provider) && !present(body.oauth_user_id) && present(body.email);
      const required = emailForm ? ['brand_id'] : PREGENERATE_REQUIRED_FIELDS;
      const missing = required.filter((field) => !present(body[field]));
      if (missing.length > 0) throw missingFields(missing, emailForm);

      const brandId = parseBrandId(body.brand_id);
      const metadata = parseMetadata(body.metadata);

      if (emailForm) {
        const parsed = pregenerateEmailRequestSchema.safeParse({ brand_id: brandId, email: body.email });
        if (!parsed.success) {
          throw invalidFormat(
            'Invalid email',
            'email must be a valid email address of at most 254 characters',
            'user@example.com',
          );
        }
        const email = parsed.data.email;
        await requireBrand(deps.pregeneration, brandId);
        await consumeLimits(res, brandId);
        const wallet = await deps.pregeneration.pregenerateEmailUser(email);
        await deps.pregeneration.audit({
          brandId,
          provider: 'email',
          userId: email,
          wallet: wallet.walletAddress,
          createdNew: wallet.createdNew,
          verification: 'email',
          metadata,
        });
        res.json({ ...respond('email', email, wallet, 'email'), email });
        return;
      }

      const provider = parseProvider(body.oauth_provider);
      const userId = parseUserId(provider, body.oauth_user_id);
      const username = parseUsername(body.oauth_username);
      await requireBrand(deps.pregeneration, brandId);
      await consumeLimits(res, brandId);

      const { verification, reason } = toVerificationOutcome(await verifier.verify(provider, userId));
      if (verification === 'rejected') {
        throw invalidCredentials(
          `Invalid ${PROVIDER_LABELS[provider]} credentials: ${reason ?? 'the account was rejected'}`,
          `Send the id of a real ${PROVIDER_LABELS[provider]} account (${OAUTH_USER_ID_FORMATS[provider].description}); test, placeholder and fake accounts are refused`,
          provider,
        );
      }
      const wallet = await deps.pregeneration.pregenerateIdentity({ brandId, provider, subject: userId, username });
      await deps.pregeneration.audit({
        brandId,
        provider,
        userId,
        wallet: wallet.walletAddress,
        createdNew: wallet.createdNew,
        verification,
        metadata,
      });
      res.json(respond(provider, userId, wallet, verification, reason));
    } catch (error) {
      if (error instanceof PregenerationError) {
        for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
        res.status(error.status).json(error.body);
        return;
      }
      deps.logger.error({ err: error, path: req.path }, 'pregeneration failed');
      res.status(500).json({
        error: 'Failed to pregenerate wallet',
        details: 'Internal error; it has been logged. Retry later: the same identity always gets the same wallet.',
      });
    }
  }
}

async function requireBrand(pregeneration: PregenerationService, brandId: string): Promise<void> {
  if (!(await pregeneration.brandExists(brandId))) {
    throw new PregenerationError(404, { error: `Brand not found: ${brandId} is not registered; check brand_id` });
  }
}

function parseBrandId(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (!BRAND_ID_PATTERN.test(text)) {
    throw invalidFormat(
      'Invalid brand_id',
      'brand_id must be the brand wallet address: 0x followed by 40 hex characters',
      BRAND_ID_EXAMPLE,
    );
  }
  return text.toLowerCase();
}

function parseProvider(value: unknown): OAuthProvider {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  const provider = OAUTH_PROVIDERS.find((name) => name === text);
  if (!provider) {
    throw new PregenerationError(400, {
      error: `Invalid oauth_provider${typeof value === 'string' ? `: ${value.slice(0, 50)}` : ''}`,
      valid_providers: [...OAUTH_PROVIDERS],
    });
  }
  return provider;
}

function parseUserId(provider: OAuthProvider, value: unknown): string {
  const format = OAUTH_USER_ID_FORMATS[provider];
  const label = PROVIDER_LABELS[provider];
  const text = typeof value === 'string' ? value.trim() : undefined;
  if (text !== undefined && isOAuthUserIdFormat(provider, text)) return text;
  const why =
    text === undefined
      ? 'oauth_user_id must be a string (JSON numbers lose precision beyond 2^53)'
      : `oauth_user_id must be ${format.description}`;
  if (provider === 'discord') throw invalidFormat(`Invalid ${label} user ID format`, why, format.example);
  throw invalidCredentials(`Invalid ${label} user ID format`, `${why}, for example ${format.example}`, provider);
}

function parseUsername(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parsed = oauthUsernameSchema.safeParse(value);
  if (!parsed.success || typeof parsed.data !== 'string') {
    throw invalidFormat('Invalid oauth_username', 'oauth_username must be a string of at most 100 characters', 'jane');
  }
  return parsed.data || undefined;
}

function parseMetadata(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) {
    throw invalidFormat('Invalid metadata', 'metadata must be a JSON object', '{"source":"discord_bot"}');
  }
  return sanitizeJson(value) as Record<string, unknown>;
}

function respond(
  provider: string,
  userId: string,
  wallet: PregeneratedWallet,
  verification: IdentityVerification | 'email',
  reason?: string,
): PregenerateUserResponse {
  const label = provider === 'email' ? 'email' : PROVIDER_LABELS[provider as OAuthProvider];
  const what = provider === 'email' ? `user ${userId}` : `${label} user ${userId}`;
  const head = wallet.createdNew ? `Wallet created for ${what}.` : `Existing wallet returned for ${what}.`;
  const check =
    verification === 'verified'
      ? ` The account was verified with ${label}.`
      : verification === 'format_only'
        ? ` Only the user ID format was checked; the account was not verified with ${label}${reason ? `: ${reason}` : ''}.`
        : ' This is the wallet that events for this email are rewarded to.';
  return {
    success: true,
    wallet_address: wallet.walletAddress,
    idp_user_id: wallet.idpUserId,
    oauth_provider: provider,
    oauth_user_id: userId,
    created_new: wallet.createdNew,
    message: head + check,
    next_steps: [
      `Store wallet_address with this ${provider === 'email' ? 'user' : `${label} account`}: the same ${provider === 'email' ? 'email' : 'provider and user ID'} always returns this wallet.`,
      'Reward the user through events; rewards are minted to wallet_address.',
      provider === 'email'
        ? 'The user claims the wallet by signing in with this email.'
        : `The user claims the wallet by signing in with ${label}.`,
    ],
  };
}
