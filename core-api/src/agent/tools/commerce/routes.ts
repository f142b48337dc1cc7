import { rememberRead } from '../../../caching/answer-cache.ts';
import { formatCents } from '../../../modules/payments/payment-amounts.ts';
import { cachedRouteBrands } from '../../actions/cached-brands.ts';
import type { AgentToolContext } from '../../agent-tool.ts';
import type { BrandRule } from '../../analytics/analytics.repository.ts';
import { PTS_PER_USD, periodWindows, pricedPurchaseRule, ptsToUsd, purchaseReward } from '../../analytics/formulas.ts';
import type { RouteBrand } from '../../commerce/commerce.repository.ts';
import { type MemberEarnings, membersEarnings } from '../../commerce/member-earnings.ts';
import { basisOf, COMMERCE_PERIOD, intentTerms, matchCount, memberView, ROUTES_MAX } from './commerce-schemas.ts';
import type { RoutesToolDeps } from './commerce-tool-deps.ts';

type PurchaseRoute = { brand: RouteBrand; rule: BrandRule; brandRules: BrandRule[] };
type RankedRoute = ReturnType<typeof rankRoutes>[number];

/** The brands with a purchase rule, most pts for the purchase first (the member's total when known), then use. */
function rankRoutes(withRule: PurchaseRoute[], members: Map<string, MemberEarnings>, accepted: Map<string, number>) {
  const candidates = [];
  for (const { brand, rule } of withRule) {
    const member = members.get(brand.brandId);
    const total = member ? member.totalPts : rule.rewardAmount;
    candidates.push({
      brand,
      rule,
      member,
      total,
      acceptedLast30d: accepted.get(`${brand.brandId} ${rule.eventType}`) ?? 0,
    });
  }
  candidates.sort(
    (a, b) =>
      (b.total > a.total ? 1 : b.total < a.total ? -1 : 0) ||
      b.acceptedLast30d - a.acceptedLast30d ||
      a.brand.brandId.localeCompare(b.brand.brandId),
  );
  return candidates;
}

/** One route as route_commerce shows it, ranked `index + 1`. */
function routeOf(c: RankedRoute, index: number, purchaseAmount: bigint) {
  return {
    rank: index + 1,
    brandId: c.brand.brandId,
    name: c.brand.name,
    category: c.brand.category,
    eventType: c.rule.eventType,
    eventId: c.rule.eventId,
    ...purchaseReward(c.rule, purchaseAmount),
    acceptedLast30d: c.acceptedLast30d,
    member: c.member ? memberView(c.member) : null,
    totalPts: c.total.toString(),
    totalUsd: ptsToUsd(c.total),
  };
}

/**
 * route_commerce's answer at `now`; for a member (`asked`, a signed call) with their earnings at the brands
 * of `asked.scope` (the key's), which are returned too.
 */
export async function routesAt(
  d: RoutesToolDeps,
  query: {
    intent?: string | undefined;
    category?: string | undefined;
    purchaseAmount: bigint;
    userId?: string | undefined;
  },
  context: AgentToolContext,
  now: Date,
  asked: { userId: string; scope: Set<string> } | undefined,
) {
  const { current } = periodWindows(now, COMMERCE_PERIOD);
  const scope = asked?.scope ?? new Set<string>();
  const terms = intentTerms(query.intent);
  const network = await cachedRouteBrands(d, query.category);
  const brands = network.brands.filter(
    (b) => terms.length === 0 || matchCount(terms, [b.name, b.domain, b.category]) > 0,
  );
  const ids = brands.map((b) => b.brandId);
  const rules = network.rules;
  const accepted = await rememberRead(d, 'accepted_by_type', { ids: [...ids].sort(), days: current.days }, () =>
    d.commerceReads.readAcceptedByType(ids, current),
  );
  const withRule = brands.flatMap((brand) => {
    const brandRules = rules.get(brand.brandId) ?? [];
    const rule = pricedPurchaseRule(brandRules, query.purchaseAmount);
    return rule ? [{ brand, rule, brandRules }] : [];
  });
  // The member's earnings at every brand of the key at once (three round trips, not three per brand).
  const members = asked
    ? await membersEarnings(d, context, {
        userId: asked.userId,
        brands: withRule
          .filter((c) => scope.has(c.brand.brandId))
          .map((c) => ({ brandId: c.brand.brandId, purchaseRule: c.rule, rules: c.brandRules })),
      })
    : new Map<string, MemberEarnings>();
  const candidates = rankRoutes(withRule, members, accepted);
  const routes = candidates.slice(0, ROUTES_MAX).map((c, i) => routeOf(c, i, query.purchaseAmount));
  const sample = candidates.reduce((s, c) => s + c.acceptedLast30d, 0);
  let note: string | undefined;
  if (brands.length === 0) note = 'No brand matches the category and intent';
  else if (candidates.length === 0) note = 'None of the matching brands has an active purchase rule';
  const answer = {
    purchaseAmountUsd: formatCents(query.purchaseAmount),
    ptsPerUsd: PTS_PER_USD,
    category: query.category ?? null,
    intentTerms: terms,
    personalised: asked !== undefined,
    routes,
    brandsConsidered: brands.length,
    withoutPurchaseRule: brands.length - candidates.length,
    basis: basisOf(current, sample, note),
  };
  return { answer, members };
}
