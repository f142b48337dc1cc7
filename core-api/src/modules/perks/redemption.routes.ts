import { perkRedemptionRequestSchema, perkRedemptionResponseSchema } from '@pts/shared';
import {
  type BrandSignatureVerifier,
  hasBrandSignature,
  requireBrandSignature,
  signatureRequired,
} from '../../http/brand-signature.ts';
import { idempotencyKeyOf } from '../../http/idempotency-key.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { parseInput } from '../../http/validate.ts';
import type { RedemptionService } from './redemption.service.ts';

const BODY_LIMIT_BYTES = 8 * 1024;

/** What the redeem route uses from the app: the process's one redemption service (compose.ts). */
export type RedemptionRouterDeps = { redemption: RedemptionService; verifyBrandSignature: BrandSignatureVerifier };

/**
 * `POST /perks/redeem` of the services router (spec 4.3, brand-signed): checks balance, supply, per-user
 * maximum and constraints, then pays with the user's custodial wallet (permit) through the relayer.
 */
export function redemptionRoutes(deps: RedemptionRouterDeps): Route[] {
  const service = deps.redemption;

  return [
    defineRoute({
      method: 'post',
      path: '/perks/redeem',
      summary: "Redeem a perk for a user: pay with the user's custodial wallet and claim through the relayer",
      description:
        'Brand-signed (X-PTS-Timestamp, X-PTS-Signature). `perkId` is the perk uuid or its integer id. Checks, in ' +
        'order: perk active, balance (minus pending redemptions) ≥ cost, supply left, per-user maximum, constraints; ' +
        "then the user's wallet signs an EIP-2612 permit and the relayer sends PointsSale.claimPerkWithPermit. " +
        '200 when mined; 202 `status: pending` when not mined within PTS_RELAYER_WAIT_MS (the code stays valid). ' +
        '`idempotencyKey` (or the `Idempotency-Key` header): a repeat for the same brand and member answers the ' +
        'first redemption with `replayed: true` and spends nothing; the same key for another perk is 409.',
      tags: ['perks'],
      security: ['brandSignature'],
      // An unsigned request is refused before its body is validated.
      request: { body: perkRedemptionRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES, validateBody: false },
      responses: {
        200: { description: 'Redeemed', schema: perkRedemptionResponseSchema },
        202: { description: 'Sent; not mined yet', schema: perkRedemptionResponseSchema },
        400: failure('Validation failed, or the user has no wallet yet (NO_WALLET)'),
        401: failure('Missing or bad brand signature'),
        403: failure('NOT_ELIGIBLE: a constraint is not met (details.failed)'),
        404: failure('Unknown perk (or another brand’s)'),
        409: failure(
          'INSUFFICIENT_BALANCE (details.missing), SOLD_OUT, CLAIM_LIMIT_REACHED, PERK_UNAVAILABLE; CONFLICT: the idempotency key was used for another perk',
        ),
        500: failure('TRANSACTION_FAILED: the claim was mined and reverted; nothing was spent'),
        501: failure('NOT_IMPLEMENTED: wallets are not custodial here (Privy)'),
        503: failure('Chain or contracts unavailable'),
      },
      handle: async ({ req, res }) => {
        if (!hasBrandSignature(req)) throw signatureRequired('Redeeming a perk');
        const input = parseInput(perkRedemptionRequestSchema, req.body);
        await requireBrandSignature(deps.verifyBrandSignature, req, input.brandId, 'Redeeming a perk');
        const outcome = await service.redeem({ ...input, idempotencyKey: idempotencyKeyOf(req, input.idempotencyKey) });
        res.setHeader('Cache-Control', 'no-store');
        res.status(outcome.status);
        return outcome.body;
      },
    }),
  ];
}
