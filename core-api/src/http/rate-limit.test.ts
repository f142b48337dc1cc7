import { createManualClock, isAppError } from '@pts/shared';
import type { Response } from 'express';
import pg from 'pg';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import {
  createGroupedConsume,
  createMemoryRateLimitStore,
  createPostgresRateLimitStore,
  createRateLimit,
  leaseSizeFor,
  type RateLimit,
  type RateLimitStore,
} from './rate-limit.ts';

/** The headers a limit sets, captured the way Express's `res.setHeader` receives them. */
function recordingResponse(): Response & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  return {
    headers,
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = value;
      return this;
    },
  } as unknown as Response & { headers: Record<string, string> };
}

/** Consumes once; answers `ok`, or the 429's retryAfter. */
async function attempt(limit: RateLimit, key: string): Promise<{ ok: boolean; retryAfter?: number }> {
  try {
    await limit.consume(recordingResponse(), key);
    return { ok: true };
  } catch (error) {
    if (isAppError(error) && error.code === 'RATE_LIMIT_EXCEEDED') {
      return { ok: false, retryAfter: (error as { retryAfter?: number }).retryAfter ?? 0 };
    }
    throw error;
  }
}

describe('rate limits in memory', () => {
  it('sets X-RateLimit-* from the injected clock and refuses the point after the last with Retry-After', async () => {
    const clock = createManualClock('2030-01-01T00:00:00Z');
    const limit = createRateLimit({ name: 'brand', points: 2, durationSeconds: 60, clock });
    const res = recordingResponse();
    await limit.consume(res, 'b1');
    expect(res.headers['x-ratelimit-limit']).toBe('2');
    expect(res.headers['x-ratelimit-remaining']).toBe('1');
    // The window ends 60 s after the clock's time, not the machine's.
    expect(Number(res.headers['x-ratelimit-reset'])).toBe(Date.parse('2030-01-01T00:01:00Z') / 1000);
    await limit.consume(res, 'b1');
    const refused = recordingResponse();
    await expect(limit.consume(refused, 'b1')).rejects.toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      retryAfter: 60,
      details: { reason: 'rate_limit_exceeded', limit: 2, windowSeconds: 60 },
    });
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect((await attempt(limit, 'b2')).ok).toBe(true);
  });

  it('keeps two processes apart: each counts only its own share', async () => {
    const [a, b] = [createMemoryRateLimitStore(), createMemoryRateLimitStore()].map((store) =>
      createRateLimit({ name: 'brand', points: 3, durationSeconds: 60, store }),
    );
    const results = [];
    for (let i = 0; i < 6; i++) results.push((await attempt(i % 2 === 0 ? a! : b!, 'brand-x')).ok);
    expect(results.filter(Boolean)).toHaveLength(6);
  });
});

/**
 * A pool whose idle clients may be cut by the server without an uncaught error: the test database is
 * dropped WITH (FORCE) at the end, which terminates a connection the store still holds ('error' event).
 */
function quietPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => {});
  return pool;
}

/** A store's limiter (shared by "processes") that counts its round trips. */
function countingLimiter(points: number, durationSeconds = 60) {
  const limiter = new RateLimiterMemory({ points, duration: durationSeconds });
  const counted = { calls: 0, asked: 0 };
  const consume = limiter.consume.bind(limiter);
  limiter.consume = (key, cost = 1, options) => {
    counted.calls += 1;
    counted.asked += Number(cost);
    return consume(key, cost, options);
  };
  return { limiter, counted };
}

async function outcome(consume: (key: string, cost: number) => Promise<RateLimiterRes>, key: string) {
  try {
    return { ok: true, state: await consume(key, 1) };
  } catch (error) {
    if (error instanceof RateLimiterRes) return { ok: false, state: error };
    throw error;
  }
}

