import { type Clock, createCoreClient } from '@pts/shared';
import { z } from 'zod';
import { errorResult, jsonResult, type McpToolEntry } from './mcp-tool.ts';
import { type HttpCall, type OperatorContext, type OperatorToolSpec, SEED_TOOLS, sameBrand } from './seed-tools.ts';
import { READ_ONLY } from './tool-annotations.ts';
import { documentInputSchema, type JsonObjectSchema } from './tool-arguments.ts';
import { toolFailureOf } from './tool-errors.ts';

/** Where the brand-facing API is and whose credentials sign the calls (never sent: only the signature is). */
export interface OperatorCredentials {
  /** core-api's base URL, e.g. `http://127.0.0.1:3000`. */
  apiUrl: string;
  brandId: string;
  securityKey: string;
  fetch?: typeof fetch;
  /** Source of the signature timestamps (the system clock when absent). */
  clock?: Clock;
  /** Domain of synthetic member identities (PTS_SERVICE_DOMAIN, `pts.local` when absent), as the bots use. */
  serviceDomain?: string;
}

const spec = <S extends z.ZodObject>(s: OperatorToolSpec<S>) => s as unknown as OperatorToolSpec<z.ZodObject>;

/**
 * pts's own operator tool (the seed has none): service health, unsigned. Every other operator tool is a seed
 * tool (seed-tools.ts).
 */
const HEALTH_TOOL = spec({
  name: 'brand_health',
  annotations: READ_ONLY,
  description: 'Service health (GET /health): database, chain, minter queue and version. `status` is ok or degraded.',
  input: z.object({}),
  run: (context) => context.http('GET', '/health'),
});

const OPERATOR_TOOLS = [...SEED_TOOLS, HEALTH_TOOL];

/** The names of the operator tools (the MCP servers list them after the agent tools). */
export const OPERATOR_TOOL_NAMES: readonly string[] = OPERATOR_TOOLS.map((tool) => tool.name);

/** Unsigned calls (health; the relay, authorised by the user's token): the answer or a CoreApiError-like failure. */
function unsignedHttp(fetchImpl: typeof fetch, baseUrl: string): HttpCall {
  return async (method, path, options = {}) => {
    const response = await fetchImpl(`${baseUrl}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: Record<string, unknown> | null = null;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    } catch {
      body = { error: `${method} ${path} answered HTTP ${response.status} with a body that is not JSON` };
      if (response.ok)
        throw Object.assign(new Error(String(body.error)), {
          name: 'CoreApiError',
          status: 502,
          code: 'INVALID_RESPONSE',
        });
    }
    if (!response.ok && !(path === '/health' && response.status === 503)) {
      const failure = Object.assign(new Error(String(body?.error ?? `HTTP ${response.status}`)), {
        name: 'CoreApiError',
        status: response.status,
        code: String(body?.code ?? `HTTP_${response.status}`),
        details: body?.details,
      });
      throw failure;
    }
    return body;
  };
}

/** The operator tools bound to one brand's credentials. */
export function operatorMcpTools(credentials: OperatorCredentials): McpToolEntry[] {
  const fetchImpl = credentials.fetch ?? globalThis.fetch;
  const baseUrl = credentials.apiUrl.replace(/\/+$/, '');
  const client = createCoreClient({
    baseUrl,
    brandId: credentials.brandId,
    securityKey: credentials.securityKey,
    fetch: fetchImpl,
    retries: 1,
    ...(credentials.clock ? { clock: credentials.clock } : {}),
  });
  const http = unsignedHttp(fetchImpl, baseUrl);
  const context: OperatorContext = {
    brandId: credentials.brandId.toLowerCase(),
    serviceDomain: credentials.serviceDomain ?? 'pts.local',
    client,
    http,
  };
  return OPERATOR_TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: documentInputSchema(tool.name, z.toJSONSchema(tool.input, { io: 'input' }) as JsonObjectSchema),
    annotations: tool.annotations,
    async call(args) {
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) {
        const errors = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`);
        return errorResult({ code: 'validation', status: 400, message: errors.join('; '), reason: 'VALIDATION_ERROR' });
      }
      try {
        sameBrand(context, (parsed.data as { brandId?: string }).brandId);
        return jsonResult(await tool.run(context, parsed.data));
      } catch (error) {
        return errorResult(toolFailureOf(error));
      }
    },
  }));
}

/**
 * The tools of one MCP server: the agent tools, then the brand's operator tools. An operator tool takes the
 * place of the agent tool of the same name (get_leaderboard, get_user_balance, get_user_stats, redeem_perk):
 * a host given brand credentials is the brand's operator and speaks the seed's tools (docs/decisions.md).
 */
export function withOperatorTools(agentTools: McpToolEntry[], operatorTools: McpToolEntry[]): McpToolEntry[] {
  const taken = new Set(operatorTools.map((tool) => tool.name));
  return [...agentTools.filter((tool) => !taken.has(tool.name)), ...operatorTools];
}
