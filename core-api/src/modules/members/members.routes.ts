import { randomUUID } from 'node:crypto';
import {
  adminManualAwardRequestSchema,
  adminMemberDeductionRequestSchema,
  brandIdParamsSchema,
  manualAwardResponseSchema,
  memberDeductionResponseSchema,
} from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { idempotencyKeyOf } from '../../http/idempotency-key.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ReversalService } from '../reversals/reversals.service.ts';
import type { BrandMemberService } from './brand-members.service.ts';

/**
 * `POST /admin/brands/:brandId/awards` (`pts member award`): the portal's manual award (Members page) from the
 * admin API, the same `awardMember`, audited as `admin`.
 */
export function memberAdminRoutes(deps: {
  members: BrandMemberService;
  reversals: Pick<ReversalService, 'deduct'>;
  adminToken: string;
}): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/awards',
      summary: "Give a member pts by hand with the reason why (the portal's manual award); audited as admin",
      description:
        'Recorded as a `manual_award` event (the reason in its metadata) and minted like every reward. `member` is an ' +
        'e-mail, an identity key (`discord_123@…`) or a platform identity (`discord:123`) the brand has seen. ' +
        '`idempotencyKey` (or the `Idempotency-Key` header), one per intended award: a repeat answers the first ' +
        'award (`replayed: true`) and pays nothing.',
      tags: ['admin'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { params: brandIdParamsSchema, body: adminManualAwardRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Awarded', schema: manualAwardResponseSchema },
        400: failure('Validation failed (the reason is required)'),
        401: failure('Missing or wrong admin token'),
        403: failure('The brand blocked this member (MEMBER_BLOCKED): unblock them first'),
        404: failure('Unknown brand, or the brand has never seen this member'),
        409: failure(
          'The platform identity names several members: give the identity key; or the idempotency key was used for another award',
        ),
      },
      handle: async ({ params: { brandId }, body, req }) => {
        const { member, amount, reason } = body;
        const idempotencyKey = idempotencyKeyOf(req, body.idempotencyKey);
        return deps.members.award({ brandId, member, amount, reason, idempotencyKey, actor: 'admin' });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/deductions',
      summary: "Take pts back from a member by hand with the reason why (the portal's deduction); audited as admin",
      description:
        'Recorded as a reversal of kind `deduction` (no event), burned on chain by `reverseBatch` like a refund. `member` is an ' +
        'e-mail, an identity key or a platform identity (`discord:123`) the brand has seen. At most what the member holds spendable: ' +
        'a deduction is not a refund. `idempotencyKey` (or the `Idempotency-Key` header), one per intended deduction: a repeat ' +
        'answers the first (`replayed: true`) and takes nothing more.',
      tags: ['admin'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { params: brandIdParamsSchema, body: adminMemberDeductionRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Deducted', schema: memberDeductionResponseSchema },
        400: failure(
          'Validation failed: the reason is required, or the amount is above what the member holds spendable',
        ),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand, or the brand has never seen this member'),
        409: failure(
          'The platform identity names several members: give the identity key; or the idempotency key was used for another deduction',
        ),
      },
      handle: async ({ params: { brandId }, body, req }) => {
        const { member, amount, reason } = body;
        const idempotencyKey = idempotencyKeyOf(req, body.idempotencyKey) ?? randomUUID();
        const userKey = await deps.members.resolveKey(brandId, member);
        return deps.reversals.deduct({ brandId, userKey, amount, reason, idempotencyKey, actor: 'admin' });
      },
    }),
  ];
}
