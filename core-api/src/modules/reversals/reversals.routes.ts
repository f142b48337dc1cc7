import {
  adminReversalRequestSchema,
  brandIdParamsSchema,
  reversalRequestSchema,
  reversalResponseSchema,
} from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ReversalService } from './reversals.service.ts';

export interface ReversalRoutesDeps {
  reversals: ReversalService;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit: RateLimit;
}

/** `POST /pts-api/reversals` (issue 35, Interfaces): a brand takes back all or part of an event's reward. */
export function reversalRoutes(deps: ReversalRoutesDeps): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/reversals',
      summary: 'Reverse an event’s reward, in full or in part (a refund, a correction)',
      description:
        'Brand-signed. Names the event by `eventId`, or by `eventType` and `externalId` (an order id). `value` is the refunded part of the event’s value (in its currency): the reversal takes back that share of the reward, counted on all refunds of the event together and rounded down, so all reversals of one event never take back more than it paid; absent, everything the event still holds is taken back. The reward token burns what the member’s wallet still holds (`taken`); what the member already spent becomes their `debt` at the brand, paid first from their next rewards. The same `reversalId` again answers the first reversal with `duplicate: true` and takes nothing more. See docs/shop-program.md, "Refunds and reversals".',
      tags: ['events'],
      security: ['brandSignature'],
      request: { body: reversalRequestSchema },
      responses: {
        200: {
          description:
            'The reversal: what it takes back, and once its chain side is confirmed what was burned and what became debt',
          schema: reversalResponseSchema,
        },
        400: failure(
          'Validation failed: the event named two ways or not at all, a refund above what is left of the event’s value, in another currency, or by value for an event without one',
        ),
        401: failure('Missing or bad brand signature'),
        404: failure('No such event at this brand'),
        409: failure('Nothing left to reverse, or the reversalId was used for another refund'),
        429: failure('Rate limit'),
      },
      handle: async ({ body, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, body.brandId, 'Reversals');
        await deps.brandLimit.consume(res, body.brandId, 1, { headers: true });
        return deps.reversals.reverse(body);
      },
    }),
  ];
}

/**
 * `POST /brands/:brandId/reversals` (mounted at `/admin`; admin token): the same reversal for the operator and
 * `pts reversal create`, the brand named by the path; same answer, same reversalId applied once.
 */
export function reversalAdminRoutes(deps: { reversals: ReversalService; adminToken: string }): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/reversals',
      summary: 'Reverse an event’s reward, in full or in part, as the operator (`pts reversal create`)',
      description:
        'Admin token. The body of `POST /pts-api/reversals` without `brandId` (the path names the brand), the same answer, and the same reversalId applied once. See docs/shop-program.md, "Refunds and reversals".',
      tags: ['events'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { params: brandIdParamsSchema, body: adminReversalRequestSchema },
      responses: {
        200: { description: 'The reversal, as `POST /pts-api/reversals` answers it', schema: reversalResponseSchema },
        400: failure(
          'Validation failed: the event named two ways or not at all, a refund above what is left of the event’s value, in another currency, or by value for an event without one',
        ),
        401: failure('No or wrong admin token'),
        404: failure('No such event at this brand'),
        409: failure('Nothing left to reverse, or the reversalId was used for another refund'),
      },
      handle: async ({ params: { brandId }, body }) => deps.reversals.reverse({ ...body, brandId }),
    }),
  ];
}
