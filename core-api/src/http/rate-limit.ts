import { AppError, type Clock, systemClock } from '@pts/shared';
import type { Response } from 'express';
import pg from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';

/** A named limit: `points` per `durationSeconds` for each key. */
export interface RateLimit {
  readonly name: string;
  readonly points: number;
  /** Takes `cost` points for `key`; sets X-RateLimit-* headers; throws 429 RATE_LIMIT_EXCEEDED when spent. */
  consume(res: Response, key: string, cost?: number, options?: { headers?: boolean }): Promise<void>;
}

/** Fixed-window counters of rate-limiter-flexible, held in this process or shared by every process. */
export interface RateLimitStore {
  /** `postgres`: every process on the database counts against the same windows. */
  readonly kind: 'memory' | 'postgres';
  /** A limiter over this store; `keyPrefix` must be unique per limit (it names the limit's rows). */
  limiter(options: { keyPrefix: string; points: number; durationSeconds: number }): RateLimiterAbstract;
}

/** Counters in this process: exact for one process (PGlite runs in one). */
export function createMemoryRateLimitStore(): RateLimitStore {
  return {
    kind: 'memory',
    limiter: ({ keyPrefix, points, durationSeconds }) =>
      new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds }),
  };
}

const INT8_OID = 20;

/** The table of the shared counters (migration 2026_11_24_0200_rate_limits). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * Counters in PostgreSQL, shared by every core-api process on the database: one atomic upsert per request
 * (`INSERT … ON CONFLICT DO UPDATE … RETURNING`). If the database does not answer, each process falls back
 * to counting in memory (the insurance limiter) rather than failing the request it limits.
 */
export function createPostgresRateLimitStore(
  pool: pg.Pool,
  options: {
    /** Hears why the store failed (the limits then count in memory); called at most once per 10 s. */
    onStoreError?: (error: unknown) => void;
  } = {},
): RateLimitStore {
  let quiet = false;
  const reportError = (error: unknown) => {
    if (quiet || !options.onStoreError) return;
    quiet = true;
    setTimeout(() => {
      quiet = false;
    }, 10_000).unref();
    options.onStoreError(error);
  };
  // The process reads int8 as BigInt (db/database.ts); the library does arithmetic on `expire` (epoch ms,
  // exact as a number), so its queries read int8 as numbers.
  const numericTypes = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format),
  };
  const storeClient = {
    query: (query: pg.QueryConfig) =>
      pool.query({ ...query, types: numericTypes } as pg.QueryConfig).catch((error: unknown) => {
        reportError(error);
        throw error;
      }),
  };
  return {
    kind: 'postgres',
    limiter: ({ keyPrefix, points, durationSeconds }) =>
      new RateLimiterPostgres({
        storeClient,
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        // The migration created it: no CREATE TABLE race between replicas starting together.
        tableCreated: true,
        keyPrefix,
        points,
        duration: durationSeconds,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds }),
      }),
  };
}

export interface RateLimitOptions {
  /** Named in the 429 message ("per brand"). */
  name: string;
  /** Names the limit's counters in the store; defaults to `name`. Two limits must not share one. */
  keyPrefix?: string;
  points: number;
  durationSeconds: number;
  /** Where the counters live; in this process by default. */
  store?: RateLimitStore;
  /** Time for X-RateLimit-Reset. The store's windows run on the system time (the library reads it itself). */
  clock?: Clock;
}

/**
 * Fixed-window counters per key. In memory, one process is exact; with the PostgreSQL store every replica
 * counts against the same window (docs/operations.md, "Several processes").
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  const store = options.store ?? createMemoryRateLimitStore();
  const clock = options.clock ?? systemClock;
  const limiter = store.limiter({
    keyPrefix: options.keyPrefix ?? options.name,
    points: options.points,
    durationSeconds: options.durationSeconds,
  });
  // In memory a consume costs nothing; in PostgreSQL each is a committed upsert of one hot row per key.
  const consumeKey =
    store.kind === 'postgres'
      ? createGroupedConsume(limiter, options.points)
      : (key: string, cost: number) => limiter.consume(key, cost);
  const setHeaders = (res: Response, state: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(options.points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((clock.now().getTime() + state.msBeforeNext) / 1000)));
  };
  return {
    name: options.name,
    points: options.points,
    async consume(res, key, cost = 1, consumeOptions = {}) {
      const withHeaders = consumeOptions.headers ?? true;
      try {
        const state = await consumeKey(key, cost);
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

interface WaitingConsume {
  cost: number;
  resolve: (state: RateLimiterRes) => void;
  reject: (error: unknown) => void;
}

/**
 * Points a process takes from the shared counter beyond what its waiting consumes need: 1% of the limit
 * (none below 200 points a window). They are counted as used in the shared store at once and handed out
 * here without a round trip until the window ends; what is left at the end of a window is lost, so with N
 * processes a key can be refused at most (N − 1) × (lease − 1) points early — never let through late.
 */
export function leaseSizeFor(points: number): number {
  return Math.max(1, Math.floor(points / 100));
}

