import { adminManualAwardRequestSchema, brandIdParamsSchema, manualAwardResponseSchema } from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import type { EventDeps } from '../events/events.service.ts';
import { awardMember, type BrandMembersDeps, resolveMemberKey } from './brand-members.service.ts';

/**
 * `POST /admin/brands/:brandId/awards` (`pts member award`): the portal's manual award (Members page) from the
 * admin API, the same `awardMember`, audited as `admin`.
 */
export function memberAdminRoutes(deps: BrandMembersDeps & { events: EventDeps; adminToken: string }): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/awards',
      summary: "Give a member pts by hand with the reason why (the portal's manual award); audited as admin",
      description:
        'Recorded as a `manual_award` event (the reason in its metadata) and minted like every reward. `member` is an ' +
        'e-mail, an identity key (`discord_123@…`) or a platform identity (`discord:123`) the brand has seen.',
      tags: ['admin'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { params: brandIdParamsSchema, body: adminManualAwardRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Awarded', schema: manualAwardResponseSchema },
        400: failure('Validation failed (the reason is required)'),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand, or the brand has never seen this member'),
        409: failure('The platform identity names several members: give the identity key'),
      },
      handle: async ({ params: { brandId }, body }) => {
        await requireBrandExists(deps.db, brandId);
        const userKey = await resolveMemberKey(deps, brandId, body.member);
        return awardMember(deps, { brandId, userKey, amount: body.amount, reason: body.reason, actor: 'admin' });
      },
    }),
  ];
}
