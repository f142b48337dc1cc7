import {
  AppError,
  brandIdSchema,
  cleanString,
  LEADERBOARD_PERIODS,
  leaderboardEntrySchema,
  nextPeriodStart,
  perkCatalogueItemSchema,
  perkCategorySchema,
} from '@pts/shared';
import { z } from 'zod';
import { rememberRead } from '../../caching/answer-cache.ts';
import { hostMatchesDomain } from '../../http/cors.ts';
import { domainHolders } from '../../modules/brands/brand-registration.ts';
import { toRule } from '../../modules/brands/brands.repository.ts';
import { brandNotFound } from '../../modules/brands/brands.service.ts';
import {
  ANY_LEADERBOARD_TOKEN,
  brandPerksToken,
  earliestAfter,
  leaderboardToken,
} from '../../modules/ledger/member-answers.ts';
import type { PerkRow } from '../../modules/perks/perks.repository.ts';
import { toCatalogueItem } from '../../modules/perks/perks.service.ts';
import { requireKnownBrand } from '../actions/brand-authority.ts';
import { agentPerkLimits, optionalLimitOut, ruleCapOut } from '../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import type { DirectoryBrand } from '../discovery/brand-directory.repository.ts';
import { normalizeBrandQuery } from '../discovery/brand-query.ts';

export { normalizeBrandQuery };

/** Brand categories an agent may filter by (spec 4.1 `GET /brands`). */
export const BRAND_CATEGORIES = ['retail', 'gaming', 'dining', 'travel'] as const;
/** Spec 8 bounds. */
export const BRANDS_LIST_MAX = 200;
export const PERKS_BROWSE_MAX = 100;
export const AGENT_LEADERBOARD_MAX = 100;
/** The leaderboard metrics of spec 4.1 (the services board also ranks `claims`; the agent API keeps to these). */
export const AGENT_LEADERBOARD_METRICS = ['pts_earned', 'streak', 'activity'] as const;

/** A whole-number query parameter (REST sends strings) within `min..max`, `fallback` when absent. */
export function boundedInt(name: string, min: number, max: number, fallback: number) {
  return z.coerce
    .number({ message: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);
}

/** A lowercase enum query parameter: `Retail` and `retail` are the same. */
function lowerEnum<T extends readonly [string, ...string[]]>(values: T) {
  return cleanString(z.string().transform((value) => value.toLowerCase())).pipe(z.enum(values));
}

const brandParams = z.object({ brandId: brandIdSchema });

const brandViewSchema = z.object({
  brandId: z.string(),
  name: z.string(),
  /** The brand's website domain; events from the web must come from it or a verified domain. */
  domain: z.string(),
  verifiedDomains: z.array(z.string()),
  /** retail, gaming, dining, travel — null when the brand has no category (it is then only listed unfiltered). */
  category: z.string().nullable(),
  /** Automation on and at least one active event rule: the brand rewards events now. */
  acceptingEvents: z.boolean(),
  activeEvents: z.number().int(),
  activePerks: z.number().int(),
  createdAt: z.string(),
});
type BrandView = z.infer<typeof brandViewSchema>;

function toBrandView({ automationEnabled, createdAt, ...brand }: DirectoryBrand): BrandView {
  return { ...brand, acceptingEvents: automationEnabled && brand.activeEvents > 0, createdAt: createdAt.toISOString() };
}

const QUERY_MAX = 2048;

/** The host and its parent domains of at least two labels, plus `www.` + host (a brand registered with www). */
function domainCandidates(host: string): string[] {
  const labels = host.split('.');
  const parents = labels.slice(0, -1).map((_, index) => labels.slice(index).join('.'));
  return [...new Set([...parents, `www.${host}`])];
}

function domainMatches(host: string, brand: DirectoryBrand): boolean {
  return [brand.domain, ...brand.verifiedDomains].some(
    (allowed) => hostMatchesDomain(host, allowed) || allowed.toLowerCase() === `www.${host}`,
  );
}

function listBrandsTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'list_brands',
    method: 'get',
    path: '/brands',
    summary: 'Brands on the network, oldest first, optionally of one category',
    description:
      'Lists the brands registered on pts with their website domain, category, whether they reward events now ' +
      '(acceptingEvents), and how many active event rules and perks they have. `category` (retail, gaming, ' +
      'dining, travel) keeps brands of that category; brands without a category are listed only when no ' +
      'category is given. Paged with `limit` (1–200, default 50) and `offset` (default 0); `total` counts every ' +
      'match. An empty list means no brand matches (a `note` says so).',
    access: 'public',
    request: {
      query: z.object({
        category: lowerEnum(BRAND_CATEGORIES).optional(),
        limit: boundedInt('limit', 1, BRANDS_LIST_MAX, 50),
        offset: boundedInt('offset', 0, Number.MAX_SAFE_INTEGER, 0),
      }),
    },
    result: z.object({
      brands: z.array(brandViewSchema),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
      category: z.string().nullable(),
      note: z.string().optional(),
    }),
    example: () => ({ query: { limit: 10 } }),
    async handle({ query }) {
      const { brands, total } = await rememberRead(d, 'directory_brands', query, () =>
        d.discoveryReads.listDirectoryBrands(query),
      );
      return {
        brands: brands.map(toBrandView),
        total,
        limit: query.limit,
        offset: query.offset,
        category: query.category ?? null,
        ...(brands.length === 0
          ? {
              note:
                total > 0
                  ? `offset ${query.offset} is past the last of ${total} brands`
                  : query.category
                    ? `no brand has category ${query.category} (brands without a category are only listed unfiltered)`
                    : 'no brand is registered yet',
            }
          : {}),
      };
    },
  });
}

function checkBrandTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'check_brand',
    method: 'get',
    path: '/brands/check',
    summary: 'Does this business (name, domain, URL or Brand ID) run a pts program?',
    description:
      'Looks a business up by what an agent usually has: a URL (https://www.shop.example.com/cart), a domain ' +
      '(shop.example.com), a name (case-insensitive, exact) or a Brand ID (0x…). URLs are reduced to their host; ' +
      'a host matches a brand whose website domain or verified domain is the host or a parent of it ' +
      '(a.shop.example.com matches shop.example.com). `found` is true when some brand matches; `runsProgram` ' +
      'when a match rewards events now (automation on and an active rule). `matches` lists each match and how ' +
      'it matched (brandId, domain, name).',
    access: 'public',
    request: {
      query: z.object({
        query: cleanString(
          z.string().min(1, 'query must not be empty').max(QUERY_MAX, `query must be at most ${QUERY_MAX} characters`),
        ),
      }),
    },
    result: z.object({
      query: z.string(),
      normalized: z.object({ brandId: z.string().nullable(), domain: z.string().nullable(), name: z.string() }),
      found: z.boolean(),
      runsProgram: z.boolean(),
      matches: z.array(brandViewSchema.extend({ matchedBy: z.enum(['brandId', 'domain', 'name']) })),
    }),
    example: (fixture) => ({ query: { query: fixture.brandId } }),
    async handle({ query }) {
      const normalized = normalizeBrandQuery(query.query);
      const lookup = {
        brandId: normalized.brandId ?? undefined,
        name: normalized.name,
        domains: normalized.domain ? domainCandidates(normalized.domain) : [],
      };
      const found = await rememberRead(d, 'directory_candidates', lookup, () =>
        d.discoveryReads.findBrandCandidates(lookup),
      );
      // A brand that proved the domain through DNS answers for it alone: a claimant of the same domain that
      // did not is left out (found by Brand ID or name it still shows).
      const { domain } = normalized;
      const byDomain = domain ? found.filter((brand) => domainMatches(domain, brand)) : [];
      const holders = domain ? new Set(domainHolders(byDomain, domain)) : new Set<DirectoryBrand>();
      const candidates = found.filter(
        (brand) =>
          holders.has(brand) ||
          !byDomain.includes(brand) ||
          brand.brandId === normalized.brandId ||
          brand.name.toLowerCase() === normalized.name.toLowerCase(),
      );
      const matches = candidates.flatMap((brand) => {
        const matchedBy =
          normalized.brandId === brand.brandId
            ? ('brandId' as const)
            : normalized.domain && domainMatches(normalized.domain, brand)
              ? ('domain' as const)
              : brand.name.toLowerCase() === normalized.name.toLowerCase()
                ? ('name' as const)
                : undefined;
        return matchedBy ? [{ ...toBrandView(brand), matchedBy }] : [];
      });
      return {
        query: query.query,
        normalized,
        found: matches.length > 0,
        runsProgram: matches.some((match) => match.acceptingEvents),
        matches,
      };
    },
  });
}

