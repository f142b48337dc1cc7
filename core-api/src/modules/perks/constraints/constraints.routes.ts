import {
  AppError,
  addConstraintRequestSchema,
  checkEligibilityRequestSchema,
  checkEligibilityResponseSchema,
  constraintParamsSchema,
  invalidateExternalApiRequestSchema,
  invalidateExternalApiResponseSchema,
  perkConstraintResponseSchema,
  perkConstraintsResponseSchema,
  perkIdParamsSchema,
  reportChatRolesRequestSchema,
  reportChatRolesResponseSchema,
} from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../../http/brand-signature.ts';
import type { RateLimit } from '../../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../../http/route-table.ts';
import { parseInput } from '../../../http/validate.ts';
import { perkNotFound } from '../perks.service.ts';
import type { ConstraintChecker } from './constraint-checker.ts';
import type { ConstraintService } from './constraints.service.ts';

const UPDATER_BODY_LIMIT_BYTES = 16 * 1024;

const SERVICES_BODY_LIMIT_BYTES = 16 * 1024;

/** What the perk-eligibility and chat-role routes use. */
export interface EligibilityRouterDeps {
  /** Where reported chat roles are stored. */
  constraints: ConstraintService;
  /** Evaluates a perk's constraints; absent where constraint checks are not configured. */
  checker: ConstraintChecker | undefined;
  verifyBrandSignature: BrandSignatureVerifier;
  /** Unsigned eligibility checks are limited per IP (the event host's limit). */
  ipLimit: RateLimit;
}

const adminOnly: ['adminToken'] = ['adminToken'];

/**
 * Under `/services`: `POST /perks/check-eligibility` (public, per-IP limited) and `POST /chat-roles`
 * (brand-signed: a bot reports a member's roles for `chat_role` constraints). Both read JSON whatever the
 * declared content type and validate after their limit or signature check.
 */
export function eligibilityRoutes(deps: EligibilityRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/perks/check-eligibility',
      summary: "Evaluate a perk's constraints for a wallet",
      tags: ['constraints'],
      request: {
        body: checkEligibilityRequestSchema,
        bodyLimitBytes: SERVICES_BODY_LIMIT_BYTES,
        bodyReader: 'json-any-type',
        validateBody: false,
      },
      responses: {
        200: { description: 'Per-constraint verdicts', schema: checkEligibilityResponseSchema },
        400: failure('Validation failed'),
        404: failure("Unknown perk, or the perk is not the brand's"),
        429: failure('Rate limit'),
      },
      handle: async ({ req, res }) => {
        await deps.ipLimit.consume(res, req.ip ?? 'unknown');
        const input = parseInput(checkEligibilityRequestSchema, req.body);
        if (!deps.checker) throw new AppError('SERVICE_UNAVAILABLE', 'Constraint checks are not configured here');
        const perkId = BigInt(input.perkId);
        const verdict = await deps.checker.check({ collectionId: perkId, userAddress: input.userAddress });
        // A perk of another brand is reported as unknown to this brand.
        if (verdict.brandId !== input.brandId) throw perkNotFound(perkId);
        return {
          success: true,
          brandId: input.brandId,
          perkId: Number(perkId),
          userAddress: input.userAddress,
          eligible: verdict.eligible,
          results: verdict.results,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/chat-roles',
      summary: "A bot reports a chat member's current roles (brand-signed)",
      tags: ['constraints'],
      security: ['brandSignature'],
      request: {
        body: reportChatRolesRequestSchema,
        bodyLimitBytes: SERVICES_BODY_LIMIT_BYTES,
        bodyReader: 'json-any-type',
        validateBody: false,
      },
      responses: {
        200: { description: 'Stored', schema: reportChatRolesResponseSchema },
        400: failure('Validation failed'),
        401: failure('Missing or bad brand signature'),
      },
      handle: async ({ req }) => {
        const brandId = typeof req.body?.brandId === 'string' ? req.body.brandId.trim().toLowerCase() : '';
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Reporting chat roles');
        const input = parseInput(reportChatRolesRequestSchema, req.body);
        const saved = await deps.constraints.saveChatRoles({
          brandId: input.brandId,
          platform: input.platform,
          guildId: input.guildId,
          userId: input.userId,
          roles: input.roles,
        });
        return { success: true, refreshedAt: saved.refreshedAt.toISOString(), roles: saved.roles };
      },
    }),
  ];
}

/**
 * `/admin/perks/:id/constraints` (admin bearer token; the admin router reads the body): add, list, remove a
 * perk's constraints.
 */
