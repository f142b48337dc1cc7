import { AppError, type Clock } from '@pts/shared';
import { type ErrorRequestHandler, type Request, type RequestHandler, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { isReplayedSignature, type SignatureClaim } from '../http/brand-signature.ts';
import { toClientError } from '../http/errors.ts';
import { jsonBody } from '../http/json-body.ts';
import type { RateLimit } from '../http/rate-limit.ts';
import type { SignedReplies } from '../http/signed-replies.ts';
import type { ApiDocs, ResponseDoc, RouteDoc, SecuritySchemeName } from '../observability/openapi.ts';
import { type AgentAuthentication, type AgentAuthenticator, checkAgentAccess } from './agent-auth.ts';
import { type AgentTool, invokeAgentTool } from './agent-tool.ts';

/** Agent request bodies are small JSON documents (bulk events: up to 100 events). */
export const AGENT_BODY_LIMIT_BYTES = 256 * 1024;

/** The spec 7 error codes of the agent API. */
export type AgentErrorCode =
  | 'validation'
  | 'auth_required'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limit'
  | 'internal';

/**
 * The code of an HTTP status (spec 7): the agent API speaks these instead of the core API's codes. Other
 * 4xx (413 body too large, 415 media type, 422) are the caller's input to fix: `validation`, status kept.
 */
export function agentErrorCode(status: number): AgentErrorCode {
  if (status === 401) return 'auth_required';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limit';
  if (status >= 400 && status < 500) return 'validation';
  return 'internal';
}

/** `{error:{message, code, status}}`, plus `details` (which field, which reason) when the error has them. */
export const agentErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      code: z.enum(['validation', 'auth_required', 'forbidden', 'not_found', 'conflict', 'rate_limit', 'internal']),
      status: z.number().int(),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'AgentError' });

/** The success envelope of a tool whose `data` is `result` (spec 2.1). */
export function agentEnvelopeSchema(result: z.ZodType) {
  return z.object({
    data: result,
    meta: z.object({ tool: z.string(), timestamp: z.string().describe('ISO 8601, server time of the answer') }),
  });
}

function sendAgentError(res: Response, error: AppError): void {
  const status = Math.min(error.status, 500);
  if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
  const body: z.input<typeof agentErrorSchema> = {
    error: {
      message: status === 500 ? 'Internal error; it has been logged' : error.message,
      code: agentErrorCode(status),
      status,
    },
  };
  if (error.details && status < 500) body.error.details = error.details;
  res.status(status).json(body);
}

/** How often one process writes a key's `last_used_at` (the column is kept to the minute). */
const KEY_USE_NOTE_MS = 60_000;

export interface AgentRouterDeps {
  clock: Clock;
  logger: Logger;
  /** Public calls per IP; signed calls per key at the key's own rate (compose.ts, AppLimits). */
  limits: { agentIp: RateLimit; agentKey(ratePerMinute: number): RateLimit };
  /** The first answer of a signed change, replayed for the same signature (http/signed-replies.ts). */
  signedReplies: SignedReplies;
  tools: readonly AgentTool[];
  authenticate: AgentAuthenticator;
  /** Marks a signed change's signature used (agent-auth.ts, recordAgentSignature). */
  recordSignature(req: Request, claim: SignatureClaim): Promise<void>;
  /** Writes the key's `last_used_at` (at most once a minute per key and process). */
  noteKeyUsed(keyId: string): Promise<void>;
}

/**
 * `/api/v1`: one route per tool (docs/agent-api.md). Per request: read the JSON body (raw bytes kept for the
 * signature), verify a signature if any, check the tool's access, take one point of the key's limit (signed)
 * or the IP's (public), record a change's signature (replays get the first answer), run the tool through
 * `invokeAgentTool`, answer `{data, meta}`. Every failure, unknown paths included, is `{error}` (spec 7).
 */
