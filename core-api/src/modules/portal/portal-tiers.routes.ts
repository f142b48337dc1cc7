import {
  memberParamsSchema,
  memberTierResponseSchema,
  portalBrandParamsSchema,
  setTiersRequestSchema,
  tierDistributionSchema,
  tiersResponseSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { TierService } from '../tiers/tiers.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalTierRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  tiers: Pick<TierService, 'table' | 'setTable' | 'member' | 'distribution'>;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const notFound = failure('No such brand among yours');

/**
 * VIP tiers in the portal (docs/tiers.md, "In the portal"): the Program page's tier editor (the service of
 * `PUT /admin/brands/:brandId/tiers`, admin or owner, audited with the portal user as the actor), the dashboard's
 * distribution and a member page's standing. Every answer is the tier module's one read.
 */
export function portalTierRoutes(deps: PortalTierRoutesDeps): Route[] {
  const { team, tiers } = deps;
  const signedIn = [requireSession(deps.auth)];
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/tiers',
      summary: "The brand's VIP tier table (`tiers: null` while it has none)",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'The table', schema: tiersResponseSchema }, 401: signedOut, 404: notFound },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return tiers.table(brandId);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/tiers',
      summary:
        "Replace the brand's VIP tier table (admin or owner), audited: the service of `PUT /admin/brands/:brandId/tiers`",
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: setTiersRequestSchema },
      responses: {
        200: { description: 'The table now in force', schema: tiersResponseSchema },
        400: failure('Invalid table: the field and what to fix are in the message'),
        401: signedOut,
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: notFound,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return tiers.setTable(brandId, body, actorOf(user));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/tiers/distribution',
      summary: 'How many members hold each tier (one query over the held tiers)',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Members per tier', schema: tierDistributionSchema },
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return tiers.distribution(brandId);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/loyalty-members/:userKey/tier',
      summary: "A member's tier, the next one and what is left to reach it",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: memberParamsSchema },
      responses: {
        200: { description: 'The member’s standing', schema: memberTierResponseSchema },
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId, userKey }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return tiers.member(brandId, userKey);
      },
    }),
  ];
}
