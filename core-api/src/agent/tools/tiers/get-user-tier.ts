import { memberTierResponseSchema } from '@pts/shared';
import { z } from 'zod';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { AgentToolDeps } from '../../agent-tool-deps.ts';
import { userBrandParams } from '../actions/member-views.ts';

/** The tier reads: a member's standing over the brand's table (modules/tiers). */
export type TierToolDeps = Pick<AgentToolDeps, 'tiers'>;

const standing = memberTierResponseSchema.shape;

/** A member's standing as every agent answer shapes it (get_user_tier, get_user_stats, get_user_persona). */
export const tierStandingSchema = z.object({
  tier: standing.tier,
  multiplier: standing.multiplier,
  next: standing.next,
  progress: standing.progress,
});
export type TierStanding = z.infer<typeof tierStandingSchema>;

/** The standing of the tier service's answer, without its envelope. */
export function tierStandingOf(answer: z.infer<typeof memberTierResponseSchema>): TierStanding {
  return { tier: answer.tier, multiplier: answer.multiplier, next: answer.next, progress: answer.progress };
}

const resultSchema = z.object({
  brandId: standing.brandId,
  userId: standing.userIdentifier,
  tier: standing.tier,
  multiplier: standing.multiplier,
  next: standing.next,
  progress: standing.progress,
});
type Result = z.infer<typeof resultSchema>;

/** `get_user_tier`: a member's VIP tier at a brand, the next tier and what is left to reach it. */
export function getUserTierTool(d: TierToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_tier',
    method: 'get',
    path: '/users/:userId/brands/:brandId/tier',
    summary: "A member's VIP tier at a brand, the next tier and what is left to reach it",
    description:
      'The same standing as the brand-signed GET /services/tier (docs/tiers.md): `tier` is the tier the member ' +
      'holds (null while the brand has no tiers), `multiplier` its earning multiplier, `next` the next tier ' +
      '(null at the top); `progress.current` is the total over the brand’s period (pts for basis `earned`, an ' +
      'amount of the brand’s currency for `spent`) and `progress.remaining` what is left to reach `next`. ' +
      'A promotion is kept until the period turns; `progress.graceUntil` says when a grace ends. 403 when the key ' +
      'does not act for the brand.',
    access: 'key',
    request: { params: userBrandParams },
    result: resultSchema,
    example: (fixture) => ({ params: { userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a member's tier");
      const {
        success: _ok,
        userIdentifier,
        ...standing
      } = await d.tiers.member(params.brandId, params.userId.toLowerCase());
      const answer: Result = { ...standing, userId: userIdentifier };
      return answer;
    },
  });
}
