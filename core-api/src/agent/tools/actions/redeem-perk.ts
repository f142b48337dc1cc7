import { brandIdSchema, idempotencyKeySchema, perkRedemptionResponseSchema, perkRefSchema } from '@pts/shared';
import { z } from 'zod';
import { requireBrandAuthority, requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { RedeemToolDeps } from './actions-tool-deps.ts';
import { userIdSchema } from './event-requests.ts';
import { userNotFound } from './member-views.ts';

/** `redeem_perk`: Redeem a brand's perk for a user, paid from the user's pts. */
export function redeemPerkTool(d: RedeemToolDeps): AgentTool {
  const deps = d;
  // The process's one redemption service (compose.ts), shared with /services/perks/redeem.
  const { redemption } = d;
  return defineAgentTool({
    name: 'redeem_perk',
    method: 'post',
    path: '/perks/redeem',
    summary: "Redeem a brand's perk for a user, paid from the user's pts",
    description:
      "Pays a perk of a brand this key acts for from the user's custodial wallet (pts are one token across " +
      'brands) and claims it on chain. `perkId` is the perk uuid or integer id (get_brand_perks). Checks, in ' +
      'order: perk active, spendable balance (minus pending redemptions) ≥ cost, supply, per-user maximum, ' +
      'eligibility constraints. Two redemptions racing for the same pts cannot both pass. The answer has a ' +
      'confirmation code and status confirmed (mined) or pending (sent, not mined yet). 409 for insufficient ' +
      'balance (details.missing), sold out or limit reached; 404 for an unknown perk or user; 403 when the key ' +
      "does not act for the brand. `idempotencyKey` (as process_event's externalId): a retry with the same key " +
      'for the same member answers the first redemption (replayed: true) and spends nothing; the same key for ' +
      'another perk is 409.',
    access: 'key',
    request: {
      body: z.object({
        perkId: perkRefSchema,
        userId: userIdSchema,
        brandId: brandIdSchema,
        idempotencyKey: idempotencyKeySchema.optional(),
      }),
    },
    result: perkRedemptionResponseSchema,
    example: (fixture) => ({ body: { perkId: fixture.perkId, userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ body }, context) {
      requireBrandAuthority(context.principal, body.brandId, 'Redeeming a perk');
      await requireKnownBrand(d, body.brandId);
      const account = await deps.actionsReads.resolveAccountKey(body.userId);
      if (!(await deps.actionsReads.findUsers([account])).has(account)) throw userNotFound(body.userId);
      const outcome = await redemption.redeem({
        brandId: body.brandId,
        perkId: body.perkId,
        userIdentifier: body.userId,
        idempotencyKey: body.idempotencyKey,
      });
      return outcome.body;
    },
  });
}
