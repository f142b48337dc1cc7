import {
  brandIdParamsSchema,
  claimDropRequestSchema,
  claimDropResponseSchema,
  createDropRequestSchema,
  createDropResponseSchema,
  dropParamsSchema,
  dropsResponseSchema,
  updateDropRequestSchema,
} from '@pts/shared';
import type { Request, Response } from 'express';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { DropService } from './drops.service.ts';

export interface DropsRouterDeps {
  drops: DropService;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit?: RateLimit | undefined;
}

const BODY_LIMIT_BYTES = 8 * 1024;

const badSignature = failure('Missing, wrong or replayed brand signature');

/** `POST /drops/create` and `POST /drops/claim` under `/services`, both brand-signed (docs/compatibility.md). */
export function dropRoutes(deps: DropsRouterDeps): Route[] {
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };
  return [
    defineRoute({
      method: 'post',
      path: '/drops/create',
      tags: ['engagement'],
      summary: 'Create a drop: a time-boxed claimable amount with a supply and a per-user limit',
      description: 'Also creates the brand’s `drop_claim` rule (reward 0, no cooldown, unlimited) when it has none.',
      security: ['brandSignature'],
      request: { body: createDropRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        201: { description: 'Created', schema: createDropResponseSchema },
        400: failure('Invalid body or window'),
        401: badSignature,
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Creating a drop');
        const drop = await deps.drops.create(body);
        res.status(201);
        return { success: true, drop };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/drops/claim',
      tags: ['engagement'],
      summary: 'Claim a drop: once per user (or its per-user limit), within supply, minted through the event path',
      security: ['brandSignature'],
      request: { body: claimDropRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Claimed', schema: claimDropResponseSchema },
        400: failure('`CLAIM_FAILED` with details.reason not_started, ended or already_claimed'),
        401: badSignature,
        404: failure('Unknown drop'),
        409: failure('`SOLD_OUT`'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Claiming a drop');
        return deps.drops.claim(body);
      },
    }),
  ];
}

/**
 * Drop administration under `/admin` (admin token; `pts drop list|update|end`): the same list, change and end
 * as the portal's Program page, audited as `admin`.
 */
export function dropAdminRoutes(deps: { drops: DropService; adminToken: string }): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  const unauthorized = failure('Missing or wrong admin token');
  const adminOnly: ['adminToken'] = ['adminToken'];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/drops',
      summary: "A brand's drops, newest first, with what is claimed and left",
      tags: ['engagement'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Drops', schema: dropsResponseSchema },
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => {
        return { success: true, drops: await deps.drops.list(brandId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/drops/:dropId',
      summary: 'Change a drop where it is safe (docs/portal.md, "Changing a drop")',
      tags: ['engagement'],
      security: adminOnly,
      before,
      request: { params: dropParamsSchema, body: updateDropRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Changed', schema: createDropResponseSchema },
        400: failure('Invalid body'),
        401: unauthorized,
        404: failure('Unknown brand or drop'),
        409: failure('The change is not safe any more (ended, claimed, opened)'),
      },
      handle: async ({ params: { brandId, dropId }, body }) => ({
        success: true,
        drop: await deps.drops.update(brandId, dropId, body),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/drops/:dropId/end',
      summary: 'End a drop now: claims from now on are refused',
      tags: ['engagement'],
      security: adminOnly,
      before,
      request: { params: dropParamsSchema },
      responses: {
        200: { description: 'Ended', schema: createDropResponseSchema },
        401: unauthorized,
        404: failure('Unknown brand or drop'),
        409: failure('The drop already ended'),
      },
      handle: async ({ params: { brandId, dropId } }) => ({
        success: true,
        drop: await deps.drops.end(brandId, dropId),
      }),
    }),
  ];
}
