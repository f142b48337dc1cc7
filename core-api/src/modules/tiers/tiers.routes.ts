import {
  brandIdParamsSchema,
  memberTierResponseSchema,
  setTiersRequestSchema,
  tierParamsSchema,
  tiersResponseSchema,
} from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { TierService } from './tiers.service.ts';

/** `GET|PUT /brands/:brandId/tiers` (mounted at `/admin`; admin token): the brand's VIP tier table (docs/tiers.md). */
export function tierAdminRoutes(deps: { tiers: Pick<TierService, 'table' | 'setTable'>; adminToken: string }): Route[] {
  const admin = requireAdminToken(deps.adminToken);
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/tiers',
      tags: ['engagement'],
      summary: "The brand's VIP tier table (`tiers: null` while it has none)",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'The table', schema: tiersResponseSchema },
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => deps.tiers.table(brandId),
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/tiers',
      tags: ['engagement'],
      summary: "Replace the brand's VIP tier table (2–6 tiers by pts earned or value spent over a period), audited",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema, body: setTiersRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'The table now in force', schema: tiersResponseSchema },
        400: failure('Invalid table: what to fix is in the message'),
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => deps.tiers.setTable(brandId, body, 'admin'),
    }),
  ];
}

/** `GET /tier/:brandId/:userIdentifier` (mounted under `/services`; brand-signed): a member's tier and progress. */
export function tierRoutes(deps: {
  tiers: Pick<TierService, 'member'>;
  verifyBrandSignature: BrandSignatureVerifier;
}): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/tier/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A member's VIP tier, the next tier and what is left to reach it",
      security: ['brandSignature'],
      request: { params: tierParamsSchema },
      responses: {
        200: { description: 'The member’s standing', schema: memberTierResponseSchema },
        401: failure('Unsigned or badly signed'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId, userIdentifier }, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Tiers');
        res.setHeader('Cache-Control', 'no-store');
        return deps.tiers.member(brandId, userIdentifier);
      },
    }),
  ];
}
