import { perkCatalogueItemSchema, perkCategorySchema } from '@pts/shared';
import { z } from 'zod';
import { brandPerksToken, earliestAfter } from '../../../modules/ledger/member-answers.ts';
import { agentPerkLimits } from '../../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { brandParams } from './discovery-schemas.ts';
import type { BrandToolDeps, SupplyDeps } from './discovery-tool-deps.ts';

const resultSchema = z.object({
  brandId: z.string(),
  category: z.string().nullable(),
  perks: z.array(perkCatalogueItemSchema),
  count: z.number().int(),
});

/** `get_brand_perks`: A brand's perk catalogue with live supply. */
export function getBrandPerksTool(d: BrandToolDeps & SupplyDeps): AgentTool {
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
    result: resultSchema,
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
