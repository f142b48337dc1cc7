import type { RequestHandler } from 'express';

/**
 * Headers every answer carries: `nosniff` so a browser never reads a JSON answer (which may echo user
 * text) as HTML or script.
 */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};
