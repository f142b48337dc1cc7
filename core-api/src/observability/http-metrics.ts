import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from './metrics.ts';

/** Route label of requests no route answered (404s, static middleware): one label, bounded cardinality. */
export const UNMATCHED_ROUTE = 'unmatched';

const routeTemplate = Symbol('pts.routeTemplate');
type TrackedRequest = Request & { [routeTemplate]?: string };

/** Mount-path segments that are values rather than names (addresses, uuids, numbers) become `:id`. */
const ID_SEGMENT = /^(0x[0-9a-f]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+)$/i;

function templateOf(baseUrl: string, routePath: unknown): string {
  const mount = baseUrl
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
    .join('/');
  const path = Array.isArray(routePath) ? routePath.join('|') : String(routePath);
  const joined = path === '/' && mount ? mount : `${mount}${path}`;
  return joined || '/';
}

/**
 * Remembers the route template the moment the router assigns `req.route`. Reading `req.route` and
 * `req.baseUrl` only when the response finishes is wrong for errors: by the time an app-level error handler
 * answers, the sub-router has restored `req.baseUrl` to its parent's, so `/admin/brands/:brandId` would be
 * recorded as `/brands/:brandId`.
 */
function trackRouteTemplate(req: TrackedRequest): void {
  let route: unknown = req.route;
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => route,
    set: (value: { path?: unknown } | undefined) => {
      route = value;
      if (value?.path !== undefined) req[routeTemplate] = templateOf(req.baseUrl ?? '', value.path);
    },
  });
}

export interface HttpMetricsOptions {
  metrics: Pick<Metrics, 'httpRequests' | 'httpDuration'>;
  logger: Logger;
}

/**
 * Counts and times every request by method, route template and status, and writes one log line per request
 * (method, route, status, duration; never bodies, query strings or headers): `info` for status >= 400,
 * `debug` otherwise. Mount first, before any router.
 */
export function createHttpMetricsMiddleware({ metrics, logger }: HttpMetricsOptions): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const tracked = req as TrackedRequest;
    trackRouteTemplate(tracked);
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = tracked[routeTemplate] ?? UNMATCHED_ROUTE;
      // A client that hangs up before the response is sent is recorded with status 499 (nginx's convention).
      const status = res.writableFinished ? res.statusCode : 499;
      const labels = { method: req.method, route, status: String(status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      const line = { method: req.method, route, status, durationMs: Math.round(seconds * 1e6) / 1e3 };
      if (status >= 400) logger.info(line, 'request');
      else logger.debug(line, 'request');
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}
