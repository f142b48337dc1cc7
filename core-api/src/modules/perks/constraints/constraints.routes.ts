import type { Clock } from '@pts/shared';
import {
  AppError,
  addConstraintRequestSchema,
  checkEligibilityRequestSchema,
  checkEligibilityResponseSchema,
  constraintParamsSchema,
  errorEnvelopeSchema,
  invalidateExternalApiRequestSchema,
  invalidateExternalApiResponseSchema,
  perkConstraintResponseSchema,
  perkConstraintsResponseSchema,
  perkIdParamsSchema,
  reportChatRolesRequestSchema,
  reportChatRolesResponseSchema,
} from '@pts/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { Database } from '../../../db/database.ts';
import { requireAdminToken } from '../../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../../http/brand-signature.ts';
import { jsonBody } from '../../../http/json-body.ts';
import type { RateLimit } from '../../../http/rate-limit.ts';
import { parseInput } from '../../../http/validate.ts';
import type { ApiDocs } from '../../../observability/openapi.ts';
import { perkNotFound } from '../perks.service.ts';
import { saveChatRoles } from './chat-roles.ts';
import type { ConstraintChecker } from './constraint-checker.ts';
import {
  addConstraint,
  brandForApiKey,
  type ConstraintServiceDeps,
  invalidateExternalApi,
  listConstraints,
  removeConstraint,
} from './constraints.service.ts';

const UPDATER_BODY_LIMIT_BYTES = 16 * 1024;

const SERVICES_BODY_LIMIT_BYTES = 16 * 1024;

/** What the perk-eligibility and chat-role routes use. */
export interface EligibilityRouterDeps {
  db: Database;
  clock: Clock;
  constraints: ConstraintChecker | undefined;
  verifyBrandSignature: BrandSignatureVerifier;
  /** Unsigned eligibility checks are limited per IP (the event host's limit). */
  ipLimit: RateLimit;
}

/**
 * Under `/services`: `POST /perks/check-eligibility` (public, per-IP limited) and `POST /chat-roles`
 * (brand-signed: a bot reports a member's roles for `chat_role` constraints).
 */
export function createEligibilityRouter(deps: EligibilityRouterDeps): Router {
  const router = Router();
  router.post('/perks/check-eligibility', jsonBody(SERVICES_BODY_LIMIT_BYTES), async (req, res) => {
    await deps.ipLimit.consume(res, req.ip ?? 'unknown');
    const input = parseInput(checkEligibilityRequestSchema, req.body);
    if (!deps.constraints) throw new AppError('SERVICE_UNAVAILABLE', 'Constraint checks are not configured here');
    const perkId = BigInt(input.perkId);
    const verdict = await deps.constraints.check({ collectionId: perkId, userAddress: input.userAddress });
    // A perk of another brand is reported as unknown to this brand.
    if (verdict.brandId !== input.brandId) throw perkNotFound(perkId);
    res.json({
      success: true,
      brandId: input.brandId,
      perkId: Number(perkId),
      userAddress: input.userAddress,
      eligible: verdict.eligible,
      results: verdict.results,
    });
  });

  router.post('/chat-roles', jsonBody(SERVICES_BODY_LIMIT_BYTES), async (req, res) => {
    const brandId = typeof req.body?.brandId === 'string' ? req.body.brandId.trim().toLowerCase() : '';
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Reporting chat roles');
    const input = parseInput(reportChatRolesRequestSchema, req.body);
    const saved = await saveChatRoles(deps, {
      brandId: input.brandId,
      platform: input.platform,
      guildId: input.guildId,
      userId: input.userId,
      roles: input.roles,
    });
    res.json({ success: true, refreshedAt: saved.refreshedAt.toISOString(), roles: saved.roles });
  });
  return router;
}

/** `/admin/perks/:id/constraints` (admin bearer token): add, list, remove a perk's constraints. */
export function createConstraintsAdminRouter(deps: ConstraintServiceDeps & { adminToken: string }): Router {
  const router = Router();
  const auth = requireAdminToken(deps.adminToken);

  router.post('/perks/:id/constraints', auth, async (req, res) => {
    const { id } = parseInput(perkIdParamsSchema, req.params, 'path');
    const input = parseInput(addConstraintRequestSchema, req.body);
    res.status(201).json({ success: true, constraint: await addConstraint(deps, BigInt(id), input) });
  });

  router.get('/perks/:id/constraints', auth, async (req, res) => {
    const { id } = parseInput(perkIdParamsSchema, req.params, 'path');
    res.json({ success: true, constraints: await listConstraints(deps, BigInt(id)) });
  });

  router.delete('/perks/:id/constraints/:constraintId', auth, async (req, res) => {
    const { id, constraintId } = parseInput(constraintParamsSchema, req.params, 'path');
    await removeConstraint(deps, BigInt(id), constraintId);
    res.json({ success: true });
  });

  return router;
}

