import type { CachedBrand } from '../../modules/events/brand-cache.ts';
import type { RuleRecord } from '../../modules/events/events.repository.ts';
import type { AgentToolPorts } from '../agent-tool.ts';
import type { BrandRule } from '../analytics/analytics.repository.ts';
import type { RouteBrand } from '../commerce/commerce.repository.ts';

/**
 * Brands and their rules as member tools read them on every call: through the event path's brand cache
 * (kept PTS_RULE_CACHE_SECONDS, dropped at once on a brand or rule change announced by any process), so a
 * member read costs no query for facts only an admin changes. Aggregates keep reading the database.
 */
export async function cachedBrands(
  d: Pick<AgentToolPorts, 'events'>,
  brandIds: readonly string[],
): Promise<CachedBrand[]> {
  const found = await Promise.all(brandIds.map((id) => d.events.brands.get(id)));
  return found.filter((brand): brand is CachedBrand => brand !== undefined);
}

/** A rule as the agent's formulas read it. */
function toBrandRule(rule: RuleRecord): BrandRule {
  return {
    eventId: rule.id,
    eventType: rule.event_type,
    rewardAmount: BigInt(rule.reward_amount),
    rate: rule.rate,
    cooldownHours: rule.cooldown_hours,
    maxClaimsPerUser: rule.max_claims_per_user,
    active: rule.active,
  };
}

const byEventType = (a: RuleRecord, b: RuleRecord) =>
  a.event_type < b.event_type ? -1 : a.event_type > b.event_type ? 1 : 0;

/** The rules of `brandIds` (inactive ones included), by brand then event type; an unknown brand has none. */
export async function cachedBrandRules(
  d: Pick<AgentToolPorts, 'events'>,
  brandIds: readonly string[],
): Promise<Map<string, BrandRule[]>> {
  const found = await Promise.all(brandIds.map((id) => d.events.brands.get(id)));
  return new Map(
    brandIds.map((id, index) => [
      id,
      [...(found[index]?.rulesByType.values() ?? [])].sort(byEventType).map(toBrandRule),
    ]),
  );
}

/**
 * Every brand (of `category`), by Brand ID, with its rules: from the brand cache's directory (two statements
 * per cache period for the whole network, dropped on any change notice), not one load per brand.
 */
export async function cachedRouteBrands(
  d: Pick<AgentToolPorts, 'events'>,
  category: string | undefined,
): Promise<{ brands: RouteBrand[]; rules: Map<string, BrandRule[]> }> {
  const directory = await d.events.brands.directory();
  const brands = directory.brands.filter((brand) => !category || brand.category === category);
  return {
    brands: brands.map((brand) => ({
      brandId: brand.address,
      name: brand.name,
      domain: brand.website_domain,
      category: brand.category,
    })),
    rules: new Map(
      brands.map((brand) => [brand.address, (directory.rulesByBrand.get(brand.address) ?? []).map(toBrandRule)]),
    ),
  };
}
