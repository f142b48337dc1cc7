import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { percentOf, periodWindows } from '../../analytics/formulas.ts';
import { basis, basisOf, FLOWS_MAX, periodQuery } from './analytics-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';

const resultSchema = z.object({
  members: z.number().int(),
  multiBrandMembers: z.number().int(),
  multiBrandPercent: z.number().nullable(),
  flows: z.array(
    z.object({
      from: z.object({ brandId: z.string(), name: z.string() }),
      to: z.object({ brandId: z.string(), name: z.string() }),
      members: z.number().int(),
      sharePercent: z.number().nullable(),
    }),
  ),
  basis,
});

/** `get_network_flows`: Cross-brand member flows: members active at brand A, then at brand B. */
export function getNetworkFlowsTool(d: WindowReadDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_network_flows',
    method: 'get',
    path: '/network/flows',
    summary: 'Cross-brand member flows: members active at brand A, then at brand B',
    description:
      "Over the period (7d, 30d default, 90d): each member's brands ordered by the member's first accepted event at each (ties by Brand ID); every consecutive pair A → B counts the member once for that flow. Answer: the busiest 50 flows (members, share of multi-brand members in %), members active in the period, members active at 2+ brands and their share. Agent identities excluded. No flows (an empty list with a note) when no member used two brands.",
    access: 'public',
    cached: true,
    request: { query: z.object({ period: periodQuery('30d') }) },
    result: resultSchema,
    example: () => ({ query: { period: '30d' } }),
    async handle({ query }, context) {
      const { current } = periodWindows(context.clock.now(), query.period);
      const flows = await reads.readMemberFlows(current);
      const top = flows.flows.slice(0, FLOWS_MAX);
      const names = await reads.readBrandNames([...new Set(top.flatMap((f) => [f.from, f.to]))]);
      const named = (brandId: string) => ({ brandId, name: names.get(brandId) ?? brandId });
      return {
        members: flows.members,
        multiBrandMembers: flows.multiBrandMembers,
        multiBrandPercent: percentOf(flows.multiBrandMembers, flows.members),
        flows: top.map((f) => ({
          from: named(f.from),
          to: named(f.to),
          members: f.members,
          sharePercent: percentOf(f.members, flows.multiBrandMembers),
        })),
        basis: basisOf(
          current,
          query.period,
          flows.members,
          top.length === 0 ? 'No member was active at two brands in the period' : undefined,
        ),
      };
    },
  });
}
