import type { AgentTool } from '../agent-tool.ts';

/**
 * The MCP tool annotations (spec 2025-06-18, `ToolAnnotations`) a host uses to decide what to run without
 * asking: a read-only tool changes nothing; a destructive one may undo or spend what cannot be restored (pts
 * spent, a rule overwritten, a key revoked); an idempotent one has no further effect when called again with
 * the same arguments. pts is a closed world: no tool reaches beyond pts and its chain.
 */
export interface McpToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export const READ_ONLY: McpToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** A tool that changes state: `destructive` when it spends or overwrites, `idempotent` when a repeat is a no-op. */
export function writes(effects: { destructive: boolean; idempotent: boolean }): McpToolAnnotations {
  return {
    readOnlyHint: false,
    destructiveHint: effects.destructive,
    idempotentHint: effects.idempotent,
    openWorldHint: false,
  };
}

/**
 * The agent tools that are not plain reads. Every GET tool is read-only; every other tool must be listed here
 * (a test fails on one that is not), so a new write tool is classified on purpose.
 */
const AGENT_TOOL_EFFECTS: Record<string, McpToolAnnotations> = {
  // Rewards are added, never taken back; a repeat is refused only when it carries the same externalId.
  process_event: writes({ destructive: false, idempotent: false }),
  process_bulk_events: writes({ destructive: false, idempotent: false }),
  // Spends the member's pts.
  redeem_perk: writes({ destructive: true, idempotent: false }),
  create_brand_event: writes({ destructive: false, idempotent: false }),
  // Overwrites the rule's settings; the same change twice leaves the same rule.
  update_brand_event: writes({ destructive: true, idempotent: true }),
  create_brand_perk: writes({ destructive: false, idempotent: false }),
  update_brand_perk: writes({ destructive: true, idempotent: true }),
  onboard_brand: writes({ destructive: false, idempotent: false }),
  // rotate and revoke end the brand's current key.
  manage_brand_keys: writes({ destructive: true, idempotent: false }),
  // A computation over the network's figures: POST only because its input is a body.
  estimate_roi: READ_ONLY,
  request_growth_info: writes({ destructive: false, idempotent: false }),
  // A reward is paid once; a second claim changes nothing.
  claim_agent_reward: writes({ destructive: false, idempotent: true }),
  // A replay of past events under a proposal: POST only because its input is a body; nothing is changed.
  simulate_rule_change: READ_ONLY,
  // converse plans read tools only (converse.service.ts, plannableTools).
  converse: READ_ONLY,
};

/** The annotations of an agent tool, or undefined for a write tool nobody classified (a test catches it). */
export function agentToolAnnotations(tool: AgentTool): McpToolAnnotations | undefined {
  return AGENT_TOOL_EFFECTS[tool.name] ?? (tool.definition.method === 'get' ? READ_ONLY : undefined);
}
