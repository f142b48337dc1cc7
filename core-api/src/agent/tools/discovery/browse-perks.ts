import { brandIdSchema, perkCatalogueItemSchema, perkCategorySchema } from '@pts/shared';
import { z } from 'zod';
import { rememberRead } from '../../../caching/answer-cache.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { agentPerkLimits } from '../../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { catalogueItemsOf } from './catalogue-items.ts';
import { boundedInt, PERKS_BROWSE_MAX } from './discovery-schemas.ts';
import type { BrandToolDeps, SupplyDeps } from './discovery-tool-deps.ts';

const resultSchema = z.object({
  perks: z.array(perkCatalogueItemSchema.extend({ brandName: z.string() })),
  count: z.number().int(),
  limit: z.number().int(),
  note: z.string().optional(),
});

/** `browse_perks`: Perks across every brand, cheapest first. */
export function browsePerksTool(d: BrandToolDeps & SupplyDeps): AgentTool {
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
    result: resultSchema,
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
