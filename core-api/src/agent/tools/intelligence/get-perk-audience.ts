import { AppError, brandIdSchema, perkRefSchema } from '@pts/shared';
import { z } from 'zod';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { BrandMember } from '../../intelligence/audience.repository.ts';
import { ARCHETYPES, archetypeDistribution, conversionRate } from '../../intelligence/formulas.ts';
import { windowOf } from '../../intelligence/member-scope.ts';
import { basisOf, perkAudienceResult, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { BrandToolDeps } from './intelligence-tool-deps.ts';

const perkAudienceParams = z.object({
  brandId: brandIdSchema,
  collectionId: perkRefSchema,
});

/** Per archetype, of the members who could afford the perk, how many redeemed it. */
function conversionOf(couldAfford: BrandMember[], redeemerKeys: Set<string>) {
  return ARCHETYPES.map((archetype) => {
    const able = couldAfford.filter((m) => m.archetype === archetype);
    const redeemed = able.filter((m) => redeemerKeys.has(m.identityKey)).length;
    return {
      archetype,
      couldAfford: able.length,
      redeemed,
      conversionPercent: conversionRate(redeemed, able.length),
    };
  });
}

/** `get_perk_audience`: Persona breakdown of the members who redeemed a perk and of those who could afford it. */
export function getPerkAudienceTool(d: BrandToolDeps): AgentTool {
  const reads = d.intelligenceReads;
  return defineAgentTool({
    name: 'get_perk_audience',
    method: 'get',
    path: '/intelligence/brands/:brandId/perks/:collectionId/audience',
    summary: 'Persona breakdown of the members who redeemed a perk and of those who could afford it',
    description:
      "Who a perk reaches, as archetypes (`:collectionId` is the perk's integer collection id or its uuid; the persona rules of docs/agent-api/intelligence.md, applied to each member's last 30 days at this brand): `redeemers` = distinct members who ever redeemed the perk (pending or confirmed); `couldAfford` = members whose all-time accepted earnings at the brand reach its cost (the top of get_brand_perk_intelligence's funnel); `conversionByArchetype` = of those who could afford it, how many redeemed it (%, null when none could). Counts and shares (%) only, never member ids; agent identities excluded. Empty groups answer zeros with a note. 404 for an unknown brand or a perk that is not the brand's.",
    access: 'public',
    cached: true,
    request: { params: perkAudienceParams },
    result: perkAudienceResult,
    example: (f) => ({ params: { brandId: f.brandId, collectionId: f.perkId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      const window = windowOf(now, WINDOW_DAYS);
      const row = await reads.findBrandPerk(params.brandId, params.collectionId);
      const perk = (await reads.readPerkActivity(params.brandId, now)).find((p) => p.perkId === row.id.toString());
      if (!perk) throw new AppError('PERK_NOT_FOUND', `Brand ${params.brandId} has no perk ${params.collectionId}`);
      const [members, redeemerKeys] = await Promise.all([
        reads.readBrandMembers(params.brandId, window),
        reads.readPerkRedeemers(params.brandId, perk.perkId, now),
      ]);
      const redeemers = members.filter((m) => redeemerKeys.has(m.identityKey));
      const couldAfford = members.filter((m) => m.earnedAllTime >= perk.cost);
      const conversionByArchetype = conversionOf(couldAfford, redeemerKeys);
      const sample = new Set([...redeemers, ...couldAfford].map((m) => m.identityKey)).size;
      let note: string | undefined;
      if (sample === 0) note = 'Nobody redeemed this perk and no member has earned its cost at the brand';
      else if (redeemers.length === 0) note = 'Nobody redeemed this perk yet';
      return {
        brandId: params.brandId,
        perkId: perk.perkId,
        name: perk.name,
        cost: perk.cost.toString(),
        redeemers: { members: redeemers.length, personas: archetypeDistribution(redeemers.map((m) => m.archetype)) },
        couldAfford: {
          members: couldAfford.length,
          personas: archetypeDistribution(couldAfford.map((m) => m.archetype)),
        },
        conversionByArchetype,
        basis: basisOf(window, sample, note),
      };
    },
  });
}
