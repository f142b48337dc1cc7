import type { AgentTool, AgentToolDeps } from './agent-tool.ts';
import { actionsTools } from './tools/actions.tools.ts';
import { analyticsTools } from './tools/analytics.tools.ts';
import { commerceTools } from './tools/commerce.tools.ts';
import { converseTools } from './tools/converse.tools.ts';
import { discoveryTools } from './tools/discovery.tools.ts';
import { growthTools } from './tools/growth.tools.ts';
import { intelligenceTools } from './tools/intelligence.tools.ts';
import { networkTools } from './tools/network.tools.ts';
import { onboardingTools } from './tools/onboarding.tools.ts';
import { programTools } from './tools/program.tools.ts';

/**
 * Every agent tool, one area file each (docs/agent-api.md, "Tools"). REST (`/api/v1`), MCP and converse are
 * all generated from this list; tool names must be unique.
 */
export function agentTools(d: AgentToolDeps): AgentTool[] {
  const tools: AgentTool[] = [...networkTools(d), ...discoveryTools(d), ...actionsTools(d), ...intelligenceTools(d)];
  // First: `/brands/rankings` must be matched before discovery's `/brands/:brandId`.
  tools.unshift(...analyticsTools(d));
  tools.push(...programTools(d));
  tools.push(...onboardingTools(d));
  tools.push(...growthTools(d), ...commerceTools(d));
  // converse plans over the whole list (itself excluded), read when it is called.
  tools.push(...converseTools(d, () => tools));
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`Agent tool ${tool.name} is declared twice`);
    names.add(tool.name);
  }
  return tools;
}
