import { AppError } from '@pts/shared';
import type { Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** A named limit: `points` per `durationSeconds` for each key. */
export interface RateLimit {
  readonly name: string;
  readonly points: number;
  /** Takes `cost` points for `key`; sets X-RateLimit-* headers; throws 429 RATE_LIMIT_EXCEEDED when spent. */
  consume(res: Response, key: string, cost?: number, options?: { headers?: boolean }): Promise<void>;
}

/**
 * In-process fixed-window counters. One process is exact; replicas each count their own share
 * (docs/decisions.md: a shared PostgreSQL or Redis store is the scale-out path).
 */
export function createRateLimit(options: { name: string; points: number; durationSeconds: number }): RateLimit {
  const limiter = new RateLimiterMemory({
    keyPrefix: options.name,
    points: options.points,
    duration: options.durationSeconds,
  });
  const setHeaders = (res: Response, state: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(options.points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + state.msBeforeNext) / 1000)));
  };
  return {
    name: options.name,
    points: options.points,
    async consume(res, key, cost = 1, consumeOptions = {}) {
      const withHeaders = consumeOptions.headers ?? true;
      try {
        const state = await limiter.consume(key, cost);
        if (withHeaders) setHeaders(res, state);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        setHeaders(res, rejection);
        const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new AppError(
          'RATE_LIMIT_EXCEEDED',
          `Rate limit exceeded: at most ${options.points} requests per ${options.durationSeconds} s per ${options.name}; retry in ${retryAfter} s`,
          {
            message: `Too many requests for this ${options.name}`,
            reason: 'rate_limit_exceeded',
            limit: options.points,
            windowSeconds: options.durationSeconds,
          },
          { retryAfter },
        );
      }
    },
  };
}
