import { growthLeadListSchema } from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { GrowthService } from './growth.service.ts';

/** Most leads one listing returns. */
export const GROWTH_LEADS_LIST_MAX = 500;

const leadsQuery = z.object({
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(GROWTH_LEADS_LIST_MAX, `limit must be at most ${GROWTH_LEADS_LIST_MAX}`)
    .default(100),
  since: z.iso
    .datetime({ offset: true, message: 'since must be an ISO 8601 time such as 2026-11-01T00:00:00Z' })
    .transform((value) => new Date(value))
    .optional(),
});

/**
 * `GET /admin/growth-leads` (operator token): the leads `request_growth_info` stored, newest first — the one
 * place contact emails are shown (docs/agent-api/growth.md, "Who reads leads").
 */
export function growthLeadAdminRoutes(deps: {
  growth: Pick<GrowthService, 'listGrowthLeads'>;
  adminToken: string;
}): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/growth-leads',
      summary: 'Growth leads from request_growth_info, newest first',
      tags: ['admin'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { query: leadsQuery },
      responses: {
        200: { description: 'Leads, newest first', schema: growthLeadListSchema },
        400: failure('Bad limit or since'),
        401: failure('Missing or wrong admin token'),
      },
      handle: async ({ query }) => {
        const leads = await deps.growth.listGrowthLeads(query);
        return {
          leads: leads.map((lead) => ({
            ...lead,
            createdAt: lead.createdAt.toISOString(),
            lastRequestedAt: lead.lastRequestedAt.toISOString(),
          })),
        };
      },
    }),
  ];
}
