import type { NextFunction, Request, RequestHandler, Response } from 'express';

// Helpers of the seed adapters (docs/compatibility.md): they map a request before pts's router runs, or add
// fields to its answer.

export type Json = Record<string, unknown>;

/**
 * Adds fields to a successful JSON answer of the route that runs next (errors pass untouched). An adapter
 * that recognised a seed client's own request marks it (`markSeedRequest`); `add` may then give a field the
 * seed's own type where pts's differs (docs/compatibility.md).
 */
export function decorate(add: (body: Json, req: Request, res: Response) => Json): RequestHandler {
  return (req, res, next) => {
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode < 400 && body && typeof body === 'object' && (body as Json).success === true) {
        return send({ ...(body as Json), ...add(body as Json, req, res) });
      }
      return send(body);
    };
    next();
  };
}

/** Rewrites the query string the next router sees (the signature covers the original URL, which stays). */
export function rewriteQuery(req: Request, change: (params: URLSearchParams) => void): void {
  const [path, query = ''] = req.url.split('?', 2) as [string, string | undefined];
  const params = new URLSearchParams(query);
  change(params);
  const text = params.toString();
  req.url = text ? `${path}?${text}` : path;
}

export const asyncHandler =
  (handler: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    handler(req, res, next).catch(next);
  };

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Marks the request as the seed client's own shape (recognised by its vocabulary), for the answer's decorator. */
export function markSeedRequest(res: Response): void {
  res.locals.seedRequest = true;
}

export function isSeedRequest(res: Response): boolean {
  return res.locals.seedRequest === true;
}
