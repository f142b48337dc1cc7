import type { Clock } from '@pts/shared';

/**
 * Member answers kept between calls (docs/ledger.md, "Cached member answers"): the agent's member tools
 * answer a repeated question about the same member from memory, with no database round trip, until a write
 * touches that member. Every table a member answer reads has statement-level triggers (migration
 * 2026_12_04_h01) that announce, at commit, the members, wallets and brands the statement touched on the
 * channel {@link MEMBER_CHANGES_CHANNEL}; each process hears it (PostgreSQL: the change listener's dedicated
 * connection; PGlite: the instance's own `listen`) and drops the entries that depend on any of them.
 *
 * An entry depends on tokens, the same strings the triggers send:
 * - `m:<key>`: a member identity or account key (events, redemptions, streaks, achievements, links, users);
 * - `w:<wallet>`: a wallet (reward mints, redemptions, users);
 * - `b:<brand>`: a brand's streak or achievement settings;
 * - `p:<brand>`: the brand's perks (terms, supply: anyone's redemption);
 * - `p:*` ({@link ANY_PERKS_TOKEN}): any brand's perks — dropped by every `p:<brand>` (an answer over the
 *   whole network's catalogue, such as find_deals for a member);
 * - `k:<keyId>`: an agent key's rewards (events it brought, its claims and onboardings; migration 2026_12_05_r01).
 *
 * It is also dropped at its deadline (a streak lapsing, the UTC day turning, a perk window opening or
 * closing), after the maximum age, when it holds a chain read and the chain head it was read at moved, and by
 * any brand change (names, rules). While the notices cannot be heard (listener not connected yet, or
 * reconnecting) nothing is kept or served: every call reads the database.
 */
export const MEMBER_CHANGES_CHANNEL = 'pts_member_changes';

/** A notice's token that drops everything (a statement touched more members than a notice carries). */
const FLUSH_ALL = '*';

export const memberToken = (key: string) => `m:${key.toLowerCase()}`;
export const walletToken = (wallet: string) => `w:${wallet.toLowerCase()}`;
export const brandSettingsToken = (brandId: string) => `b:${brandId.toLowerCase()}`;
export const brandPerksToken = (brandId: string) => `p:${brandId.toLowerCase()}`;
/** Depends on every brand's perks: any `p:<brand>` drops it. */
export const ANY_PERKS_TOKEN = 'p:*';
export const agentKeyToken = (keyId: string) => `k:${keyId.toLowerCase()}`;
/** A brand's leaderboards (their aggregates and display names: migration 2026_12_05_s01). */
export const leaderboardToken = (brandId: string) => `l:${brandId.toLowerCase()}`;
/** Every leaderboard (usernames any board may show: oauth_identities). */
export const ANY_LEADERBOARD_TOKEN = 'l:*';

/** The tokens a notice drops: its own, and {@link ANY_PERKS_TOKEN} when it names a brand's perks. */
function withDerived(tokens: string[]): string[] {
  return tokens.some((token) => token.startsWith('p:')) ? [...tokens, ANY_PERKS_TOKEN] : tokens;
}

/**
 * Where the notices come from: the process's change listener feeds `notice` with each payload and `listening`
 * with its connection state (modules/brands/brand-changes.postgres.ts `channels`; PGlite's `listen`).
 */
export interface MemberChangeFeed {
  readonly channel: string;
  /** Whether notices are heard now: when false, every member answer is read afresh and none is kept. */
  readonly listening: boolean;
  /** A payload of the channel: tokens separated by newlines, or `*`. */
  notice(payload: string | undefined): void;
  /** The listener connected (true) or lost its connection (false: everything kept is dropped). */
  setListening(listening: boolean): void;
  /** Hears dropped tokens (`undefined`: everything); returns the function that stops hearing. */
  subscribe(listener: (tokens: string[] | undefined) => void): () => void;
}

