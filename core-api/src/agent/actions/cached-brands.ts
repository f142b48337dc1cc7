import type { CachedBrand } from '../../modules/events/brand-cache.ts';
import type { AgentToolDeps } from '../agent-tool.ts';
import type { BrandRule } from '../analytics/analytics.repository.ts';
import type { RouteBrand } from '../commerce/commerce.repository.ts';

/**
 * Brands and their rules as member tools read them on every call: through the event path's brand cache
 * (kept PTS_RULE_CACHE_SECONDS, dropped at once on a brand or rule change announced by any process), so a
 * member read costs no query for facts only an admin changes. Aggregates keep reading the database.
 */
export async function cachedBrands(d: AgentToolDeps, brandIds: readonly string[]): Promise<CachedBrand[]> {
  const found = await Promise.all(brandIds.map((id) => d.services.events.brands.get(id)));
  return found.filter((brand): brand is CachedBrand => brand !== undefined);
}

/** The rules of `brandIds` (inactive ones included), by brand then event type; an unknown brand has none. */
export async function cachedBrandRules(
  d: AgentToolDeps,
  brandIds: readonly string[],
): Promise<Map<string, BrandRule[]>> {
  const found = await Promise.all(brandIds.map((id) => d.services.events.brands.get(id)));
  const rules = new Map<string, BrandRule[]>();
  for (const [index, id] of brandIds.entries()) {
    const list = [...(found[index]?.rulesByType.values() ?? [])]
      .sort((a, b) => (a.event_type < b.event_type ? -1 : a.event_type > b.event_type ? 1 : 0))
      .map((rule) => ({
        eventId: rule.id,
        eventType: rule.event_type,
        rewardAmount: BigInt(rule.reward_amount),
        cooldownHours: rule.cooldown_hours,
        maxClaimsPerUser: rule.max_claims_per_user,
        active: rule.active,
      }));
    rules.set(id, list);
  }
  return rules;
}

/** Every brand (of `category`), by Brand ID. */
export async function cachedRouteBrands(d: AgentToolDeps, category: string | undefined): Promise<RouteBrand[]> {
  const brands = await cachedBrands(d, await d.services.events.brands.ids());
  return brands
    .filter(({ brand }) => !category || brand.category === category)
    .map(({ brand }) => ({
      brandId: brand.address,
      name: brand.name,
      domain: brand.website_domain,
      category: brand.category,
    }));
}
