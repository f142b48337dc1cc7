import { brandIdParamsSchema, simulateRequestSchema, simulationSchema } from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { SimulatorService } from './simulator.service.ts';

/**
 * `POST /brands/:brandId/simulate` (mounted at `/admin`; admin token): the what-if simulator (docs/simulator.md).
 * The portal's Program page and the agent's `simulate_rule_change` call the same service.
 */
export function simulatorAdminRoutes(deps: { simulator: SimulatorService; adminToken: string }): Route[] {
  const admin = requireAdminToken(deps.adminToken);
  return [
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/simulate',
      tags: ['engagement'],
      summary:
        'Replay the last 1–90 days of events under proposed rules, tiers or campaign terms: pts and cost issued against actual, members affected, tiers before and after',
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema, body: simulateRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'What the window would have issued, beside what it issued', schema: simulationSchema },
        400: failure('Invalid proposal: the field to fix is named in the message'),
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body, res }) => {
        res.setHeader('Cache-Control', 'no-store');
        return deps.simulator.simulate(brandId, body);
      },
    }),
  ];
}
