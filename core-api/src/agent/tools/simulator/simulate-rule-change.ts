import { brandIdSchema, simulateRequestSchema, simulationSchema } from '@pts/shared';
import { z } from 'zod';
import type { SimulatorService } from '../../../modules/simulator/simulator.service.ts';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';

/** The simulator's one entry (modules/simulator): the same service as the admin route and the portal. */
export interface SimulatorToolDeps {
  simulator: Pick<SimulatorService, 'simulate'>;
}

const { days, rules, tiers, campaigns } = simulateRequestSchema.shape;
const { success: _success, ...answer } = simulationSchema.shape;
const resultSchema = z.object(answer);

/** `simulate_rule_change`: what the brand's last days would have issued under proposed rules (docs/simulator.md). */
export function simulateRuleChangeTool(d: SimulatorToolDeps): AgentTool {
  return defineAgentTool({
    name: 'simulate_rule_change',
    method: 'post',
    path: '/brands/:brandId/simulate',
    summary: 'What the last 30 or 90 days would have issued under proposed rules, tiers or campaign terms',
    description:
      'Replays the brand’s real events of the last `days` (1–90) through the event path’s own judge under the ' +
      'proposal and answers beside what was actually issued: `actual` and `simulated` pts (decimal strings) and ' +
      'their cost at the token price (1 USD = 1000 pts), `membersAffected` (earn more, less, the same), the ' +
      'largest member changes and, with tiers, the tier distribution before and after (docs/simulator.md). ' +
      'Each proposed rule replaces the fields it sends of the current rule of its event type. Nothing is ' +
      'changed: apply a proposal with update_brand_event. 400 naming the field to fix; 403 unless the key has ' +
      'canManageProgram and acts for the brand.',
    access: 'manage',
    request: {
      params: z.object({ brandId: brandIdSchema.describe('The brand whose program is simulated (0x…)') }),
      body: z.object({
        days: days.describe('How many past days to replay, 1–90 (default 30)'),
        rules: rules.describe(
          'Proposed rules: [{"eventType", "rewardAmount" | "rate", "minValue"?, "maxReward"?, "maxClaims"?, "cooldownHours"?, "maxTotal"?, "active"?}]',
        ),
        tiers: tiers.describe('A proposed tier table as PUT …/tiers takes it; the current one when left out'),
        campaigns: campaigns.describe(
          'New terms for the brand’s hashtag campaigns: [{"id", "reward" | "rewardMultiplier", "maxClaimsPerUser"?}]',
        ),
      }),
    },
    result: resultSchema,
    example: (fixture) => ({ params: { brandId: fixture.brandId }, body: { days: 30, rules: [] } }),
    async handle({ params, body }, context) {
      requireBrandAuthority(context.principal, params.brandId, 'Simulating a rule change');
      const { success: _ok, ...simulation } = await d.simulator.simulate(params.brandId, body);
      return simulation;
    },
  });
}