export function constraintAdminRoutes(deps: { constraints: ConstraintService; adminToken: string }): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  const unauthorized = failure('Missing or wrong admin token');
  return [
    defineRoute({
      method: 'post',
      path: '/perks/:id/constraints',
      summary: 'Add an eligibility constraint to a perk (external_api, min_balance, chat_role)',
      tags: ['constraints'],
      security: adminOnly,
      before,
      request: { params: perkIdParamsSchema, body: addConstraintRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Added', schema: perkConstraintResponseSchema },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown perk'),
      },
      handle: async ({ params: { id }, body, res }) => {
        const constraint = await deps.constraints.add(BigInt(id), body);
        res.status(201);
        return { success: true, constraint };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/perks/:id/constraints',
      summary: "A perk's constraints",
      tags: ['constraints'],
      security: adminOnly,
      before,
      request: { params: perkIdParamsSchema },
      responses: {
        200: { description: 'Constraints, oldest first', schema: perkConstraintsResponseSchema },
        401: unauthorized,
        404: failure('Unknown perk'),
      },
      handle: async ({ params: { id } }) => ({ success: true, constraints: await deps.constraints.list(BigInt(id)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/perks/:id/constraints/:constraintId',
      summary: 'Remove a constraint (and its cached answers)',
      tags: ['constraints'],
      security: adminOnly,
      before,
      request: { params: constraintParamsSchema },
      responses: {
        200: { description: 'Removed', schema: z.object({ success: z.literal(true) }) },
        401: unauthorized,
        404: failure('Unknown perk or constraint'),
      },
      handle: async ({ params: { id, constraintId } }) => {
        await deps.constraints.remove(BigInt(id), constraintId);
        return { success: true };
      },
    }),
  ];
}

/**
 * The constraint-updater role (spec 4.11): `POST /invalidate-external-api`, mounted at `/constraint-updater`.
 * `Authorization: Bearer <brand API key>` is required; only the calling brand's cached answers are dropped.
 */
export function constraintUpdaterRoutes(deps: { constraints: ConstraintService }): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/invalidate-external-api',
      summary: 'Drop cached external-API constraint answers (spec 4.11)',
      description:
        "Requires `Authorization: Bearer <brand API key>` (the `pts_ak_…` key shown once at brand creation). Only the calling brand's constraints are touched. `api_url` is matched exactly after normalization " +
        '(lowercase scheme/host, default port dropped). `user_address` and `collection_id` narrow the scope.',
      tags: ['constraints'],
      // The API key is checked before the body is validated.
      request: {
        body: invalidateExternalApiRequestSchema,
        bodyLimitBytes: UPDATER_BODY_LIMIT_BYTES,
        bodyReader: 'json-any-type',
        validateBody: false,
        headers: z.object({ authorization: z.string().describe('Bearer <brand API key>') }),
      },
      responses: {
        200: { description: 'Invalidated', schema: invalidateExternalApiResponseSchema },
        400: failure('api_url missing or a field malformed'),
        401: failure('Missing or unknown brand API key'),
      },
      handle: async ({ req }) => {
        const header = req.get('authorization');
        const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
        if (!match?.[1]) {
          throw new AppError(
            'UNAUTHORIZED',
            "Missing API key: send `Authorization: Bearer <API key>` with the brand's API key (shown once by `pts brand create`)",
          );
        }
        const brandId = await deps.constraints.brandForApiKey(match[1]);
        if (!brandId) throw new AppError('UNAUTHORIZED', 'API key not recognised: use the API key of your brand');
        const body = (req.body ?? {}) as Record<string, unknown>;
        if (body.api_url === undefined || body.api_url === null || body.api_url === '') {
          throw new AppError('VALIDATION_ERROR', 'api_url is required', {
            field: 'api_url',
            errors: ['api_url: required (the external API URL whose cached answers to drop)'],
          });
        }
        const input = parseInput(invalidateExternalApiRequestSchema, body);
        const count = await deps.constraints.invalidateExternalApi({
          brandId,
          apiUrl: input.api_url,
          userAddress: input.user_address,
          collectionId: input.collection_id,
        });
        const scope = [
          input.user_address ? `user ${input.user_address}` : undefined,
          input.collection_id !== undefined ? `collection ${input.collection_id}` : undefined,
        ].filter(Boolean);
        return {
          success: true,
          invalidated_count: count,
          message: `Invalidated ${count} cached answer${count === 1 ? '' : 's'} of ${input.api_url}${scope.length ? ` for ${scope.join(', ')}` : ''}`,
        };
      },
    }),
  ];
}
