import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { healthReport, periodWindows } from '../../analytics/formulas.ts';
import { basisOf, brandParams, HEALTH_PERIOD, healthSchema } from './analytics-schemas.ts';
import type { KnownBrandDeps, WindowReadDeps } from './analytics-tool-deps.ts';
import { windowTotals } from './window-reads.ts';

/** The health inputs of a brand over the last 30 days and the 30 before, and the report the formula makes of them. */
async function brandHealth(d: WindowReadDeps, brandId: string, now: Date) {
  const reads = d.analyticsReads;
  const { current, previous } = periodWindows(now, HEALTH_PERIOD);
  const [cur, prev, retained, streaks, program] = await Promise.all([
    windowTotals(d, brandId, current),
    windowTotals(d, brandId, previous),
    reads.readRetainedMembers(brandId, previous, current),
    reads.readStreakTotals(brandId, current),
    reads.readProgramSize(brandId),
  ]);
  const inputs = {
    members: cur.members,
    previousMembers: prev.members,
    retainedMembers: retained,
    events: cur.acceptedEvents,
    redeemers: cur.activeRedeemers,
    streakMembers: streaks.streakMembers,
    activeRules: program.activeRules,
    availablePerks: program.availablePerks,
  };
  return { ...healthReport(inputs), inputs, current };
}

/** `get_brand_health`: A brand's health score 0–100, grade, strengths, weaknesses and recommendations. */
export function getBrandHealthTool(d: WindowReadDeps & KnownBrandDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand_health',
    method: 'get',
    path: '/analytics/brands/:brandId/health',
    summary: "A brand's health score 0–100, grade, strengths, weaknesses and recommendations",
    description:
      'Health of a brand over the last 30 days (and the 30 before): five components of 20 points — engagement (events per active member, full at 4), retention (share of the previous window’s members active again), growth (member change, 10 = flat), redemption (share of members who redeemed, full at 20 %), program (active rule 5, available perk 5, members on a 2+ streak up to 10 at 25 %). Score = rounded sum, grade A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F. Strengths: components ≥ 75 % of their max; weaknesses (< 40 %) each come with a recommendation. The inputs are returned. 404 for an unknown brand; a brand without members scores only its program.',
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: healthSchema,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const { current, inputs, ...report } = await brandHealth(d, params.brandId, context.clock.now());
      return {
        brandId: params.brandId,
        ...report,
        inputs,
        basis: basisOf(
          current,
          HEALTH_PERIOD,
          inputs.members,
          inputs.members === 0
            ? 'No active member in the last 30 days: only the program component can score'
            : undefined,
        ),
      };
    },
  });
}
