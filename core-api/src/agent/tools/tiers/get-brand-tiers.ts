import { tierDistributionSchema, tierSchema } from '@pts/shared';
import { z } from 'zod';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { brandParams } from '../analytics/analytics-schemas.ts';
import type { TierToolDeps } from './get-user-tier.ts';

const distribution = tierDistributionSchema.shape;
const resultSchema = z.object({
  brandId: z.string(),
  basis: distribution.basis,
  period: distribution.period,
  graceDays: z.number().int(),
  currency: z.string(),
  members: distribution.members,
  tiers: z.array(tierSchema.extend({ members: z.number().int() })),
});

/** `get_brand_tiers`: a brand's VIP tier table and how many members hold each tier (the portal dashboard's read). */
export function getBrandTiersTool(d: TierToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand_tiers',
    method: 'get',
    path: '/brands/:brandId/tiers',
    summary: "A brand's VIP tiers and how many members hold each",
    description:
      'The brand’s tier table (docs/tiers.md: `basis` earned or spent, `period`, `graceDays`, each tier’s ' +
      '`threshold`, `multiplier`, `entryReward` and `perks`) with `members` per tier, the same distribution as the ' +
      'portal dashboard: a member not judged since the table was set counts in the first tier. `tiers: []` while ' +
      'the brand has none. 403 when the key does not act for the brand.',
    access: 'key',
    request: { params: brandParams },
    result: resultSchema,
    example: (fixture) => ({ params: { brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a brand's tiers");
      const [table, counts] = await Promise.all([d.tiers.table(params.brandId), d.tiers.distribution(params.brandId)]);
      const members = new Map(counts.tiers.map((tier) => [tier.name, tier.members]));
      return {
        brandId: params.brandId,
        basis: table.basis,
        period: table.period,
        graceDays: table.graceDays,
        currency: table.currency,
        members: counts.members,
        tiers: (table.tiers ?? []).map((tier) => ({ ...tier, members: members.get(tier.name) ?? 0 })),
      };
    },
  });
}
