import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { archetypeDistribution, ratio } from '../../intelligence/formulas.ts';
import { windowOf } from '../../intelligence/member-scope.ts';
import { basisOf, brandAudienceResult, brandParams, share, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { BrandToolDeps } from './intelligence-tool-deps.ts';

/** `get_brand_audience`: A brand's members by persona, their engagement and the platforms they use. */
export function getBrandAudienceTool(d: BrandToolDeps): AgentTool {
  const reads = d.intelligenceReads;
  return defineAgentTool({
    name: 'get_brand_audience',
    method: 'get',
    path: '/intelligence/brands/:brandId/audience',
    summary: "A brand's members by persona, their engagement and the platforms they use",
    description:
      "The brand's members (anyone with an accepted event or a redemption there; agent identities excluded): persona distribution (each member's archetype from their last 30 days at this brand, rules in docs/agent-api/intelligence.md; members with no event for 30 days are dormant); engagement over the last 30 days (active members = at least one accepted event, new members = first event in the window, events, events and active days per active member, pts earned, redemptions and distinct redeemers); platform split of the window's events (`metadata.platform` when the caller declared it, else the platform of a chat identity such as discord_…@, else web) with events, distinct members and share of events in %. Counts only, never member ids. A brand without members answers zeros with a note.",
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: brandAudienceResult,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const window = windowOf(context.clock.now(), WINDOW_DAYS);
      const [members, platforms] = await Promise.all([
        reads.readBrandMembers(params.brandId, window),
        reads.readPlatformSplit(params.brandId, window.from, window.to),
      ]);
      const active = members.filter((m) => m.profile.events > 0);
      const events30d = active.reduce((s, m) => s + m.profile.events, 0);
      const activeDays = active.reduce((s, m) => s + m.profile.activeDays, 0);
      let note: string | undefined;
      if (members.length === 0) note = 'The brand has no member yet';
      else if (active.length === 0) note = `No accepted event in the last ${WINDOW_DAYS} days: every member is dormant`;
      return {
        brandId: params.brandId,
        members: members.length,
        personas: archetypeDistribution(members.map((m) => m.archetype)),
        engagement: {
          activeMembers30d: active.length,
          newMembers30d: members.filter((m) => m.firstEventAt !== null && m.firstEventAt >= window.from).length,
          events30d,
          eventsPerActiveMember: ratio(events30d, active.length),
          activeDaysPerActiveMember: ratio(activeDays, active.length),
          earned30d: members.reduce((s, m) => s + m.profile.earned, 0n).toString(),
          redemptions30d: members.reduce((s, m) => s + m.profile.redemptions, 0),
          redeemers30d: members.filter((m) => m.profile.redemptions > 0).length,
        },
        platforms: platforms.map((p) => ({ ...p, share: share(p.events, events30d) })),
        basis: basisOf(window, members.length, note),
      };
    },
  });
}
