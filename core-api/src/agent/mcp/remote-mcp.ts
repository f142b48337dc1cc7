import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { signAgentRequest } from '@pts/shared';
import { MCP_SERVER_VERSION } from './mcp-server.ts';
import { errorResult, type McpToolEntry } from './mcp-tool.ts';
import type { JsonObjectSchema } from './tool-arguments.ts';

export interface AgentKeyCredentials {
  keyId: string;
  secret: string;
}

/**
 * A fetch that signs every request with an agent key: `X-PTS-Agent-Key`, `X-PTS-Timestamp`, a fresh
 * `X-PTS-Nonce` and `X-PTS-Signature` = hex HMAC-SHA256(secret, `timestamp.nonce.METHOD.path-with-query.raw-body`)
 * — the agent API's scheme, computed over the exact bytes sent. The secret never leaves the process.
 */
export function agentSigningFetch(
  credentials: AgentKeyCredentials,
  options: { fetch?: FetchLike; now?: () => number } = {},
): FetchLike {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  return async (url, init = {}) => {
    const target = new URL(url);
    const method = (init.method ?? 'GET').toUpperCase();
    const body = typeof init.body === 'string' ? init.body : '';
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      throw new Error('agentSigningFetch signs string bodies only');
    }
    const timestamp = Math.floor(now() / 1000);
    const headers = new Headers(init.headers);
    const signature = signAgentRequest({
      keyId: credentials.keyId,
      secret: credentials.secret,
      timestamp,
      // Hosts sharing the key send byte-identical requests (notifications/initialized) in the same second.
      nonce: randomUUID(),
      method,
      pathWithQuery: `${target.pathname}${target.search}`,
      body,
    });
    for (const [name, value] of Object.entries(signature)) headers.set(name, value);
    return baseFetch(url, { ...init, headers });
  };
}

/** An MCP client connected to core-api's `/mcp`, signing each request with the agent key. */
export async function connectRemoteMcp(
  apiUrl: string,
  credentials: AgentKeyCredentials,
  options: { fetch?: FetchLike; headers?: Record<string, string> } = {},
): Promise<Client> {
  const client = new Client({ name: 'pts-mcp-stdio', version: MCP_SERVER_VERSION });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', apiUrl), {
    fetch: agentSigningFetch(credentials, options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { requestInit: { headers: options.headers } } : {}),
  });
  await client.connect(transport);
  return client;
}

/** The tools a connected `/mcp` lists, re-offered as they are; a call is forwarded and its result returned. */
export async function remoteMcpTools(client: Client): Promise<McpToolEntry[]> {
  const entries: McpToolEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const tool of page.tools) {
      entries.push({
        name: tool.name,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema as JsonObjectSchema,
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
        async call(args) {
          try {
            return (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            return errorResult({ code: 'internal', status: 502, message: `core-api /mcp failed: ${message}` });
          }
        },
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return entries;
}