const ruleViewSchema = z.object({
  /** Pass it as `eventId` to process_event instead of eventType. */
  eventId: z.string(),
  eventType: z.string(),
  /** pts paid per accepted event. */
  rewardAmount: z.number().int(),
  /** Hours a user must wait between two rewarded events of this type (0 = none). */
  cooldownHours: z.number().int(),
  /** Rewarded events per user; -1 = unlimited. */
  maxClaimsPerUser: z.number().int(),
  /** Rewarded events across all users; -1 = unlimited. */
  maxTotalClaims: z.number().int(),
  /** What is left of maxTotalClaims; null when unlimited. */
  remainingTotalClaims: z.number().int().nullable(),
  detectionMethod: z.string(),
});

function getBrandTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand',
    method: 'get',
    path: '/brands/:brandId',
    summary: "A brand's program: its events with amounts, cooldowns and caps",
    description:
      'The brand (domain, category, whether it rewards events now) and every ACTIVE event rule: the reward in ' +
      'pts, the cooldown in hours between two rewards of one user, the per-user cap and the total cap (-1 = ' +
      'unlimited) and what is left of the total cap (null when unlimited). An empty `events` list means the brand rewards nothing ' +
      'yet. 404 not_found for an unknown Brand ID.',
    access: 'public',
    request: { params: brandParams },
    result: z.object({ brand: brandViewSchema, events: z.array(ruleViewSchema) }),
    example: (fixture) => ({ params: { brandId: fixture.brandId } }),
    async handle({ params }) {
      const brand = await rememberRead(d, 'directory_brand', params.brandId, () =>
        d.discoveryReads.findDirectoryBrand(params.brandId),
      );
      if (!brand) throw brandNotFound(params.brandId);
      // The rules as the event path holds them (its brand cache, dropped at once by any rule change), in
      // event type order; only what is left of a capped rule is read live (it moves with every event).
      const cached = await d.events.brands.get(brand.brandId);
      if (!cached) throw brandNotFound(params.brandId);
      const rules = [...cached.rulesByType.values()].filter((row) => row.active).map(toRule);
      const capped = rules.filter((rule) => rule.maxTotal !== null).map((rule) => rule.eventId);
      const totals = await d.discoveryReads.readRuleTotals(brand.brandId, capped);
      return {
        brand: toBrandView(brand),
        events: rules.map((rule) => ({
          eventId: rule.eventId,
          eventType: rule.eventType,
          rewardAmount: rule.rewardAmount,
          cooldownHours: rule.cooldownHours,
          maxClaimsPerUser: ruleCapOut(rule.maxClaims),
          maxTotalClaims: optionalLimitOut(rule.maxTotal),
          remainingTotalClaims:
            rule.maxTotal === null ? null : Math.max(0, rule.maxTotal - (totals.get(rule.eventId) ?? 0)),
          detectionMethod: rule.detectionMethod,
        })),
      };
    },
  });
}

function getBrandPerksTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand_perks',
    method: 'get',
    path: '/brands/:brandId/perks',
    summary: "A brand's perk catalogue with live supply",
    description:
      "The brand's perks that are on chain, oldest first, optionally of one `category` (a perk category such as " +
      'merch or general): cost in pts, supply (maxSupply -1 = unlimited), how many are claimed and left (read ' +
      'live from the PerkNFT contract; remainingSupply null when unlimited), the per-user maximum (-1 = unlimited) and `available` (active and not ' +
      'sold out). Empty when the brand has no perk (of that category). 404 not_found for an unknown Brand ID.',
    access: 'public',
    request: { params: brandParams, query: z.object({ category: perkCategorySchema.optional() }) },
    result: z.object({
      brandId: z.string(),
      category: z.string().nullable(),
      perks: z.array(perkCatalogueItemSchema),
      count: z.number().int(),
    }),
    example: (fixture) => ({ params: { brandId: fixture.brandId } }),
    async handle({ params, query }, context) {
      // Kept like the member answers (modules/ledger/member-answers.ts) until the database announces a change
      // of the brand's perks (terms, anyone's redemption: `p:<brand>`), the chain head moves (supply), a
      // perk window opens or closes, or a brand changes; an unknown brand's 404 is never kept.
      const key = ['get_brand_perks', params.brandId, query.category ?? ''].join('\n');
      return d.memberAnswers.answer(key, async () => {
        const now = context.clock.now();
        const perks = await d.discoveryReads.listCatalogue(
          {
            clock: context.clock,
            perkChain: d.perkChain,
            logger: context.logger,
            brands: d.events.brands,
          },
          params.brandId,
          { category: query.category },
        );
        return {
          value: {
            brandId: params.brandId,
            category: query.category ?? null,
            perks: perks.map(agentPerkLimits),
            count: perks.length,
          },
          tokens: [brandPerksToken(params.brandId)],
          chain: perks.length > 0,
          validUntil: earliestAfter(
            now,
            perks.flatMap((perk) => [perk.startsAt, perk.endsAt]),
          ),
        };
      });
    },
  });
}

/** Perk rows as catalogue items, their supply read live from the PerkNFT contract (503 without it). */
export async function catalogueItemsOf<R extends PerkRow>(d: Pick<AgentToolDeps, 'perkChain' | 'clock'>, rows: R[]) {
  if (rows.length === 0) return [];
  if (!d.perkChain) {
    throw new AppError('SERVICE_UNAVAILABLE', 'Perk supply cannot be read: the perk contracts are not configured');
  }
  const claimed = await d.perkChain.totalClaimed(rows.map((r) => r.id));
  return rows.map((row, index) => ({ row, item: toCatalogueItem(row, claimed[index] ?? 0n, d.clock.now()) }));
}

function browsePerksTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'browse_perks',
    method: 'get',
    path: '/perks',
    summary: 'Perks across every brand, cheapest first',
    description:
      'Active, on-chain perks of all brands (or of `brandId`), cheapest first, optionally of one `category` and ' +
      'costing at most `maxPrice` pts. `limit` 1–100 (default 20). Each perk carries its brand name, cost in ' +
      'pts, live supply left (null = unlimited) and `available` (false when sold out). Empty when nothing ' +
      'matches. 404 not_found when `brandId` names no brand.',
    access: 'public',
    request: {
      query: z.object({
        category: perkCategorySchema.optional(),
        maxPrice: z.coerce
          .number({ message: 'maxPrice must be a number' })
          .int('maxPrice must be a whole number of pts')
          .min(0, 'maxPrice must be ≥ 0')
          .max(Number.MAX_SAFE_INTEGER)
          .optional(),
        brandId: brandIdSchema.optional(),
        limit: boundedInt('limit', 1, PERKS_BROWSE_MAX, 20),
      }),
    },
    result: z.object({
      perks: z.array(perkCatalogueItemSchema.extend({ brandName: z.string() })),
      count: z.number().int(),
      limit: z.number().int(),
      note: z.string().optional(),
    }),
    example: (fixture) => ({ query: { brandId: fixture.brandId, limit: 5 } }),
    async handle({ query }) {
      if (query.brandId) await requireKnownBrand(d, query.brandId);
      const rows = await rememberRead(d, 'browse_perk_rows', query, () => d.discoveryReads.browsePerkRows(query));
      const perks = (await catalogueItemsOf(d, rows)).map(({ row, item }) => ({
        ...agentPerkLimits(item),
        brandName: row.brand_name,
      }));
      return {
        perks,
        count: perks.length,
        limit: query.limit,
        ...(perks.length === 0 ? { note: 'no active perk matches these filters' } : {}),
      };
    },
  });
}

function getLeaderboardTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_leaderboard',
    method: 'get',
    path: '/brands/:brandId/leaderboard',
    summary: "A brand's leaderboard by pts earned, streak or activity",
    description:
      'Top members of a brand. `metric`: pts_earned (default; pts whose mint is confirmed on chain), streak ' +
      '(current daily streak in days) or activity (rewarded actions). `period`: daily, weekly, monthly (UTC ' +
      'calendar day, ISO week from Monday, calendar month) or all_time (default); `periodStart` is the start ' +
      'of the current period. `limit` 1–100 (default 10). Ties share a rank. Identifiers are masked ' +
      '(public answer). An empty board means nobody scored in the period.',
    access: 'public',
    request: {
      params: brandParams,
      query: z.object({
        metric: lowerEnum(AGENT_LEADERBOARD_METRICS).default('pts_earned'),
        period: lowerEnum(LEADERBOARD_PERIODS).default('all_time'),
        limit: boundedInt('limit', 1, AGENT_LEADERBOARD_MAX, 10),
      }),
    },
    result: z.object({
      brandId: z.string(),
      metric: z.enum(AGENT_LEADERBOARD_METRICS),
      period: z.enum(LEADERBOARD_PERIODS),
      periodStart: z.string().nullable(),
      total: z.number().int(),
      leaderboard: z.array(leaderboardEntrySchema),
      note: z.string().optional(),
    }),
    example: (fixture) => ({ params: { brandId: fixture.brandId }, query: { metric: 'pts_earned', limit: 5 } }),
    async handle({ params, query }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      // Kept until the database announces a write to the brand's boards (or to usernames), and at most until
      // the period turns over; the streak board moves with time alone (lapses), so it is read every time.
      const key = ['get_leaderboard', params.brandId, query.metric, query.period, query.limit].join('\n');
      return d.memberAnswers.answer(key, async () => {
        const board = await d.discoveryReads.readLeaderboard(
          {
            brandId: params.brandId,
            metric: query.metric,
            period: query.period,
            limit: query.limit,
            revealIdentifiers: false,
            logger: context.logger,
          },
          now,
        );
        return {
          value: {
            brandId: params.brandId,
            metric: query.metric,
            period: query.period,
            periodStart: board.periodStart,
            total: board.total,
            leaderboard: board.leaderboard,
            ...(board.leaderboard.length === 0
              ? { note: `nobody scored ${query.metric} in this ${query.period} period` }
              : {}),
          },
          tokens: [leaderboardToken(params.brandId), ANY_LEADERBOARD_TOKEN],
          validUntil: nextPeriodStart(query.period, now),
          keep: query.metric !== 'streak',
        };
      });
    },
  });
}

/** The discovery tools of the agent API (spec 4.1): brands, their programs, perks and leaderboards. */
export function discoveryTools(d: AgentToolDeps): AgentTool[] {
  return [
    listBrandsTool(d),
    checkBrandTool(d),
    getBrandTool(d),
    getBrandPerksTool(d),
    browsePerksTool(d),
    getLeaderboardTool(d),
  ];
}
