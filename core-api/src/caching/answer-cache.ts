import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';

/**
 * Answers that are aggregates over many members (network and brand analytics, rankings, audiences,
 * suggestions, earnings distributions) computed at most once per `maxAgeSeconds` per input, however many
 * agents ask (docs/agent-api.md, "Freshness"):
 * - fresh (younger than `maxAgeSeconds`): the stored answer;
 * - stale but younger than `STALE_FACTOR × maxAgeSeconds`: the stored answer at once, and one recomputation
 *   in the background (stale-while-revalidate), so a busy answer is never recomputed on a caller's time;
 * - older, or missing: computed now; concurrent callers of one key share the one computation.
 * A failed computation is never stored (the next caller tries again); a failed background refresh keeps the
 * stale answer until it ages out. Brand and rule changes clear everything (compose.ts), so a program change
 * shows at once. At most `maxEntries` answers are kept, the least recently used going first.
 */
export interface AnswerCache {
  get<T>(key: string, maxAgeSeconds: number, compute: () => Promise<T>): Promise<T>;
  /** Drops every answer (a brand or rule changed); computations in flight are not stored. */
  clear(): void;
  readonly size: number;
}

/** A stale answer is still served (while it is recomputed) until it is this many times its max age. */
export const STALE_FACTOR = 3;

interface Entry {
  value?: unknown;
  computedAt?: number;
  pending?: Promise<unknown>;
  generation: number;
}

export function createAnswerCache(options: { clock: Clock; logger: Logger; maxEntries?: number }): AnswerCache {
  const { clock, logger } = options;
  const maxEntries = options.maxEntries ?? 2_000;
  const entries = new Map<string, Entry>();
  let generation = 0;

  const touch = (key: string, entry: Entry) => {
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
    }
  };

  const start = <T>(key: string, entry: Entry, compute: () => Promise<T>): Promise<T> => {
    const startedIn = generation;
    const pending = compute().then(
      (value) => {
        // A clear() during the computation means it may have read what changed: do not keep it.
        if (startedIn === generation && entries.get(key) === entry) {
          entry.value = value;
          entry.computedAt = clock.now().getTime();
        }
        entry.pending = undefined;
        return value;
      },
      (error: unknown) => {
        entry.pending = undefined;
        throw error;
      },
    );
    entry.pending = pending;
    return pending;
  };

  return {
    get size() {
      return entries.size;
    },
    clear() {
      generation++;
      entries.clear();
    },
    async get<T>(key: string, maxAgeSeconds: number, compute: () => Promise<T>): Promise<T> {
      let entry = entries.get(key);
      if (!entry) {
        entry = { generation };
        touch(key, entry);
        return start(key, entry, compute);
      }
      touch(key, entry);
      if (entry.computedAt === undefined) {
        return (entry.pending as Promise<T> | undefined) ?? start(key, entry, compute);
      }
      const age = clock.now().getTime() - entry.computedAt;
      if (age < maxAgeSeconds * 1000) return entry.value as T;
      if (age < STALE_FACTOR * maxAgeSeconds * 1000) {
        if (!entry.pending) {
          start(key, entry, compute).catch((error: unknown) =>
            logger.warn({ err: error, key }, 'could not refresh a cached agent answer; the stale one stays'),
          );
        }
        return entry.value as T;
      }
      return (entry.pending as Promise<T> | undefined) ?? start(key, entry, compute);
    },
  };
}

/** A stable key for a tool's parsed input: object keys sorted, so `{a,b}` and `{b,a}` share an answer. */
export function answerKey(name: string, input: unknown): string {
  return `${name}:${JSON.stringify(input, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : typeof value === 'bigint'
        ? value.toString()
        : value,
  )}`;
}

/**
 * A population read shared by several tools (a brand's window totals, members' earnings), through the
 * process's answer cache under the same max age as the public answers; read directly when that is 0.
 */
export function rememberRead<T>(
  d: { settings: { answerMaxAgeSeconds: number }; agentAnswers: AnswerCache },
  name: string,
  input: unknown,
  read: () => Promise<T>,
): Promise<T> {
  const seconds = d.settings.answerMaxAgeSeconds;
  if (seconds === 0) return read();
  return d.agentAnswers.get(answerKey(name, input), seconds, read);
}