/**
 * The constraint-updater role (spec 4.11): `POST /invalidate-external-api`, mounted at `/constraint-updater`.
 * `Authorization: Bearer <brand API key>` is required; only the calling brand's cached answers are dropped.
 */
export function createConstraintUpdaterRouter(deps: Pick<ConstraintServiceDeps, 'db'>): Router {
  const router = Router();
  router.post('/invalidate-external-api', jsonBody(UPDATER_BODY_LIMIT_BYTES), async (req, res) => {
    const header = req.get('authorization');
    const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    if (!match?.[1]) {
      throw new AppError(
        'UNAUTHORIZED',
        "Missing API key: send `Authorization: Bearer <API key>` with the brand's API key (shown once by `pts brand create`)",
      );
    }
    const brandId = await brandForApiKey(deps.db, match[1]);
    if (!brandId) throw new AppError('UNAUTHORIZED', 'API key not recognised: use the API key of your brand');
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.api_url === undefined || body.api_url === null || body.api_url === '') {
      throw new AppError('VALIDATION_ERROR', 'api_url is required', {
        field: 'api_url',
        errors: ['api_url: required (the external API URL whose cached answers to drop)'],
      });
    }
    const input = parseInput(invalidateExternalApiRequestSchema, body);
    const count = await invalidateExternalApi(deps.db, {
      brandId,
      apiUrl: input.api_url,
      userAddress: input.user_address,
      collectionId: input.collection_id,
    });
    const scope = [
      input.user_address ? `user ${input.user_address}` : undefined,
      input.collection_id !== undefined ? `collection ${input.collection_id}` : undefined,
    ].filter(Boolean);
    res.json({
      success: true,
      invalidated_count: count,
      message: `Invalidated ${count} cached answer${count === 1 ? '' : 's'} of ${input.api_url}${scope.length ? ` for ${scope.join(', ')}` : ''}`,
    });
  });
  return router;
}

const error = (description: string) => ({ description, schema: errorEnvelopeSchema });

/** OpenAPI entries of the constraint routes. */
export function registerConstraintDocs(
  docs: ApiDocs,
  prefixes = { admin: '/admin', services: '/services', updater: '/constraint-updater' },
): void {
  docs.register({
    method: 'post',
    path: `${prefixes.admin}/perks/:id/constraints`,
    summary: 'Add an eligibility constraint to a perk (external_api, min_balance, chat_role)',
    tags: ['constraints'],
    request: { params: perkIdParamsSchema, body: addConstraintRequestSchema },
    responses: {
      201: { description: 'Added', schema: perkConstraintResponseSchema },
      400: error('Validation failed'),
      401: error('Missing or wrong admin token'),
      404: error('Unknown perk'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: `${prefixes.admin}/perks/:id/constraints`,
    summary: "A perk's constraints",
    tags: ['constraints'],
    request: { params: perkIdParamsSchema },
    responses: {
      200: { description: 'Constraints, oldest first', schema: perkConstraintsResponseSchema },
      404: error('Unknown perk'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'delete',
    path: `${prefixes.admin}/perks/:id/constraints/:constraintId`,
    summary: 'Remove a constraint (and its cached answers)',
    tags: ['constraints'],
    request: { params: constraintParamsSchema },
    responses: {
      200: { description: 'Removed', schema: z.object({ success: z.literal(true) }) },
      404: error('Unknown perk or constraint'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'post',
    path: `${prefixes.updater}/invalidate-external-api`,
    summary: 'Drop cached external-API constraint answers (spec 4.11)',
    description:
      "Requires `Authorization: Bearer <brand API key>` (the `pts_ak_…` key shown once at brand creation). Only the calling brand's constraints are touched. `api_url` is matched exactly after normalization " +
      '(lowercase scheme/host, default port dropped). `user_address` and `collection_id` narrow the scope.',
    tags: ['constraints'],
    request: {
      body: invalidateExternalApiRequestSchema,
      headers: z.object({ authorization: z.string().describe('Bearer <brand API key>') }),
    },
    responses: {
      200: { description: 'Invalidated', schema: invalidateExternalApiResponseSchema },
      400: error('api_url missing or a field malformed'),
      401: error('Missing or unknown brand API key'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefixes.services}/perks/check-eligibility`,
    summary: "Evaluate a perk's constraints for a wallet",
    tags: ['constraints'],
    request: { body: checkEligibilityRequestSchema },
    responses: {
      200: { description: 'Per-constraint verdicts', schema: checkEligibilityResponseSchema },
      400: error('Validation failed'),
      404: error("Unknown perk, or the perk is not the brand's"),
      429: error('Rate limit'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefixes.services}/chat-roles`,
    summary: "A bot reports a chat member's current roles (brand-signed)",
    tags: ['constraints'],
    request: { body: reportChatRolesRequestSchema },
    responses: {
      200: { description: 'Stored', schema: reportChatRolesResponseSchema },
      400: error('Validation failed'),
      401: error('Missing or bad brand signature'),
    },
    security: ['brandSignature'],
  });
}
