import type { Clock, CurrencyCode } from '@pts/shared';
import { createKeyedCache } from '../../caching/keyed-cache.ts';
import type { Database } from '../../db/database.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { BrandSecurityKeys } from '../brands/brand-keys.service.ts';
import { loadReferralProgram, type ReferralProgram } from '../referrals/referrals.repository.ts';
import { type BrandTierTable, loadTierTable } from '../tiers/tiers.repository.ts';
import { type BrandRecord, loadBrandDirectory, loadBrandWithRules, type RuleRecord } from './events.repository.ts';
import { type MemberBlock, readBrandBlocks } from './member-blocks.repository.ts';

export interface CachedBrand {
  brand: BrandRecord;
  rulesByType: Map<string, RuleRecord>;
  /**
   * Decrypted once per load so signature checks cost no decryption per request: the current key, and the one
   * the last rotation replaced while its grace lasts (`securityKeysValidAt` decides at each check).
   */
  securityKeys: BrandSecurityKeys;
  /** The members the brand blocked, by identity key: the judge refuses their events (MEMBER_BLOCKED). */
  blockedMembers: Map<string, MemberBlock>;
  /** The brand's VIP tier table (docs/tiers.md), or undefined while it has none. */
  tiers: BrandTierTable | undefined;
  /** The brand's referral program (docs/referrals.md), or undefined while it has none. */
  referrals: ReferralProgram | undefined;
}

export interface BrandDirectory {
  brands: BrandRecord[];
  /** Each brand's rules (inactive ones included), by event type. */
  rulesByBrand: Map<string, RuleRecord[]>;
}

export interface BrandCache {
  get(brandId: string): Promise<CachedBrand | undefined>;
  /**
   * Every brand with its rules, in address order, read in two statements whatever the number of brands and
   * dropped by every change notice (a new brand is announced as one): for answers that scan the network.
   */
  directory(): Promise<BrandDirectory>;
  /** Drops one brand (or all) so the next request reads the database. */
  invalidate(brandId?: string): void;
}

/**
 * Brands and their rules for the hot event path. Entries live `ttlMs` (default 5 s) so replicas pick up
 * changes made elsewhere quickly; changes made through this process invalidate at once. Limits are never
 * read from here: counters are locked in the database.
 */
export function createBrandCache(deps: { db: Database; secrets: SecretBox; clock: Clock; ttlMs: number }): BrandCache {
  // A load that read the brand before a change committed (here, or in another process whose notice arrived
  // while the load ran) does not store what it read: the keyed cache drops loads begun before a forget.
  const cache = createKeyedCache<CachedBrand>({ clock: deps.clock, ttlMs: deps.ttlMs });
  const load = async (brandId: string): Promise<CachedBrand | undefined> => {
    const [loaded, blockedMembers] = await Promise.all([
      loadBrandWithRules(deps.db, brandId),
      readBrandBlocks(deps.db, brandId),
    ]);
    if (!loaded) return undefined;
    const [tiers, referrals] = await Promise.all([
      loadTierTable(deps.db, brandId, loaded.brand.currency as CurrencyCode),
      loadReferralProgram(deps.db, brandId),
    ]);
    return {
      blockedMembers,
      tiers,
      referrals,
      brand: loaded.brand,
      rulesByType: new Map(loaded.rules.map((rule) => [rule.event_type, rule])),
      securityKeys: {
        current: deps.secrets.decrypt(loaded.brand.security_key_encrypted),
        previous:
          loaded.brand.previous_security_key_encrypted && loaded.brand.previous_security_key_expires_at
            ? {
                key: deps.secrets.decrypt(loaded.brand.previous_security_key_encrypted),
                expiresAt: loaded.brand.previous_security_key_expires_at,
              }
            : undefined,
      },
    };
  };
  // The directory: one entry, dropped by every change (a new brand is announced as one).
  const directory = createKeyedCache<BrandDirectory>({ clock: deps.clock, ttlMs: deps.ttlMs });
  const loadDirectory = async (): Promise<BrandDirectory> => {
    const { brands, rules } = await loadBrandDirectory(deps.db);
    const rulesByBrand = new Map<string, RuleRecord[]>(brands.map((brand) => [brand.address, []]));
    for (const rule of rules) rulesByBrand.get(rule.brand_id)?.push(rule);
    return { brands, rulesByBrand };
  };
  return {
    get: (brandId) => cache.get(brandId, () => load(brandId)),
    directory: async () => (await directory.get('all', loadDirectory)) ?? { brands: [], rulesByBrand: new Map() },
    invalidate: (brandId) => {
      cache.forget(brandId);
      directory.forget();
    },
  };
}
