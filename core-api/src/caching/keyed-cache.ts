import type { Clock } from '@pts/shared';

/** Values loaded on demand and kept `ttlMs`; `forget` drops one (or all) at once. */
export interface KeyedCache<V> {
  /** The cached value, or `load()`'s (kept only when defined; concurrent misses share one load). */
  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  forget(key?: string): void;
}

/**
 * A small read-through cache for rows every request reads and that rarely change (agent keys): changes made in
 * this process call `forget`, so they apply at once; other processes' changes apply within `ttlMs` (the same
 * window as the brand cache, PTS_RULE_CACHE_SECONDS). Absent values are never kept, so unknown keys sent by
 * anyone cost a lookup each and no memory. A load that began before a `forget` does not store what it read.
 */
export function createKeyedCache<V>(deps: { clock: Clock; ttlMs: number }): KeyedCache<V> {
  const entries = new Map<string, { value: V; loadedAt: number }>();
  const inflight = new Map<string, Promise<V | undefined>>();
  let generation = 0;
  return {
    async get(key, load) {
      const entry = entries.get(key);
      const age = entry ? deps.clock.now().getTime() - entry.loadedAt : -1;
      if (entry && age >= 0 && age < deps.ttlMs) return entry.value;
      let pending = inflight.get(key);
      if (!pending) {
        const startedAt = generation;
        const started = load()
          .then((value) => {
            if (value !== undefined && startedAt === generation) {
              entries.set(key, { value, loadedAt: deps.clock.now().getTime() });
            }
            return value;
          })
          .finally(() => {
            if (inflight.get(key) === started) inflight.delete(key);
          });
        pending = started;
        inflight.set(key, started);
      }
      return pending;
    },
    forget(key) {
      generation += 1;
      if (key === undefined) {
        entries.clear();
        inflight.clear();
      } else {
        entries.delete(key);
        inflight.delete(key);
      }
    },
  };
}
