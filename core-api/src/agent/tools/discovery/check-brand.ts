import { cleanString } from '@pts/shared';
import { z } from 'zod';
import { rememberRead } from '../../../caching/answer-cache.ts';
import { hostMatchesDomain } from '../../../http/cors.ts';
import { domainHolders } from '../../../modules/brands/brand-registration.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { DirectoryBrand } from '../../discovery/brand-directory.repository.ts';
import { normalizeBrandQuery } from '../../discovery/brand-query.ts';
import { brandViewSchema, toBrandView } from './discovery-schemas.ts';
import type { DirectoryToolDeps } from './discovery-tool-deps.ts';

const QUERY_MAX = 2048;

/** The host and its parent domains of at least two labels, plus `www.` + host (a brand registered with www). */
function domainCandidates(host: string): string[] {
  const labels = host.split('.');
  const parents = labels.slice(0, -1).map((_, index) => labels.slice(index).join('.'));
  return [...new Set([...parents, `www.${host}`])];
}

/** Whether the host is the brand's website or verified domain or under one (or its `www.`). */
function domainMatches(host: string, brand: DirectoryBrand): boolean {
  return [brand.domain, ...brand.verifiedDomains].some(
    (allowed) => hostMatchesDomain(host, allowed) || allowed.toLowerCase() === `www.${host}`,
  );
}

const resultSchema = z.object({
  query: z.string(),
  normalized: z.object({ brandId: z.string().nullable(), domain: z.string().nullable(), name: z.string() }),
  found: z.boolean(),
  runsProgram: z.boolean(),
  matches: z.array(brandViewSchema.extend({ matchedBy: z.enum(['brandId', 'domain', 'name']) })),
});

const checkQuery = z.object({
  query: cleanString(
    z.string().min(1, 'query must not be empty').max(QUERY_MAX, `query must be at most ${QUERY_MAX} characters`),
  ),
});

/** The brand as a match of the query, with how it matched (Brand ID, then domain, then name), or none. */
function matchOf(brand: DirectoryBrand, normalized: ReturnType<typeof normalizeBrandQuery>) {
  const matchedBy =
    normalized.brandId === brand.brandId
      ? ('brandId' as const)
      : normalized.domain && domainMatches(normalized.domain, brand)
        ? ('domain' as const)
        : brand.name.toLowerCase() === normalized.name.toLowerCase()
          ? ('name' as const)
          : undefined;
  return matchedBy ? [{ ...toBrandView(brand), matchedBy }] : [];
}

/** `check_brand`: Does this business (name, domain, URL or Brand ID) run a pts program?. */
export function checkBrandTool(d: DirectoryToolDeps): AgentTool {
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
    request: { query: checkQuery },
    result: resultSchema,
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
      const matches = candidates.flatMap((brand) => matchOf(brand, normalized));
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
