import type { RequestHandler } from 'express';

/**
 * Headers every answer carries: `nosniff` so a browser never reads a JSON answer (which may echo user
 * text) as HTML or script.
 */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

/**
 * `Cache-Control: no-store` on every answer of a router whose answers are a signed-in person's data (the
 * portal's JSON API): no browser or shared cache keeps a copy after sign-out.
 */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** Runs `handler` on every request except those under `prefix` (the path itself or `prefix/…`). */
export function skipUnder(prefix: string, handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (req.path === prefix || req.path.startsWith(`${prefix}/`)) {
      next();
      return;
    }
    return handler(req, res, next);
  };
}
