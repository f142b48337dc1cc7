import type { RuleEngagement } from '../../../modules/events/rule-reads.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { lowerMedian, mostCommon, ratio } from '../../intelligence/formulas.ts';
import { windowOf } from '../../intelligence/member-scope.ts';
import { basisOf, brandParams, eventSuggestionsResult, WINDOW_DAYS } from './intelligence-schemas.ts';
import type { BrandToolDeps } from './intelligence-tool-deps.ts';

type PeerNetwork = ReturnType<typeof peerNetwork>;

/** Per event type, the peers' rules running it and their reach: brands, events, members and events per brand. */
function peerNetwork(peerRules: RuleEngagement[]) {
  const byType = new Map<string, typeof peerRules>();
  for (const r of peerRules) byType.set(r.eventType, [...(byType.get(r.eventType) ?? []), r]);
  return (eventType: string) => {
    const list = byType.get(eventType) ?? [];
    const events = list.reduce((s, r) => s + r.events, 0);
    const members = list.reduce((s, r) => s + r.members, 0);
    return {
      list,
      brands: list.length,
      events,
      membersPerBrand: ratio(members, list.length),
      eventsPerBrand: ratio(events, list.length),
    };
  };
}

/** The event types the peers run and the brand lacks, configured from the peers' medians; widest reach first. */
function suggestionsLacking(network: PeerNetwork, peerRules: RuleEngagement[], own: RuleEngagement[]) {
  const owned = new Set(own.map((r) => r.eventType));
  return [...new Set(peerRules.map((r) => r.eventType))]
    .filter((eventType) => !owned.has(eventType))
    .map((eventType) => ({ eventType, n: network(eventType) }))
    .filter(({ n }) => n.membersPerBrand > 0)
    .sort(
      (a, b) =>
        b.n.membersPerBrand - a.n.membersPerBrand ||
        b.n.eventsPerBrand - a.n.eventsPerBrand ||
        b.n.brands - a.n.brands ||
        a.eventType.localeCompare(b.eventType),
    )
    .map(({ eventType, n }) => {
      const rewards = n.list.map((r) => r.rewardAmount);
      return {
        eventType,
        rewardAmount: lowerMedian(rewards) ?? 0,
        maxClaims: mostCommon(n.list.map((r) => r.maxClaims)) ?? -1,
        cooldownHours: lowerMedian(n.list.map((r) => r.cooldownHours)) ?? 0,
        network: {
          brands: n.brands,
          events30d: n.events,
          membersPerBrand: n.membersPerBrand,
          eventsPerBrand: n.eventsPerBrand,
          rewardRange: { min: Math.min(...rewards), max: Math.max(...rewards) },
        },
        reason: `${n.brands} other brand(s) run ${eventType}; it reached ${n.membersPerBrand} member(s) per brand in ${WINDOW_DAYS} days; this brand has no such rule`,
      };
    });
}

/** One of the brand's own rules beside the peers' median reward and reach for its event type. */
function comparedWithPeers(r: RuleEngagement, n: ReturnType<PeerNetwork>) {
  return {
    eventType: r.eventType,
    rewardAmount: r.rewardAmount,
    cooldownHours: r.cooldownHours,
    maxClaims: r.maxClaims,
    events30d: r.events,
    members30d: r.members,
    network: {
      brands: n.brands,
      medianReward: lowerMedian(n.list.map((x) => x.rewardAmount)),
      membersPerBrand: n.membersPerBrand,
    },
  };
}

/** `suggest_brand_events`: Event rules this brand could add, configured from what works at other brands. */
export function suggestBrandEventsTool(d: BrandToolDeps): AgentTool {
  const reads = d.intelligenceReads;
  return defineAgentTool({
    name: 'suggest_brand_events',
    method: 'get',
    path: '/brands/:brandId/suggestions/events',
    summary: 'Event rules this brand could add, configured from what works at other brands',
    description:
      "Suggested event configurations (the create_event body: eventType, rewardAmount, maxClaims, cooldownHours) for event types other brands run and this brand lacks, with the members they reached in the last 30 days at those brands. Per event type over the peers (other brands with the type as an active rule): rewardAmount = lower median of their rewards, cooldownHours = lower median of their cooldowns, maxClaims = their most common per-user maximum (-1 = unlimited); membersPerBrand = distinct members with an accepted event of the type ÷ peer brands, eventsPerBrand likewise. Only types with membersPerBrand > 0 are suggested, most members per brand first. `current` compares each of the brand's own active rules with the peers' median reward and reach. A network without peers or engagement answers an empty list with a note.",
    access: 'public',
    cached: true,
    request: { params: brandParams },
    result: eventSuggestionsResult,
    example: (f) => ({ params: { brandId: f.brandId } }),
    async handle({ params }, context) {
      await requireKnownBrand(d, params.brandId);
      const window = windowOf(context.clock.now(), WINDOW_DAYS);
      const rules = await reads.readRuleEngagement(window.from, window.to);
      const own = rules.filter((r) => r.brandId === params.brandId);
      const peerRules = rules.filter((r) => r.brandId !== params.brandId);
      const network = peerNetwork(peerRules);
      const suggestions = suggestionsLacking(network, peerRules, own);
      const peers = new Set(peerRules.map((r) => r.brandId)).size;
      const peerEvents = peerRules.reduce((s, r) => s + r.events, 0);
      let note: string | undefined;
      if (peers === 0) note = 'No other brand has an active event rule: nothing to learn from yet';
      else if (suggestions.length === 0)
        note = `No event type this brand lacks reached a member at other brands in the last ${WINDOW_DAYS} days`;
      return {
        brandId: params.brandId,
        peers,
        suggestions,
        current: own.map((r) => comparedWithPeers(r, network(r.eventType))),
        basis: basisOf(window, peerEvents, note),
      };
    },
  });
}