export function createMemberChangeFeed(): MemberChangeFeed {
  const listeners = new Set<(tokens: string[] | undefined) => void>();
  let listening = false;
  const deliver = (tokens: string[] | undefined) => {
    for (const listener of [...listeners]) listener(tokens);
  };
  return {
    channel: MEMBER_CHANGES_CHANNEL,
    get listening() {
      return listening;
    },
    notice(payload) {
      const tokens = (payload ?? '').split('\n').filter((token) => token.length > 0);
      deliver(tokens.includes(FLUSH_ALL) || tokens.length === 0 ? undefined : tokens);
    },
    setListening(next) {
      listening = next;
      // Notices may have been missed while down, and are missed from now on: nothing kept can be trusted.
      deliver(undefined);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** What a computation returns: the answer and what it depends on. */
export interface MemberAnswer<T> {
  value: T;
  /** The tokens whose change makes the answer wrong (memberToken, walletToken, …). */
  tokens: string[];
  /** The first moment the answer changes by time alone (a streak's expiry, the next UTC day, a perk window). */
  validUntil?: Date | undefined;
  /** The answer holds an on-chain read: it is kept only while the chain head it was read at is current. */
  chain?: boolean;
  /** false: served once, never kept (a state that moves without a write, e.g. a mint sent and not mined). */
  keep?: boolean;
}

export interface MemberAnswers {
  /**
   * The kept answer for `key`, or `compute()`'s, kept when nothing it depends on changed while it was
   * computed. `key` names the question fully: tool, brands, member, arguments.
   */
  answer<T>(key: string, compute: () => Promise<MemberAnswer<T>>): Promise<T>;
  /** Drops every entry (a brand change: names and rules are in the answers). */
  clear(): void;
  readonly size: number;
  /** Whether answers are kept now (the notices are heard and the bounds are not 0). */
  readonly keeping: boolean;
}

export interface MemberAnswersOptions {
  clock: Clock;
  feed: MemberChangeFeed;
  /** Most entries kept (least recently used go first); 0 keeps none. */
  maxEntries: number;
  /** Longest an entry is kept, whatever else (milliseconds). */
  maxAgeMs: number;
  /** The chain head reads are answered at (chain/chain-reads.ts `head`); undefined: not following blocks. */
  chainHead: () => bigint | undefined;
}

interface Entry {
  value: unknown;
  tokens: string[];
  expiresAt: number;
  head: bigint | undefined;
}

export function createMemberAnswers(options: MemberAnswersOptions): MemberAnswers {
  const { clock, feed, maxEntries, maxAgeMs, chainHead } = options;
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least recently used.
  const entries = new Map<string, Entry>();
  const byToken = new Map<string, Set<string>>();
  /**
   * Bumped by every drop, whose tokens are remembered a while (`recent`): a computation that overlapped a drop
   * of one of its tokens is not kept, since it may have read before that write.
   */
  let generation = 0;
  const recent: { generation: number; tokens: Set<string> | undefined }[] = [];
  const RECENT_DROPS = 1_000;
  const dropped = (tokens: string[] | undefined) => {
    generation += 1;
    recent.push({ generation, tokens: tokens && new Set(tokens) });
    if (recent.length > RECENT_DROPS) recent.splice(0, recent.length - RECENT_DROPS);
  };
  /** Whether a drop since `since` touched one of `tokens` (or everything, or is forgotten already). */
  const droppedSince = (since: number, tokens: string[]) => {
    if (generation === since) return false;
    const oldest = recent[0]?.generation ?? generation + 1;
    if (oldest > since + 1) return true;
    for (let index = recent.length - 1; index >= 0; index -= 1) {
      const drop = recent[index] as (typeof recent)[number];
      if (drop.generation <= since) break;
      if (!drop.tokens || tokens.some((token) => drop.tokens?.has(token))) return true;
    }
    return false;
  };

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    for (const token of entry.tokens) {
      const keys = byToken.get(token);
      keys?.delete(key);
      if (keys?.size === 0) byToken.delete(token);
    }
  };
  const clear = () => {
    dropped(undefined);
    entries.clear();
    byToken.clear();
  };
  feed.subscribe((heard) => {
    if (heard === undefined) {
      clear();
      return;
    }
    const tokens = withDerived(heard);
    dropped(tokens);
    for (const token of tokens) {
      const keys = byToken.get(token);
      if (keys) for (const key of [...keys]) remove(key);
    }
  });

  const keeping = () => maxEntries > 0 && maxAgeMs > 0 && feed.listening;

  return {
    async answer<T>(key: string, compute: () => Promise<MemberAnswer<T>>): Promise<T> {
      const now = clock.now().getTime();
      const kept = entries.get(key);
      if (kept) {
        if (keeping() && kept.expiresAt > now && (kept.head === undefined || kept.head === chainHead())) {
          entries.delete(key);
          entries.set(key, kept);
          return kept.value as T;
        }
        remove(key);
      }
      const startedAt = generation;
      const head = chainHead();
      const result = await compute();
      const tokens = [...new Set(result.tokens)];
      if (result.keep === false || !keeping() || droppedSince(startedAt, tokens)) return result.value;
      if (result.chain && (head === undefined || chainHead() !== head)) return result.value;
      const expiresAt = Math.min(now + maxAgeMs, result.validUntil?.getTime() ?? Number.POSITIVE_INFINITY);
      if (expiresAt <= clock.now().getTime()) return result.value;
      remove(key);
      while (entries.size >= maxEntries) {
        const oldest = entries.keys().next().value as string;
        remove(oldest);
      }
      entries.set(key, { value: result.value, tokens, expiresAt, head: result.chain ? head : undefined });
      for (const token of tokens) {
        let keys = byToken.get(token);
        if (!keys) {
          keys = new Set();
          byToken.set(token, keys);
        }
        keys.add(key);
      }
      return result.value;
    },
    clear,
    get size() {
      return entries.size;
    },
    get keeping() {
      return keeping();
    },
  };
}

/** The start of the next UTC day after `now`: `checkedInToday` and the day's streak figures change there. */
export function nextUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/**
 * The latest moment an answer over a sliding window (the last 30 days up to `now`, stated as its `basis.to`)
 * is kept (docs/decisions.md, "Windowed member answers"): `maxAgeSeconds` after it was computed, the
 * population figures' own bound (PTS_AGENT_ANSWER_MAX_AGE_SECONDS); 0 keeps none. A write that touches the
 * member or the perks shown drops it before.
 */
export function windowKeptUntil(now: Date, maxAgeSeconds: number): Date {
  return new Date(now.getTime() + maxAgeSeconds * 1000);
}

/** The earliest of `moments` after `now` (ISO strings, Dates or null); undefined when none is. */
export function earliestAfter(now: Date, moments: (Date | string | null | undefined)[]): Date | undefined {
  let earliest: number | undefined;
  for (const moment of moments) {
    if (moment === null || moment === undefined) continue;
    const at = typeof moment === 'string' ? Date.parse(moment) : moment.getTime();
    if (Number.isNaN(at) || at <= now.getTime()) continue;
    if (earliest === undefined || at < earliest) earliest = at;
  }
  return earliest === undefined ? undefined : new Date(earliest);
}
