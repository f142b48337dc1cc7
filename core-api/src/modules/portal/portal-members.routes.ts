import {
  manualAwardRequestSchema,
  manualAwardResponseSchema,
  memberParamsSchema,
  memberProfileSchema,
  memberSearchQuerySchema,
  memberSearchResponseSchema,
  portalBrandParamsSchema,
} from '@pts/shared';
import { idempotencyKeyOf } from '../../http/idempotency-key.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandMemberService } from '../members/brand-members.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalMemberRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  members: BrandMemberService;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const notFound = failure('No such brand among yours, or the brand has never seen this member');

/**
 * The portal's Members page (docs/portal.md): search the brand's loyalty members, read one member's page,
 * and give a manual award (admin or owner) through the event pipeline, audited with the portal user as the
 * actor. A member the brand has never seen answers 404, whichever other brand knows them.
 */
export function portalMemberRoutes(deps: PortalMemberRoutesDeps): Route[] {
  const { team, members } = deps;
  const signedIn = [requireSession(deps.auth)];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/loyalty-members',
      summary: "Search the brand's members by e-mail, platform identity (discord:123) or wallet",
      description:
        'At most 20 matches, most recently seen first. Members are the people with an event or a redemption at the brand.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema, query: memberSearchQuerySchema },
      responses: {
        200: { description: 'Matches', schema: memberSearchResponseSchema },
        400: failure('Search text missing or too short'),
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, query: { q }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, members: await members.search(brandId, q) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/loyalty-members/:userKey',
      summary: "A member's page: balance, events (refused ones with their reason), redemptions, streak, achievements",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: memberParamsSchema },
      responses: { 200: { description: 'Member', schema: memberProfileSchema }, 401: signedOut, 404: notFound },
      handle: async ({ params: { brandId, userKey: identityKey }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return members.profile(brandId, identityKey);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/loyalty-members/:userKey/awards',
      summary: 'Give a member pts by hand with the reason why (admin or owner); audited',
      description:
        'Recorded as a `manual_award` event (the reason in its metadata) and minted like every reward; the audit log names the portal user. ' +
        '`idempotencyKey` (or the `Idempotency-Key` header), one per intended award: a repeat answers the first award (`replayed: true`) and pays nothing.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: memberParamsSchema, body: manualAwardRequestSchema },
      responses: {
        200: { description: 'Awarded', schema: manualAwardResponseSchema },
        400: failure('Validation failed (the reason is required)'),
        401: signedOut,
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: notFound,
        409: failure('The idempotency key was used for another award (another member, amount or person)'),
      },
      handle: async ({ params: { brandId, userKey: identityKey }, body, req, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const idempotencyKey = idempotencyKeyOf(req, body.idempotencyKey);
        return members.awardKey({ brandId, userKey: identityKey, ...body, idempotencyKey, actor: actorOf(user) });
      },
    }),
  ];
}
