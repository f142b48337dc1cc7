import type { RequestHandler } from 'express';
import type { RateLimit } from '../../http/rate-limit.ts';

/**
 * The relayer host's per-IP limit, before any work: headers only when it refuses (a successful relay answers
 * with the per-user quota's headers instead).
 */
export function limitIp(limit: RateLimit): RequestHandler {
  return async (req, res, next) => {
    try {
      await limit.consume(res, req.ip ?? 'unknown', 1, { headers: false });
      next();
    } catch (error) {
      next(error);
    }
  };
}
