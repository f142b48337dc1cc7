import { z } from 'zod';
import { rememberRead } from '../../../caching/answer-cache.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import {
  BRAND_CATEGORIES,
  BRANDS_LIST_MAX,
  boundedInt,
  brandViewSchema,
  lowerEnum,
  toBrandView,
} from './discovery-schemas.ts';
import type { DirectoryToolDeps } from './discovery-tool-deps.ts';

const resultSchema = z.object({
  brands: z.array(brandViewSchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  category: z.string().nullable(),
  note: z.string().optional(),
});

/** `list_brands`: Brands on the network, oldest first, optionally of one category. */
export function listBrandsTool(d: DirectoryToolDeps): AgentTool {
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
    result: resultSchema,
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
