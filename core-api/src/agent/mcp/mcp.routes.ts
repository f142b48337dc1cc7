import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AppError, type Clock } from '@pts/shared';
import { type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { jsonBody } from '../../http/json-body.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import { agentMcpTools } from './agent-mcp-tools.ts';
import { createPtsMcpServer } from './mcp-server.ts';
import { operatorMcpTools, withOperatorTools } from './operator-tools.ts';
import { toolFailureOf } from './tool-errors.ts';

/** Headers that bind the brand-operator tools of one `/mcp` request to a brand (docs/agent-api/converse-mcp.md). */
export const BRAND_ID_HEADER = 'x-pts-brand-id';
export const BRAND_KEY_HEADER = 'x-pts-brand-key';

/** A JSON-RPC batch of tool calls stays well under this. */
const MCP_BODY_LIMIT_BYTES = 256 * 1024;

export interface McpRouterDeps {
  clock: Clock;
  logger: Logger;
  /** Domain of synthetic member identities (PTS_SERVICE_DOMAIN): the seed tools name platform members so. */
  serviceDomain: string;
  /** Every agent tool (agent-tools.ts). */
  listTools(): AgentTool[];
  /**
   * Verifies the request's agent-key signature (`X-PTS-Agent-Key`, `X-PTS-Timestamp`, `X-PTS-Signature` over
   * `timestamp.POST./mcp.raw-body`), counts it against the key's rate limit and answers its principal;
   * throws AppError 401/429 otherwise.
   */
  authenticate(req: Request, res: Response): Promise<AgentPrincipal>;
  /** Whether `key` is a current security key of the brand (modules/brands, verifySecurityKey). */
  verifyBrandKey(brandId: string, key: string): Promise<boolean>;
}

/** The address this request reached: the operator tools call the brand-facing API of this same process. */
function loopbackUrl(req: Request): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  const host =
    address.includes(':') && !address.startsWith('::ffff:') ? `[${address}]` : address.replace('::ffff:', '');
  return `http://${host}:${req.socket.localPort}`;
}

/**
 * `POST /mcp`: MCP over streamable HTTP, stateless — each POST is one signed agent request (its own
 * signature, never reusable), served by a fresh server holding that key's tools, answered as JSON. With
 * `X-PTS-Brand-Id` and `X-PTS-Brand-Key` the seed's operator tools are added (taking the place of agent tools
 * of the same name), signing with that brand's key. GET
 * (a server-sent-event stream) and DELETE (a session end) have nothing to do without sessions: 405.
 */
export function createMcpRouter(deps: McpRouterDeps): Router {
  const router = Router();
  router.post('/mcp', jsonBody(MCP_BODY_LIMIT_BYTES), async (req, res, next) => {
    try {
      const principal = await deps.authenticate(req, res);
      const context = { principal, clock: deps.clock, logger: deps.logger };
      let tools = agentMcpTools(deps.listTools(), context);
      const brandId = req.get(BRAND_ID_HEADER)?.trim().toLowerCase();
      const brandKey = req.get(BRAND_KEY_HEADER)?.trim();
      if (brandId || brandKey) {
        if (!brandId || !brandKey || !(await deps.verifyBrandKey(brandId, brandKey))) {
          throw new AppError(
            'UNAUTHORIZED',
            `${BRAND_ID_HEADER} and ${BRAND_KEY_HEADER} must name a brand and its security key`,
          );
        }
        const operatorTools = operatorMcpTools({
          apiUrl: loopbackUrl(req),
          brandId,
          securityKey: brandKey,
          clock: deps.clock,
          serviceDomain: deps.serviceDomain,
        });
        tools = withOperatorTools(tools, operatorTools);
      }
      const server = createPtsMcpServer(tools);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      if (res.headersSent) return next(error);
      const failure = toolFailureOf(error);
      if (failure.status >= 500) deps.logger.error({ err: error }, 'MCP request failed');
      res
        .status(failure.status)
        .json({ error: { message: failure.message, code: failure.code, status: failure.status } });
    }
  });
  const noSessions = (_req: Request, res: Response) => {
    res
      .status(405)
      .set('allow', 'POST')
      .json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'pts serves MCP statelessly: POST each JSON-RPC message to /mcp' },
        id: null,
      });
  };
  router.get('/mcp', noSessions);
  router.delete('/mcp', noSessions);
  return router;
}
