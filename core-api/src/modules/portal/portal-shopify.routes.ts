import {
  portalBrandParamsSchema,
  shopifyConnectRequestSchema,
  shopifyConnectResponseSchema,
  shopifyDisconnectResponseSchema,
  shopifyIntegrationSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ShopifyService } from '../shopify/shopify.service.ts';
import { actorOf, baseUrlOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

/**
 * The Integrations page's Shopify panel (docs/shop-program.md, "Shopify"): any member reads the connection and
 * the last deliveries; an admin or owner connects or disconnects a shop (403 before the body is read for a viewer). The same
 * service as `PUT /admin/brands/:brandId/shopify` and `pts shopify connect`.
 */
export function portalShopifyRoutes(deps: {
  auth: PortalAuthService;
  team: PortalTeamService;
  shopify: ShopifyService;
  publicUrl?: string | undefined;
}): Route[] {
  const signedIn = [requireSession(deps.auth)];
  const asAdmin = [...signedIn, requireBrandRole(deps.team, 'admin')];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/shopify',
      summary: "The brand's Shopify shop (never the secret), its webhook address and last 20 deliveries",
      tags: ['portal'],
      security: ['portalSession'],
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Connection (null when none) and deliveries', schema: shopifyIntegrationSchema },
        401: failure('Not signed in (no session, or it ended)'),
        404: failure('No such brand among yours'),
      },
      handle: async ({ params: { brandId }, req, res }) => {
        await deps.team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return deps.shopify.integration(brandId, baseUrlOf(req, deps.publicUrl));
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/shopify',
      summary: "Connect the brand's Shopify shop (admin): domain and webhook secret",
      tags: ['portal'],
      security: ['portalSession'],
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: shopifyConnectRequestSchema },
      responses: {
        200: { description: 'Connected (the secret is never answered)', schema: shopifyConnectResponseSchema },
        400: failure('Malformed shop domain or secret'),
        401: failure('Not signed in (no session, or it ended)'),
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: failure('No such brand among yours'),
      },
      handle: async ({ params: { brandId }, body, req, res }) => {
        const user = portalUserOf(res);
        await deps.team.requireRole(user.id, brandId, 'admin');
        res.setHeader('Cache-Control', 'no-store');
        return {
          success: true as const,
          connection: await deps.shopify.connect(brandId, body, baseUrlOf(req, deps.publicUrl), {
            actor: actorOf(user),
          }),
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/shopify',
      summary: "Disconnect the brand's Shopify shop (admin): later deliveries answer 404",
      tags: ['portal'],
      security: ['portalSession'],
      before: asAdmin,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Disconnected (past deliveries stay listed)', schema: shopifyDisconnectResponseSchema },
        401: failure('Not signed in (no session, or it ended)'),
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: failure('No such brand among yours, or no shop connected'),
      },
      handle: async ({ params: { brandId }, res }) => {
        const user = portalUserOf(res);
        await deps.team.requireRole(user.id, brandId, 'admin');
        return deps.shopify.disconnect(brandId, { actor: actorOf(user) });
      },
    }),
  ];
}
