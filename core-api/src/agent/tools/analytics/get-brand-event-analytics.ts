import { z } from 'zod';
import type { EventTypeActivity } from '../../../modules/analytics/analytics.repository.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { BrandRule } from '../../analytics/analytics.repository.ts';
import { growthPercent, percentOf, periodWindows } from '../../analytics/formulas.ts';
import {
  amount,
  basis,
  basisOf,
  brandParams,
  eventTypeSchema,
  eventTypeView,
  periodQuery,
} from './analytics-schemas.ts';
import type { KnownBrandDeps, WindowReadDeps } from './analytics-tool-deps.ts';
import { eventTypeActivity } from './window-reads.ts';

const resultSchema = z.object({
  brandId: z.string(),
  eventTypes: z.array(
    eventTypeSchema.extend({
      acceptancePercent: z.number().nullable(),
      previousAccepted: z.number().int(),
      growthPercent: z.number().nullable(),
      rule: z
        .object({
          eventId: z.string(),
          rewardAmount: amount,
          cooldownHours: z.number(),
          maxClaimsPerUser: z.number().int(),
          active: z.boolean(),
        })
        .nullable(),
    }),
  ),
  basis,
});

/** Every event type with a rule or activity: its counts, acceptance, growth and rule; most accepted first. */
function eventTypeRows(cur: EventTypeActivity[], prev: EventTypeActivity[], rules: BrandRule[]) {
  const accepted = cur.reduce((s, t) => s + t.accepted, 0);
  const byType = new Map(cur.map((t) => [t.eventType, t]));
  const prevByType = new Map(prev.map((t) => [t.eventType, t.accepted]));
  const ruleByType = new Map(rules.map((r) => [r.eventType, r]));
  const types = [...new Set([...ruleByType.keys(), ...byType.keys()])];
  return types
    .map((eventType) => {
      const t = byType.get(eventType) ?? { eventType, accepted: 0, rejected: 0, members: 0, ptsIssued: 0n };
      const rule = ruleByType.get(eventType);
      const before = prevByType.get(eventType) ?? 0;
      return {
        ...eventTypeView(t, accepted),
        acceptancePercent: percentOf(t.accepted, t.accepted + t.rejected),
        previousAccepted: before,
        growthPercent: growthPercent(t.accepted, before),
        rule: rule
          ? {
              eventId: rule.eventId,
              rewardAmount: rule.rewardAmount.toString(),
              cooldownHours: rule.cooldownHours,
              maxClaimsPerUser: rule.maxClaimsPerUser,
              active: rule.active,
            }
          : null,
      };
    })
    .sort((a, b) => b.accepted - a.accepted || a.eventType.localeCompare(b.eventType));
}

/** `get_brand_event_analytics`: Per event type: a brand's accepted and rejected events, members and pts. */
export function getBrandEventAnalyticsTool(d: WindowReadDeps & KnownBrandDeps): AgentTool {
  const reads = d.analyticsReads;
  return defineAgentTool({
    name: 'get_brand_event_analytics',
    method: 'get',
    path: '/analytics/brands/:brandId/events',
    summary: "Per event type: a brand's accepted and rejected events, members and pts",
    description:
      "For each event type of the brand (every configured rule, plus types seen in the period without a rule): the rule (eventId, reward, cooldown, max claims per member, active; null when none), accepted and rejected events, acceptance rate in %, distinct members, pts issued and share of the brand's accepted events, over the period (7d, 30d default, 90d); previous-window accepted count and growth in %. Most accepted first. 404 for an unknown brand.",
    access: 'public',
    cached: true,
    request: { params: brandParams, query: z.object({ period: periodQuery('30d') }) },
    result: resultSchema,
    example: (f) => ({ params: { brandId: f.brandId }, query: { period: '30d' } }),
    async handle({ params, query }, context) {
      await requireKnownBrand(d, params.brandId);
      const { current, previous } = periodWindows(context.clock.now(), query.period);
      const [cur, prev, rules] = await Promise.all([
        eventTypeActivity(d, params.brandId, current),
        eventTypeActivity(d, params.brandId, previous),
        reads.readBrandRules([params.brandId]),
      ]);
      const eventTypes = eventTypeRows(cur, prev, rules.get(params.brandId) ?? []);
      const events = cur.reduce((s, t) => s + t.accepted + t.rejected, 0);
      return {
        brandId: params.brandId,
        eventTypes,
        basis: basisOf(
          current,
          query.period,
          events,
          events === 0 ? 'No event at this brand in the period' : undefined,
        ),
      };
    },
  });
}
