import { answerKey } from '../caching/answer-cache.ts';
import { type AgentTool, defineAgentTool } from './agent-tool.ts';
import type { AgentToolDeps } from './agent-tool-deps.ts';
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
import { rewardsTools } from './tools/rewards.tools.ts';
import { simulatorTools } from './tools/simulator.tools.ts';
import { tiersTools } from './tools/tiers.tools.ts';

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
  tools.push(...rewardsTools(d), ...tiersTools(d), ...simulatorTools(d));
  // converse plans over the whole list as served (itself excluded), read when it is called.
  let served: AgentTool[] = [];
  tools.push(...converseTools(d, () => served));
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`Agent tool ${tool.name} is declared twice`);
    names.add(tool.name);
  }
  served = tools.map((tool) => cached(d, tool));
  return served;
}

/**
 * A `cached` tool answers through the process's answer cache (one computation per input and max age,
 * however many agents ask). Only public tools may: their answer depends on the input alone.
 */
function cached(d: AgentToolDeps, tool: AgentTool): AgentTool {
  const { definition } = tool;
  if (!definition.cached) return tool;
  if (definition.access !== 'public') {
    throw new Error(`Agent tool ${tool.name} caches its answers but is not public (${definition.access})`);
  }
  const seconds = d.settings.answerMaxAgeSeconds;
  if (seconds === 0) return tool;
  return defineAgentTool({
    ...definition,
    handle: (input, context) =>
      d.agentAnswers.get(answerKey(definition.name, input), seconds, () => definition.handle(input, context)),
  });
}