export function createAgentRouter(d: AgentRouterDeps): Router {
  const router = Router();
  router.use(jsonBody(AGENT_BODY_LIMIT_BYTES));
  const keyUses: KeyUseNotes = { lastNoted: new Map() };
  // GET /api/v1: the index of the tools, so a caller who starts at the root finds every route from there.
  router.get('/', indexHandler(d, agentToolIndex(d.tools)));
  for (const tool of d.tools) router[tool.definition.method](tool.definition.path, toolHandler(d, tool, keyUses));
  router.use((req: Request, _res, next) => {
    next(new AppError('NOT_FOUND', `No agent API endpoint ${req.method} ${req.baseUrl}${req.path}`));
  });
  router.use(agentErrorHandler(d));
  return router;
}

/** When this process last wrote each key's `last_used_at` (epoch ms), shared by every tool's route. */
interface KeyUseNotes {
  lastNoted: Map<string, number>;
}

/** `GET /api/v1`: the index, public, one point of the IP's limit. */
function indexHandler(d: Pick<AgentRouterDeps, 'clock' | 'limits'>, index: AgentToolIndex): RequestHandler {
  return async (req, res, next) => {
    try {
      await d.limits.agentIp.consume(res, req.ip ?? 'unknown');
      res.json({ data: index, meta: { tool: AGENT_INDEX_NAME, timestamp: d.clock.now().toISOString() } });
    } catch (error) {
      next(error);
    }
  };
}

/** One tool's route: body check, authentication, access, limit, signature record, then the tool. */
function toolHandler(d: AgentRouterDeps, tool: AgentTool, keyUses: KeyUseNotes): RequestHandler {
  const { definition } = tool;
  return async (req, res, next) => {
    try {
      refuseNonJsonBody(definition, req);
      const auth = await admitAgentCall(d, definition, req, res);
      if (auth) {
        await d.recordSignature(req, auth.claim);
        noteKeyUse(d, keyUses, auth.principal.keyId);
      }
      const data = await invokeAgentTool(
        tool,
        { params: req.params, query: req.query, body: req.body },
        { principal: auth?.principal, clock: d.clock, logger: d.logger },
      );
      res.json({ data, meta: { tool: definition.name, timestamp: d.clock.now().toISOString() } });
    } catch (error) {
      next(error);
    }
  };
}

/**
 * A body the JSON reader skipped (text/plain, a form, no Content-Type) would read as {} and be refused field by
 * field as "received undefined"; say what to send instead. (`false`: a body, not JSON.)
 */
function refuseNonJsonBody(definition: AgentTool['definition'], req: Request): void {
  if (definition.request?.body && req.is('application/json') === false) {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the body as JSON with the header Content-Type: application/json',
    );
  }
}

/**
 * Authenticates a non-public call, checks the tool's access and takes one point of the key's limit (or the IP's
 * for an anonymous call) before refusing: a denied caller still spends its limit. The authentication, if any.
 */
async function admitAgentCall(
  d: Pick<AgentRouterDeps, 'authenticate' | 'limits'>,
  definition: AgentTool['definition'],
  req: Request,
  res: Response,
): Promise<AgentAuthentication | undefined> {
  const auth = definition.access === 'public' ? undefined : await d.authenticate(req);
  const principal = auth?.principal;
  const denied = checkAgentAccess(definition.access, principal, req.params);
  if (principal) await d.limits.agentKey(principal.ratePerMinute).consume(res, principal.keyId);
  else await d.limits.agentIp.consume(res, req.ip ?? 'unknown');
  if (denied) throw denied;
  return auth;
}

/** `last_used_at` is kept to the minute: this process writes it at most once a minute per key, never waited on. */
function noteKeyUse(d: Pick<AgentRouterDeps, 'clock' | 'logger' | 'noteKeyUsed'>, keyUses: KeyUseNotes, keyId: string) {
  const now = d.clock.now().getTime();
  const noted = keyUses.lastNoted.get(keyId);
  if (noted !== undefined && now - noted < KEY_USE_NOTE_MS && now >= noted) return;
  keyUses.lastNoted.set(keyId, now);
  d.noteKeyUsed(keyId).catch((error: unknown) => d.logger.warn({ err: error }, 'could not note an agent key use'));
}

