import {
  createBrandRequestSchema,
  createdBrandSchema,
  operatorBrandsSchema,
  portalBrandParamsSchema,
  portalInviteRequestSchema,
  portalInviteSchema,
  portalOperatorInviteRequestSchema,
  portalOperatorInviteSchema,
  portalOperatorRemovalRequestSchema,
  portalOperatorRemovalSchema,
} from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandAdminService } from '../brands/brand-admin.service.ts';
import { baseUrlOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { operatorActorOf, type PortalOperatorService, requireOperator } from './portal-operator.service.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalOperatorRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  operators: PortalOperatorService;
  brands: BrandAdminService;
  publicUrl?: string | undefined;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const notOperator = failure('Missing CSRF token, or you are not a platform operator');

/**
 * The operators' page of the portal (docs/portal.md, "Operators"), mounted at `/portal/api` behind the CSRF
 * check: every brand, create a brand, invite its first owner. Each route needs a session of a user flagged
 * operator (403 otherwise) and calls the service of `pts brand create` and `pts portal invite`, audited as
 * `operator:<email>`. Operators open any brand's pages read-only (portal-team.service.ts `roleIn`).
 */
export function portalOperatorRoutes(deps: PortalOperatorRoutesDeps): Route[] {
  const signedIn = [requireSession(deps.auth)];
  const operator = (res: Parameters<typeof portalUserOf>[0]) => {
    const user = portalUserOf(res);
    requireOperator(user);
    return user;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/operator/brands',
      summary: 'Every brand with its members and portal team (operators)',
      tags: ['portal'],
      security: session,
      before: signedIn,
      responses: {
        200: { description: 'Brands, oldest first', schema: operatorBrandsSchema },
        401: signedOut,
        403: notOperator,
      },
      handle: async ({ res }) => {
        operator(res);
        return { success: true, brands: await deps.operators.listBrands() };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/operator/brands',
      summary: 'Create a brand (operators); the same service as `pts brand create`; its keys are shown once',
      description: 'A new brand starts with the spec 2.4 default rules, as with `POST /admin/brands`.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { body: createBrandRequestSchema },
      responses: {
        201: { description: 'Created', schema: z.object({ success: z.literal(true), brand: createdBrandSchema }) },
        400: failure('Validation failed'),
        401: signedOut,
        403: notOperator,
        409: failure('Brand address already registered'),
      },
      handle: async ({ body, res }) => {
        const user = operator(res);
        const brand = await deps.brands.create(body, { actor: operatorActorOf(user) });
        res.setHeader('Cache-Control', 'no-store');
        res.status(201);
        return { success: true, brand };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/operator/brands/:brandId/invites',
      summary: "Invite a brand's owner (or another member) (operators); the same function as `pts portal invite`",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema, body: portalInviteRequestSchema },
      responses: {
        201: {
          description: 'Invited (inviteUrl only when no mail server is configured, so the operator can pass it on)',
          schema: portalInviteSchema.partial({ inviteUrl: true }),
        },
        400: failure('Validation failed'),
        401: signedOut,
        403: notOperator,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body, req, res }) => {
        const user = operator(res);
        const invite = await deps.team.inviteMember({
          brandId,
          email: body.email,
          role: body.role,
          invitedBy: operatorActorOf(user),
          baseUrl: baseUrlOf(req, deps.publicUrl),
        });
        res.setHeader('Cache-Control', 'no-store');
        res.status(201);
        const { inviteUrl, ...sent } = invite;
        return deps.team.mailKind === 'log' ? invite : sent;
      },
    }),
  ];
}

/** `POST /admin/portal/operator-invites`: the admin token makes a person an operator (`pts portal invite --operator`). */
export function portalOperatorAdminRoutes(deps: {
  team: PortalTeamService;
  adminToken: string;
  publicUrl?: string | undefined;
}): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/portal/operator-invites',
      summary: 'Invite a person to operate the platform in the portal (every brand; create brands, invite owners)',
      description:
        'The link is printed, and e-mailed when a mail server is set; it works once. Accepting it flags the person as an operator.',
      tags: ['admin', 'portal'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { body: portalOperatorInviteRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Invite', schema: portalOperatorInviteSchema },
        400: failure('Validation failed'),
        401: failure('Missing or wrong admin token'),
      },
      handle: async ({ body, req, res }) => {
        const invite = await deps.team.inviteOperator({
          email: body.email,
          invitedBy: 'admin',
          baseUrl: baseUrlOf(req, deps.publicUrl),
        });
        res.status(201);
        return invite;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/portal/operators/remove',
      summary: 'Take the operator flag from a person and revoke their pending operator invites',
      description:
        'Their next portal request already lacks it (sessions read the flag from the user); brand memberships stay. 404 when the e-mail is neither an operator nor invited as one.',
      tags: ['admin', 'portal'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { body: portalOperatorRemovalRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Removed', schema: portalOperatorRemovalSchema },
        400: failure('Validation failed'),
        401: failure('Missing or wrong admin token'),
        404: failure('Not an operator, and no pending operator invite'),
      },
      handle: ({ body }) => deps.team.removeOperator({ email: body.email, removedBy: 'admin' }),
    }),
  ];
}
