import { z } from 'zod';
import { rememberRead } from '../../../caching/answer-cache.ts';
import { toRule } from '../../../modules/brands/brands.repository.ts';
import { brandNotFound } from '../../../modules/brands/brands.service.ts';
import { optionalLimitOut, ruleCapOut } from '../../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import { brandParams, brandViewSchema, toBrandView } from './discovery-schemas.ts';
import type { BrandToolDeps } from './discovery-tool-deps.ts';

const ruleViewSchema = z.object({
  /** Pass it as `eventId` to process_event instead of eventType. */
  eventId: z.string(),
  eventType: z.string(),
  /** pts paid per accepted event. */
  rewardAmount: z.number().int(),
  /** Hours a user must wait between two rewarded events of this type (0 = none). */
  cooldownHours: z.number().int(),
  /** Rewarded events per user; -1 = unlimited. */
  maxClaimsPerUser: z.number().int(),
  /** Rewarded events across all users; -1 = unlimited. */
  maxTotalClaims: z.number().int(),
  /** What is left of maxTotalClaims; null when unlimited. */
  remainingTotalClaims: z.number().int().nullable(),
  detectionMethod: z.string(),
});

/** `get_brand`: A brand's program: its events with amounts, cooldowns and caps. */
export function getBrandTool(d: BrandToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_brand',
    method: 'get',
    path: '/brands/:brandId',
    summary: "A brand's program: its events with amounts, cooldowns and caps",
    description:
      'The brand (domain, category, whether it rewards events now) and every ACTIVE event rule: the reward in ' +
      'pts, the cooldown in hours between two rewards of one user, the per-user cap and the total cap (-1 = ' +
      'unlimited) and what is left of the total cap (null when unlimited). An empty `events` list means the brand rewards nothing ' +
      'yet. 404 not_found for an unknown Brand ID.',
    access: 'public',
    request: { params: brandParams },
    result: z.object({ brand: brandViewSchema, events: z.array(ruleViewSchema) }),
    example: (fixture) => ({ params: { brandId: fixture.brandId } }),
    async handle({ params }) {
      const brand = await rememberRead(d, 'directory_brand', params.brandId, () =>
        d.discoveryReads.findDirectoryBrand(params.brandId),
      );
      if (!brand) throw brandNotFound(params.brandId);
      // The rules as the event path holds them (its brand cache, dropped at once by any rule change), in
      // event type order; only what is left of a capped rule is read live (it moves with every event).
      const cached = await d.events.brands.get(brand.brandId);
      if (!cached) throw brandNotFound(params.brandId);
      const rules = [...cached.rulesByType.values()].filter((row) => row.active).map(toRule);
      const capped = rules.filter((rule) => rule.maxTotal !== null).map((rule) => rule.eventId);
      const totals = await d.discoveryReads.readRuleTotals(brand.brandId, capped);
      return {
        brand: toBrandView(brand),
        events: rules.map((rule) => ({
          eventId: rule.eventId,
          eventType: rule.eventType,
          rewardAmount: rule.rewardAmount,
          cooldownHours: rule.cooldownHours,
          maxClaimsPerUser: ruleCapOut(rule.maxClaims),
          maxTotalClaims: optionalLimitOut(rule.maxTotal),
          remainingTotalClaims:
            rule.maxTotal === null ? null : Math.max(0, rule.maxTotal - (totals.get(rule.eventId) ?? 0)),
          detectionMethod: rule.detectionMethod,
        })),
      };
    },
  });
}
