import { errorEnvelopeSchema } from '@pts/shared';
import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { z } from 'zod';
import type { ApiDocs, ResponseDoc, SecuritySchemeName } from '../observability/openapi.ts';
import { jsonBody, requireJson } from './json-body.ts';
import { parseInput } from './validate.ts';

/**
 * One route, declared once: the table a module exports both mounts the route and documents it, so the
 * OpenAPI document cannot drift from what is served (CONVENTIONS: one source of truth per fact).
 *
 * ```ts
 * export const streakRoutes = (deps: StreakRoutesDeps) => [
 *   defineRoute({
 *     method: 'get', path: '/streak/status/:brandId/:userIdentifier',
 *     summary: "A user's streak", tags: ['streaks'], security: ['brandSignature'],
 *     request: { params: streakStatusParamsSchema, query: streakStatusQuerySchema },
 *     responses: { 200: { description: 'Status', schema: streakStatusResponseSchema } },
 *     handle: async ({ params, query, req, res }) => { ... return status; },
 *   }),
 * ];
 * // app.ts: router.use(routerFrom(streakRoutes(deps))); documentRoutes(docs, streakRoutes(deps), '/services');
 * ```
 */
export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Schema = z.ZodType | undefined;
type Parsed<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<P extends Schema, Q extends Schema, B extends Schema> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
  req: Request;
  res: Response;
}

export interface RouteDefinition<
  P extends Schema = undefined,
  Q extends Schema = undefined,
  B extends Schema = undefined,
> {
  method: RouteMethod;
  /** Express path relative to the router's mount point: `/streak/status/:brandId/:userIdentifier`. */
  path: string;
  summary: string;
  description?: string;
  operationId?: string;
  tags: string[];
  /** Documented alternatives (any one is enough); the handler (or `before`) enforces them. Omit when public. */
  security?: SecuritySchemeName[];
  request?: {
    params?: P;
    query?: Q;
    /**
     * The body: documented, read as `bodyReader` says and (unless `validateBody` is false) validated before the
     * handler.
     */
    body?: B;
    /** Defaults to 16 KB. */
    bodyLimitBytes?: number;
    /**
     * How the body is read: `json` (the default) mounts `requireJson` and a JSON reader of `bodyLimitBytes`;
     * `json-any-type` the JSON reader alone (another content type leaves no body); `own` mounts no reader —
     * the router already read it (the admin routes share one) or a `before` reads its raw bytes itself
     * (signed webhooks, the checkout form).
     */
    bodyReader?: 'json' | 'json-any-type' | 'own';
    /**
     * `false`: the body is documented only and the handler validates it — when a check must come first (a
     * signature whose brand id is in the body) or the body is not JSON.
     */
    validateBody?: boolean;
    /** The documented media type of the body; JSON unless set (`application/x-www-form-urlencoded`). */
    bodyContentType?: string;
    /** Documented request headers (not validated: the handler or `before` reads them). */
    headers?: z.ZodType;
  };
  /** Documented answers by status (errors use the error envelope of the surface). */
  responses: { [status: number]: ResponseDoc; default?: ResponseDoc };
  /** Middleware that runs before the input is read (an authenticator, a rate limit, a custom body reader). */
  before?: RequestHandler[];
  /** Document the route but do not mount it (it is served by another mechanism, e.g. a static file). */
  documentOnly?: boolean;
  /**
   * Gets the parsed input. Its result is sent as JSON (status 200 unless the handler set another);
   * `undefined` means the handler answered itself (a redirect, a stream, HTML).
   */
  handle(input: RouteInput<P, Q, B>): unknown;
}

/** A route with its input types erased, as tables hold it. */
export interface Route {
  readonly method: RouteMethod;
  readonly path: string;
  readonly definition: RouteDefinition<Schema, Schema, Schema>;
}

const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024;

/** A documented error answer: the error envelope, with what makes the route answer it. */
export function failure(description: string): ResponseDoc {
  return { description, schema: errorEnvelopeSchema };
}

export function defineRoute<P extends Schema = undefined, Q extends Schema = undefined, B extends Schema = undefined>(
  definition: RouteDefinition<P, Q, B>,
): Route {
  return {
    method: definition.method,
    path: definition.path,
    definition: definition as unknown as RouteDefinition<Schema, Schema, Schema>,
  };
}

/** Mounts every route of `routes` on a new router, in order. */
export function routerFrom(routes: readonly Route[]): Router {
  const router = Router();
  for (const { definition } of routes) {
    if (definition.documentOnly) continue;
    const { request = {} } = definition;
    const handlers: RequestHandler[] = [...(definition.before ?? [])];
    const reader = request.body ? (request.bodyReader ?? 'json') : 'own';
    if (reader === 'json') handlers.push(requireJson);
    if (reader !== 'own') handlers.push(jsonBody(request.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES));
    const validateBody = request.body && request.validateBody !== false ? request.body : undefined;
    handlers.push(async (req, res) => {
      const input = {
        params: request.params ? parseInput(request.params, req.params, 'path') : undefined,
        query: request.query ? parseInput(request.query, req.query, 'query') : undefined,
        body: validateBody ? parseInput(validateBody, req.body ?? {}) : undefined,
        req,
        res,
      };
      const result = await definition.handle(input);
      if (result !== undefined && !res.headersSent) res.json(result);
    });
    router[definition.method](definition.path, ...handlers);
  }
  return router;
}

/** Documents every route of `routes` under `prefix` (the router's mount point). */
export function documentRoutes(docs: ApiDocs, routes: readonly Route[], prefix = ''): void {
  for (const { definition } of routes) {
    const { request = {} } = definition;
    const documented: NonNullable<Parameters<ApiDocs['register']>[0]['request']> = {};
    if (request.params) documented.params = request.params;
    if (request.query) documented.query = request.query;
    if (request.body) documented.body = request.body;
    if (request.bodyContentType) documented.bodyContentType = request.bodyContentType;
    if (request.headers) documented.headers = request.headers;
    docs.register({
      method: definition.method,
      path: `${prefix}${definition.path}`,
      summary: definition.summary,
      tags: definition.tags,
      responses: definition.responses,
      ...(definition.description ? { description: definition.description } : {}),
      ...(definition.operationId ? { operationId: definition.operationId } : {}),
      ...(definition.security ? { security: definition.security } : {}),
      ...(Object.keys(documented).length ? { request: documented } : {}),
    });
  }
}
