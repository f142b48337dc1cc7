import { checkAgentAccess } from '../agent-auth.ts';
import type { AgentTool, AgentToolContext } from '../agent-tool.ts';
import { invokeAgentTool } from '../agent-tool.ts';
import { errorResult, jsonResult, type McpToolEntry } from './mcp-tool.ts';
import { agentToolAnnotations } from './tool-annotations.ts';
import { splitToolArguments, toolInputJsonSchema } from './tool-arguments.ts';
import { toolFailureOf } from './tool-errors.ts';

/**
 * Every agent tool as an MCP tool: same name and description, input = params ∪ query ∪ body as one object,
 * run through `invokeAgentTool` (the only validation) with the caller's context; data as JSON text.
 */
export function agentMcpTools(tools: AgentTool[], context: AgentToolContext): McpToolEntry[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.definition.description,
    inputSchema: toolInputJsonSchema(tool),
    annotations: agentToolAnnotations(tool),
    async call(args) {
      try {
        // The REST route's access rules (agent-auth.ts), on the flat arguments (`brandId` for `manage`).
        const denied = checkAgentAccess(tool.definition.access, context.principal, args);
        if (denied) throw denied;
        return jsonResult(await invokeAgentTool(tool, splitToolArguments(tool, args), context));
      } catch (error) {
        const failure = toolFailureOf(error);
        if (failure.status >= 500) context.logger.error({ err: error, tool: tool.name }, 'MCP tool failed');
        return errorResult(failure);
      }
    },
  }));
}
