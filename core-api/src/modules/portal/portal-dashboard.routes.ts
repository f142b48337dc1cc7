import { brandAnalyticsQuerySchema, brandAnalyticsSchema, portalBrandParamsSchema } from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandAnalyticsService } from '../analytics/brand-analytics.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalDashboardDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  analytics: BrandAnalyticsService;
}

/**
 * `GET /portal/api/brands/:brandId/dashboard`: the brand's analytics read model (docs/portal.md, "Dashboard"),
 * the very answer of the agent's `get_brand_dashboard`. Any role of the brand reads it.
 */
export function portalDashboardRoutes(deps: PortalDashboardDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/dashboard',
      summary: "The brand's dashboard: members, events, pts, redemptions, purchases, gas, series, tops, leaderboard",
      description:
        'Over `from`..`to` (ISO 8601) or the `days` (default 30) ending now; at most 366 days. The same numbers as ' +
        'the agent API\'s `get_brand_dashboard` (one read model, docs/ledger.md "Brand analytics").',
      tags: ['portal'],
      security: ['portalSession'],
      before: [requireSession(deps.auth)],
      request: { params: portalBrandParamsSchema, query: brandAnalyticsQuerySchema },
      responses: {
        200: { description: 'Dashboard', schema: brandAnalyticsSchema },
        400: failure('Bad window: from after to, not a date, or longer than 366 days'),
        401: failure('Not signed in (no session, or it ended)'),
        404: failure('No such brand among yours'),
      },
      handle: async ({ params: { brandId }, query, res }) => {
        await deps.team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return deps.analytics.dashboard(brandId, query);
      },
    }),
  ];
}