/** Every failure as `{error}` (spec 7); a replayed signed change gets its first answer instead. */
function agentErrorHandler(d: Pick<AgentRouterDeps, 'logger' | 'signedReplies'>): ErrorRequestHandler {
  const handleError: ErrorRequestHandler = (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const error = toClientError(err);
    if (error && error.status < 500) return sendAgentError(res, error);
    d.logger.error({ err, method: req.method, path: req.path }, 'agent API error');
    sendAgentError(res, new AppError('INTERNAL_ERROR', 'Internal error'));
  };
  return (err, req, res, next) => {
    if (!isReplayedSignature(err) || res.headersSent) return handleError(err, req, res, next);
    // The same signed change again: the first answer, replayed (http/signed-replies.ts); never a second effect.
    d.signedReplies.replay(req, res).catch((error: unknown) => handleError(error, req, res, next));
  };
}

/** The `meta.tool` and operationId of `GET /api/v1`. */
const AGENT_INDEX_NAME = 'list_agent_tools';

/** `GET /api/v1`: every tool with its method, path, access and one-line description. */
export const agentToolIndexSchema = z
  .object({
    tools: z.array(
      z.object({
        name: z.string(),
        method: z.enum(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']),
        path: z.string().describe('Under /api/v1, with :params'),
        access: z.string().describe('public, optional, key or manage (docs/agent-api.md, "Access")'),
        description: z.string().describe('One line'),
      }),
    ),
    count: z.number().int(),
    docs: z.string().describe('Where the full description of every tool is (OpenAPI)'),
  })
  .meta({ id: 'AgentToolIndex' });

type AgentToolIndex = z.output<typeof agentToolIndexSchema>;

export function agentToolIndex(tools: readonly AgentTool[], prefix = '/api/v1'): AgentToolIndex {
  return {
    tools: tools.map(({ definition }) => ({
      name: definition.name,
      method: definition.method.toUpperCase() as 'GET',
      path: `${prefix}${definition.path}`,
      access: definition.access,
      description: definition.summary,
    })),
    count: tools.length,
    docs: '/openapi.json',
  };
}

const SECURITY: Record<string, SecuritySchemeName[] | undefined> = {
  public: undefined,
  optional: undefined,
};

/** Documents every tool under `prefix` (`/api/v1`) with its result inside the envelope, so `/docs` shows it. */
export function documentAgentTools(docs: ApiDocs, tools: readonly AgentTool[], prefix = '/api/v1'): void {
  docs.register({
    method: 'get',
    // With the slash: the router serves `/` under its prefix (GET /api/v1 answers the same).
    path: `${prefix}/`,
    summary: 'The index of the agent tools',
    description:
      'Every tool of the agent API with its HTTP method, path, access and a one-line description; the full ' +
      'description and schemas of each are its own operation here. Public.',
    operationId: AGENT_INDEX_NAME,
    tags: ['agent'],
    responses: {
      200: { description: '`{data, meta}`', schema: agentEnvelopeSchema(agentToolIndexSchema) },
      429: { description: 'Error envelope (docs/agent-api.md, "Errors")', schema: agentErrorSchema },
    },
  });
  for (const { definition } of tools) {
    const { request = {} } = definition;
    const documented: { params?: z.ZodType; query?: z.ZodType; body?: z.ZodType } = {};
    if (request.params) documented.params = request.params;
    if (request.query) documented.query = request.query;
    if (request.body) documented.body = request.body;
    const security = definition.access in SECURITY ? SECURITY[definition.access] : (['agentKey'] as const);
    const errors: ResponseDoc = {
      description: 'Error envelope (docs/agent-api.md, "Errors")',
      schema: agentErrorSchema,
    };
    const responses: RouteDoc['responses'] = {
      200: {
        description: `\`{data, meta:{tool:"${definition.name}", timestamp}}\``,
        schema: agentEnvelopeSchema(definition.result),
      },
      400: errors,
      404: errors,
      429: errors,
      500: errors,
    };
    if (security) {
      responses[401] = errors;
      responses[403] = errors;
    }
    docs.register({
      method: definition.method,
      path: `${prefix}${definition.path}`,
      summary: definition.summary,
      description: `${definition.description}\n\nAccess: \`${definition.access}\` (docs/agent-api.md, "Access").`,
      operationId: definition.name,
      tags: ['agent'],
      responses,
      ...(security ? { security: [...security] } : {}),
      ...(Object.keys(documented).length ? { request: documented } : {}),
    });
  }
}
