/**
 * `npm run mcp`: the pts MCP server over stdio, for MCP clients that spawn a command (Claude Desktop, IDEs).
 * It serves the agent tools by forwarding to a running core-api's `/mcp` (signed with the agent key) and the
 * brand operator (seed) tools by calling the brand-facing API signed with the brand key — both keys stay in
 * this process.
 * stdout carries only MCP messages; logs go to stderr. Configuration: docs/agent-api/converse-mcp.md.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import pino from 'pino';
import { z } from 'zod';
import { createPtsMcpServer } from './mcp-server.ts';
import type { McpToolEntry } from './mcp-tool.ts';
import { operatorMcpTools, withOperatorTools } from './operator-tools.ts';
import { connectRemoteMcp, remoteMcpTools } from './remote-mcp.ts';

const envSchema = z.object({
  PTS_API_URL: z.url().default('http://127.0.0.1:3000'),
  PTS_AGENT_KEY_ID: z.string().min(1).optional(),
  PTS_AGENT_SECRET: z.string().min(1).optional(),
  PTS_BRAND_ID: z.string().min(1).optional(),
  PTS_BRAND_SECURITY_KEY: z.string().min(1).optional(),
  PTS_SERVICE_DOMAIN: z.string().min(3).default('pts.local'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

async function main(): Promise<void> {
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2));
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    logger.fatal(
      { errors: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) },
      'invalid environment',
    );
    process.exit(2);
  }
  const env = parsed.data;
  let tools: McpToolEntry[] = [];
  if (env.PTS_AGENT_KEY_ID && env.PTS_AGENT_SECRET) {
    const remote = await connectRemoteMcp(env.PTS_API_URL, {
      keyId: env.PTS_AGENT_KEY_ID,
      secret: env.PTS_AGENT_SECRET,
    });
    tools.push(...(await remoteMcpTools(remote)));
  } else {
    logger.warn('PTS_AGENT_KEY_ID / PTS_AGENT_SECRET unset: the agent tools are not offered');
  }
  if (env.PTS_BRAND_ID && env.PTS_BRAND_SECURITY_KEY) {
    const local = operatorMcpTools({
      apiUrl: env.PTS_API_URL,
      brandId: env.PTS_BRAND_ID,
      securityKey: env.PTS_BRAND_SECURITY_KEY,
      serviceDomain: env.PTS_SERVICE_DOMAIN,
    });
    tools = withOperatorTools(tools, local);
  } else {
    logger.warn('PTS_BRAND_ID / PTS_BRAND_SECURITY_KEY unset: the brand operator (seed) tools are not offered');
  }
  if (tools.length === 0) {
    logger.fatal(
      'nothing to serve: set an agent key (PTS_AGENT_KEY_ID, PTS_AGENT_SECRET) and/or a brand (PTS_BRAND_ID, PTS_BRAND_SECURITY_KEY)',
    );
    process.exit(2);
  }
  const server = createPtsMcpServer(tools);
  await server.connect(new StdioServerTransport());
  logger.info({ apiUrl: env.PTS_API_URL, tools: tools.length }, 'pts MCP server on stdio');
}

main().catch((error: unknown) => {
  process.stderr.write(`pts MCP server failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
