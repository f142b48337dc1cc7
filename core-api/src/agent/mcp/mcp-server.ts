import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorResult, type McpToolEntry } from './mcp-tool.ts';

export const MCP_SERVER_NAME = 'pts';
export const MCP_SERVER_VERSION = '0.1.0';

/**
 * An MCP server offering `tools`. The SDK's low-level `Server` rather than `McpServer.registerTool`: the agent
 * tools are validated once, by `invokeAgentTool` with their own schemas (McpServer would parse the arguments
 * with the merged schema first and hand over transformed values, validated twice), and the stdio bridge
 * re-offers tools it only knows as JSON Schema. Decision in docs/decisions.md ("Agent API", "converse and the MCP server").
 */
export function createPtsMcpServer(tools: McpToolEntry[]): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'pts loyalty rewards. Agent tools (discovery, analytics, balances, converse…) run with your agent key; ' +
        "with a brand's credentials the seed system's operator tools act for that brand (track_event, " +
        'streak_checkin, create_drop, redeem_perk…). Amounts are whole pts. Errors come back as isError content: ' +
        '{error: {code, status, message}}.',
    },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    // The seed's server names every tool `loyalteez_<name>`; a host with those names hard-coded still finds
    // ours (listed without the prefix). Decision in docs/decisions.md ("converse and the MCP server").
    const tool = byName.get(request.params.name) ?? byName.get(request.params.name.replace(/^loyalteez_/, ''));
    if (!tool) {
      return errorResult({ code: 'not_found', status: 404, message: `Unknown tool ${request.params.name}` });
    }
    return tool.call(request.params.arguments ?? {});
  });
  return server;
}
