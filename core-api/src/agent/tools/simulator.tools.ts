import type { AgentTool } from '../agent-tool.ts';
import { type SimulatorToolDeps, simulateRuleChangeTool } from './simulator/simulate-rule-change.ts';

/** The what-if simulator's tool (issue 36 §3, docs/simulator.md). */
export function simulatorTools(d: SimulatorToolDeps): AgentTool[] {
  return [simulateRuleChangeTool(d)];
}
