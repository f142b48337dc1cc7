import {
  brandIdParamsSchema,
  referralCodeParamsSchema,
  referralCodeResponseSchema,
  referralProgramResponseSchema,
  referralStatsResponseSchema,
  setReferralProgramRequestSchema,
} from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ReferralService } from './referrals.service.ts';

/** `GET|PUT /brands/:brandId/referrals` and `GET …/referrals/stats` (mounted at `/admin`; admin token). */
export function referralAdminRoutes(deps: {
  referrals: Pick<ReferralService, 'program' | 'setProgram' | 'stats'>;
  adminToken: string;
}): Route[] {
  const admin = requireAdminToken(deps.adminToken);
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/referrals',
      tags: ['engagement'],
      summary: "The brand's referral program (`program: null` while it has none)",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'The program', schema: referralProgramResponseSchema },
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => deps.referrals.program(brandId),
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/referrals',
      tags: ['engagement'],
      summary:
        "Replace the brand's referral program: the qualifying event (and its minimum value), both rewards, the referrer's cap per period; audited",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema, body: setReferralProgramRequestSchema },
      responses: {
        200: { description: 'The program now in force', schema: referralProgramResponseSchema },
        400: failure('Invalid program: what to fix is in the message'),
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => deps.referrals.setProgram(brandId, body, 'admin'),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/referrals/stats',
      tags: ['engagement'],
      summary: "The brand's referral figures: codes used, qualified, paid, reversed, and refusals by reason",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'The figures', schema: referralStatsResponseSchema },
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => deps.referrals.stats(brandId),
    }),
  ];
}

/** `GET /referral/:brandId/:userIdentifier` (mounted under `/services`; brand-signed): a member's code and link. */
export function referralRoutes(deps: {
  referrals: Pick<ReferralService, 'code'>;
  verifyBrandSignature: BrandSignatureVerifier;
}): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/referral/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A member's referral code at the brand and the link to share (made on first ask, then always the same)",
      security: ['brandSignature'],
      request: { params: referralCodeParamsSchema },
      responses: {
        200: { description: 'The member’s code and link', schema: referralCodeResponseSchema },
        401: failure('Unsigned or badly signed'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId, userIdentifier }, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Referrals');
        res.setHeader('Cache-Control', 'no-store');
        return deps.referrals.code(brandId, userIdentifier);
      },
    }),
  ];
}
