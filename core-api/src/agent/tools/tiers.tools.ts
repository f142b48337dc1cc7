import type { AgentTool } from '../agent-tool.ts';
import { getBrandTiersTool } from './tiers/get-brand-tiers.ts';
import { getUserTierTool, type TierToolDeps } from './tiers/get-user-tier.ts';

/** The VIP tier tools of the agent API (issue 36 §1, docs/tiers.md); one file each under tiers/. */
export function tiersTools(d: TierToolDeps): AgentTool[] {
  return [getUserTierTool(d), getBrandTiersTool(d)];
}