/** Per key: the consumes waiting for an upsert, and the points already taken from the store and not yet handed out. */
interface KeyState {
  waiting: WaitingConsume[];
  busy: boolean;
  /** Points counted in the store for this process and not handed out yet. */
  surplus: number;
  /** Points handed out in the window as far as this process knows (other processes' surpluses count as used). */
  used: number;
  /** When the window of the surplus ends (epoch ms, the store's own clock: the system time). */
  windowEnd: number;
  firstInDuration: boolean;
}

/** Sweep keys whose window has ended once the map holds this many (IP limits see many keys). */
const SWEEP_AT_KEYS = 10_000;

/**
 * Group commit with leases for a shared counter. The consumes of one key that arrive while its previous
 * upsert is in flight (or in the same event-loop turn) go to the database as ONE upsert of their summed
 * cost, plus a lease (leaseSizeFor) of points this process then hands out locally, in arrival order,
 * without a round trip until the lease or the window runs out. The upsert returns the window's total;
 * each consume is accepted while the points below the limit last — what the same consumes one by one
 * would have answered. Each key has at most one upsert in flight per process.
 */
export function createGroupedConsume(
  limiter: RateLimiterAbstract,
  points: number,
  leaseSize = leaseSizeFor(points),
  now: () => number = Date.now,
): (key: string, cost: number) => Promise<RateLimiterRes> {
  const keys = new Map<string, KeyState>();
  const extra = leaseSize > 1 ? leaseSize : 0;

  const stateOf = (state: KeyState, used: number, at: number) =>
    new RateLimiterRes(Math.max(0, points - used), Math.max(0, state.windowEnd - at), used, state.firstInDuration);

  let sweptAt = 0;
  const sweep = (at: number) => {
    // At most once a second: with more live keys than SWEEP_AT_KEYS a sweep per flush would cost O(keys).
    if (at - sweptAt < 1_000) return;
    sweptAt = at;
    for (const [key, state] of keys) {
      if (!state.busy && state.waiting.length === 0 && state.windowEnd <= at) keys.delete(key);
    }
  };

  const flush = async (key: string) => {
    const state = keys.get(key);
    if (!state || state.busy) return;
    const group = state.waiting.splice(0);
    if (group.length === 0) {
      // Kept while its window runs, lease or not: its end is what a refusal names (sweep drops ended ones).
      if (state.windowEnd <= now()) keys.delete(key);
      return;
    }
    state.busy = true;
    // A surplus of a window still running serves this group first; only the rest is asked for.
    const held = state.windowEnd > now() ? state.surplus : 0;
    state.surplus = 0;
    const total = group.reduce((sum, item) => sum + item.cost, 0);
    const ask = Math.max(0, total - held) + extra;
    let after: RateLimiterRes | undefined;
    try {
      after = await limiter.consume(key, ask);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) after = rejection;
      else for (const item of group) item.reject(rejection);
    }
    if (after) {
      const at = now();
      // A new window in the store: what this process held belonged to the one that ended.
      const carried = after.isFirstInDuration ? 0 : held;
      const before = after.consumedPoints - ask;
      // Points of this upsert that fall within the limit, plus what this process already held.
      let available = carried + Math.max(0, Math.min(ask, points - before));
      let used = before - carried;
      // The store's windows only move forward, so an earlier end than the one already seen comes from the
      // in-memory fallback (its windows start when the store first failed): a refusal then names the shared
      // window's end, the earliest a retry can pass once the store answers again (issue 26 item 6).
      state.windowEnd = Math.max(at + after.msBeforeNext, after.isFirstInDuration ? 0 : state.windowEnd);
      state.firstInDuration = after.isFirstInDuration;
      for (const item of group) {
        if (item.cost <= available) {
          available -= item.cost;
          used += item.cost;
          item.resolve(stateOf(state, used, at));
        } else {
          // Refused: the later, cheaper consumes of the group do not jump ahead of it.
          available = 0;
          item.reject(stateOf(state, used + item.cost, at));
        }
      }
      state.surplus = available;
      state.used = used;
    }
    state.busy = false;
    if (keys.size >= SWEEP_AT_KEYS) sweep(now());
    void flush(key);
  };

  return (key, cost) => {
    let state = keys.get(key);
    if (!state) {
      state = { waiting: [], busy: false, surplus: 0, used: 0, windowEnd: 0, firstInDuration: false };
      keys.set(key, state);
    }
    const at = now();
    // Served from this process's lease: no round trip.
    if (state.waiting.length === 0 && state.surplus >= cost && state.windowEnd > at) {
      state.surplus -= cost;
      state.used += cost;
      return Promise.resolve(stateOf(state, state.used, at));
    }
    const queued = state;
    return new Promise<RateLimiterRes>((resolve, reject) => {
      queued.waiting.push({ cost, resolve, reject });
      // Consumes of the same turn join this group; a busy key flushes again when its upsert returns.
      if (!queued.busy && queued.waiting.length === 1) setImmediate(() => void flush(key));
    });
  };
}
