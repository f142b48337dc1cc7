import type { Clock } from '@pts/shared';
import type { Database } from '../../db/database.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { type BrandRecord, loadBrandWithRules, type RuleRecord } from './events.repository.ts';

export interface CachedBrand {
  brand: BrandRecord;
  rulesByType: Map<string, RuleRecord>;
  /** Decrypted once per load so signature checks cost no decryption per request. */
  securityKey: string;
}

export interface BrandCache {
  get(brandId: string): Promise<CachedBrand | undefined>;
  /** Drops one brand (or all) so the next request reads the database. */
  invalidate(brandId?: string): void;
}

/**
 * Brands and their rules for the hot event path. Entries live `ttlMs` (default 5 s) so replicas pick up
 * changes made elsewhere quickly; changes made through this process invalidate at once. Limits are never
 * read from here: counters are locked in the database.
 */
export function createBrandCache(deps: { db: Database; secrets: SecretBox; clock: Clock; ttlMs: number }): BrandCache {
  const entries = new Map<string, { value: CachedBrand; loadedAt: number }>();
  const inflight = new Map<string, Promise<CachedBrand | undefined>>();

  // Bumped by every invalidation: a load that read the brand before a change committed (here, or in another
  // process whose notice arrived while the load ran) must not store what it read.
  let generation = 0;

  const load = async (brandId: string): Promise<CachedBrand | undefined> => {
    const startedAt = generation;
    const loaded = await loadBrandWithRules(deps.db, brandId);
    if (!loaded) return undefined;
    const value: CachedBrand = {
      brand: loaded.brand,
      rulesByType: new Map(loaded.rules.map((rule) => [rule.event_type, rule])),
      securityKey: deps.secrets.decrypt(loaded.brand.security_key_encrypted),
    };
    if (startedAt === generation) entries.set(brandId, { value, loadedAt: deps.clock.now().getTime() });
    return value;
  };

  return {
    async get(brandId) {
      const entry = entries.get(brandId);
      // A clock set back (tests) makes the age negative: such an entry counts as stale.
      const age = entry ? deps.clock.now().getTime() - entry.loadedAt : -1;
      if (entry && age >= 0 && age < deps.ttlMs) return entry.value;
      let pending = inflight.get(brandId);
      if (!pending) {
        const started: Promise<CachedBrand | undefined> = load(brandId).finally(() => {
          if (inflight.get(brandId) === started) inflight.delete(brandId);
        });
        pending = started;
        inflight.set(brandId, started);
      }
      return pending;
    },
    invalidate(brandId) {
      generation += 1;
      if (brandId) {
        entries.delete(brandId);
        inflight.delete(brandId);
      } else {
        entries.clear();
        inflight.clear();
      }
    },
  };
}
