import { countBelow } from '../../../modules/ledger/member-activity.ts';
import { keptWindowedAnswer, WINDOWED_ANSWER_NOTE } from '../../actions/windowed-answers.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { classifyArchetype, DORMANT_AFTER_DAYS, percentileRank } from '../../intelligence/formulas.ts';
import { memberScope } from '../../intelligence/member-scope.ts';
import { tierStandingOf } from '../tiers/get-user-tier.ts';
import { basisOf, DAY_MS, personaResult, share, userParams, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { MemberToolDeps } from './intelligence-tool-deps.ts';
import { earningsTotals, loadMember } from './member-reads.ts';

/** get_user_persona's answer at `now` (404 when the member has no activity at `brands`). */
async function personaOf(d: MemberToolDeps, userId: string, brands: string[], now: Date) {
  const { window, activity, redemptions, tokens } = await loadMember(d, userId, brands, now);
  const daysSinceLastEvent = activity.lastEventAt
    ? Math.floor((now.getTime() - activity.lastEventAt.getTime()) / DAY_MS)
    : null;
  const profile = {
    events: activity.events,
    distinctEventTypes: activity.distinctEventTypes,
    activeDays: activity.activeDays,
    daysSinceLastEvent,
    redemptions: redemptions.redemptions,
    earned: activity.earned,
    spent: redemptions.spent,
  };
  const totals = await earningsTotals(d, brands, window);
  const rank = { below: countBelow(totals, activity.earned), population: totals.length };
  const totalEvents = activity.perBrand.reduce((s, b) => s + b.events, 0);
  const persona = {
    userId: userId,
    archetype: classifyArchetype(profile, WINDOW_DAYS),
    behaviour: {
      events: activity.events,
      eventsPerActiveDay: activity.activeDays > 0 ? Math.round((activity.events / activity.activeDays) * 100) / 100 : 0,
      activeDays: activity.activeDays,
      daysSinceLastEvent,
      eventTypeMix: activity.eventTypeMix.map((m) => ({ ...m, share: share(m.count, activity.events) })),
      redemptions: redemptions.redemptions,
      earned: activity.earned.toString(),
      spent: redemptions.spent.toString(),
    },
    brandAffinities: activity.perBrand.map((b) => ({
      brandId: b.brandId,
      events: b.events,
      earned: b.earned.toString(),
      share: share(b.events, totalEvents),
    })),
    network: {
      brands: activity.brands,
      earningsPercentile: activity.events > 0 ? percentileRank(rank.below, rank.population) : null,
      population: rank.population,
    },
    basis: basisOf(
      window,
      activity.events,
      activity.events === 0
        ? `No accepted event in the last ${WINDOW_DAYS} days; dormant after ${DORMANT_AFTER_DAYS} days without one`
        : undefined,
    ),
  };
  return { persona, tokens };
}

/** The member's tier at each of `brands` that has tiers (the tier service's one read per brand). */
async function tierStandings(d: MemberToolDeps, userId: string, brands: string[]) {
  const standings = await Promise.all(
    brands.map(async (brandId) => ({
      brandId,
      ...tierStandingOf(await d.tiers.member(brandId, userId.toLowerCase())),
    })),
  );
  return standings.filter((standing) => standing.tier !== null);
}

/** `get_user_persona`: A member's behavioural profile and archetype at the key's brands. */
export function getUserPersonaTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_persona',
    method: 'get',
    path: '/intelligence/users/:userId/persona',
    summary: "A member's behavioural profile and archetype at the key's brands",
    description:
      "Behaviour of one member over the last 30 days at the brands this key acts for: accepted events, active days, event-type mix, redemptions, pts earned and spent; a rule-based archetype (dormant, newcomer, redeemer, streaker, explorer, collector — rules in docs/agent-api/intelligence.md); brand affinities (share of the member's events per brand, all time); network position (brands the member is active at among the key's, percentile of 30-day earnings among the key's members, 0–100); the VIP tier and progress at each of those brands with tiers (as get_user_tier). 404 when the member has no activity at the key's brands. Amounts are integer pts as strings." +
      WINDOWED_ANSWER_NOTE,
    access: 'key',
    request: { params: userParams },
    result: personaResult,
    example: (f) => ({ params: { userId: f.userId } }),
    async handle({ params }, context) {
      const brands = memberScope(context);
      const persona = await keptWindowedAnswer(
        d,
        context,
        ['get_user_persona', brands.join(','), params.userId],
        async (now) => {
          const { persona, tokens } = await personaOf(d, params.userId, brands, now);
          // The member's events and redemptions; the population they are ranked in is a remembered aggregate.
          return { value: persona, tokens };
        },
      );
      // Read after the kept answer, never kept with it: the period's turn moves a tier by time alone.
      return { ...persona, tiers: await tierStandings(d, params.userId, brands) };
    },
  });
}