describe('leased consumes of a shared counter', () => {
  it('leases 1% of a limit of 200 points or more, nothing below', () => {
    expect([20, 100, 199, 200, 1000, 100_000].map(leaseSizeFor)).toEqual([1, 1, 1, 2, 10, 1000]);
  });

  it('hands out a lease without a round trip, with exact remaining points', async () => {
    const { limiter, counted } = countingLimiter(1000);
    const consume = createGroupedConsume(limiter, 1000);
    const remaining = [];
    for (let i = 0; i < 25; i++) remaining.push((await consume('k', 1)).remainingPoints);
    expect(remaining).toEqual(Array.from({ length: 25 }, (_, i) => 999 - i));
    // Three upserts of 1 + a lease of 10: at the 1st, 12th and 23rd consume.
    expect(counted).toEqual({ calls: 3, asked: 33 });
  });

  it('accepts exactly the limit in one process, in bursts from many callers', async () => {
    const { limiter, counted } = countingLimiter(300);
    const consume = createGroupedConsume(limiter, 300);
    let accepted = 0;
    for (let burst = 0; burst < 10; burst++) {
      const results = await Promise.all(Array.from({ length: 50 }, () => outcome(consume, 'k')));
      accepted += results.filter((r) => r.ok).length;
    }
    expect(accepted).toBe(300);
    expect(counted.calls).toBeLessThan(300 / 3);
  });

  it('never lets several processes through past the limit, and loses at most (N − 1) × (lease − 1) points', async () => {
    const { limiter } = countingLimiter(300);
    const processes = [0, 1, 2].map(() => createGroupedConsume(limiter, 300));
    const results = await Promise.all(
      Array.from({ length: 900 }, (_, i) => outcome(processes[i % 3] as (typeof processes)[0], 'k')),
    );
    const accepted = results.filter((r) => r.ok).length;
    expect(accepted).toBeLessThanOrEqual(300);
    expect(accepted).toBeGreaterThanOrEqual(300 - 2 * (leaseSizeFor(300) - 1));
    for (const refused of results.filter((r) => !r.ok)) expect(refused.state.remainingPoints).toBe(0);
  });

  it('drops what is left of a lease when its window ends', async () => {
    const { limiter, counted } = countingLimiter(500, 1);
    const consume = createGroupedConsume(limiter, 500);
    expect((await consume('k', 1)).remainingPoints).toBe(499);
    expect(counted.calls).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // A new window: the next consume asks the store again and starts from the whole limit.
    expect((await consume('k', 1)).remainingPoints).toBe(499);
    expect(counted.calls).toBe(2);
  });
});

describe.runIf(testDatabaseKind === 'postgres')('rate limits shared through PostgreSQL', () => {
  let database: TestDatabase;
  const pools: pg.Pool[] = [];
  const storeOfNewProcess = (errors: unknown[] = []): RateLimitStore => {
    // Each "process" has its own pool on the same database, as replicas do.
    const pool = quietPool({ connectionString: database.url, max: 4 });
    pools.push(pool);
    return createPostgresRateLimitStore(pool, { onStoreError: (error) => errors.push(error) });
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await database?.close();
  });

  it('holds one window across three processes under concurrency', async () => {
    const errors: unknown[] = [];
    const limits = [storeOfNewProcess(errors), storeOfNewProcess(errors), storeOfNewProcess(errors)].map((store) =>
      createRateLimit({ name: 'brand', keyPrefix: 'brand-shared', points: 10, durationSeconds: 60, store }),
    );
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(limits[i % 3]!, 'brand-y')));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    for (const refused of results.filter((r) => !r.ok)) {
      expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfter).toBeLessThanOrEqual(60);
    }
    // Another key has its own window; another limit (prefix) its own counters.
    expect((await attempt(limits[0]!, 'brand-z')).ok).toBe(true);
    // The database counted: the in-memory fallback never took over.
    expect(errors).toEqual([]);
    const other = createRateLimit({
      name: 'ip',
      keyPrefix: 'ip-shared',
      points: 1,
      durationSeconds: 60,
      store: storeOfNewProcess(),
    });
    expect((await attempt(other, 'brand-y')).ok).toBe(true);
    const { rows } = await pools[0]!.query<{ key: string; points: number }>(
      "SELECT key, points FROM rate_limits WHERE key = 'brand-shared:brand-y'",
    );
    expect(rows).toEqual([{ key: 'brand-shared:brand-y', points: 30 }]);
  });

  it('sends the concurrent consumes of one key in one upsert, accepting exactly as many as one by one would', async () => {
    const pool = quietPool({ connectionString: database.url, max: 4 });
    pools.push(pool);
    let queries = 0;
    const counting = {
      query: (...args: Parameters<pg.Pool['query']>) => {
        queries += 1;
        return (pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    const limit = createRateLimit({
      name: 'brand',
      keyPrefix: 'brand-grouped',
      points: 7,
      durationSeconds: 60,
      store: createPostgresRateLimitStore(counting),
    });
    const results = await Promise.all(Array.from({ length: 25 }, () => attempt(limit, 'brand-g')));
    expect(results.filter((r) => r.ok)).toHaveLength(7);
    // The first seven in arrival order are the accepted ones.
    expect(results.slice(0, 7).every((r) => r.ok)).toBe(true);
    expect(queries).toBe(1);
    const { rows } = await pool.query<{ points: number }>(
      "SELECT points FROM rate_limits WHERE key = 'brand-grouped:brand-g'",
    );
    expect(rows[0]?.points).toBe(25);
  });

  it('with leases (a limit of 300), three processes under concurrency never pass the limit', async () => {
    const limits = [storeOfNewProcess(), storeOfNewProcess(), storeOfNewProcess()].map((store) =>
      createRateLimit({ name: 'agent key', keyPrefix: 'leased-shared', points: 300, durationSeconds: 60, store }),
    );
    const results = await Promise.all(Array.from({ length: 600 }, (_, i) => attempt(limits[i % 3]!, 'key-l')));
    const accepted = results.filter((r) => r.ok).length;
    expect(accepted).toBeLessThanOrEqual(300);
    expect(accepted).toBeGreaterThanOrEqual(300 - 2 * (leaseSizeFor(300) - 1));
  });

  it('never answers a Retry-After shorter than the shared window while the store falls back to memory for a moment', async () => {
    // Issue 26 item 6: the in-memory fallback (the insurance limiter) keeps windows of its own, started
    // when the store first failed; a refusal it gave answered with its own window's end (1 s) while the
    // shared window still ran for most of a minute.
    const pool = quietPool({ connectionString: database.url, max: 4 });
    pools.push(pool);
    let storeDown = false;
    const flaky = {
      query: (...args: Parameters<pg.Pool['query']>) =>
        storeDown
          ? Promise.reject(new Error('timeout exceeded when trying to connect'))
          : (pool.query as (...a: unknown[]) => unknown)(...args),
    } as unknown as pg.Pool;
    const limit = createRateLimit({
      name: 'brand',
      keyPrefix: 'brand-fallback',
      points: 2,
      durationSeconds: 4,
      store: createPostgresRateLimitStore(flaky),
    });
    // The store fails once: the fallback's window starts now and ends in 4 s.
    storeDown = true;
    expect((await attempt(limit, 'brand-f')).ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    // The store is back: its window starts now (4 s) and takes both points.
    storeDown = false;
    expect((await attempt(limit, 'brand-f')).ok).toBe(true);
    expect((await attempt(limit, 'brand-f')).ok).toBe(true);
    // It fails again: the fallback's own window has ~1.5 s left, the shared one ~4 s.
    storeDown = true;
    await attempt(limit, 'brand-f');
    const refused = await attempt(limit, 'brand-f');
    expect(refused.ok).toBe(false);
    expect(refused.retryAfter).toBeGreaterThanOrEqual(3);
  });

  it('counts in memory when the database does not answer, instead of failing the request', async () => {
    const dead = quietPool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', max: 1 });
    pools.push(dead);
    const errors: unknown[] = [];
    const limit = createRateLimit({
      name: 'brand',
      points: 2,
      durationSeconds: 60,
      store: createPostgresRateLimitStore(dead, { onStoreError: (error) => errors.push(error) }),
    });
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await attempt(limit, 'brand-offline')).ok);
    expect(results).toEqual([true, true, false]);
    // Said once, not per request.
    expect(errors).toHaveLength(1);
  });
});
