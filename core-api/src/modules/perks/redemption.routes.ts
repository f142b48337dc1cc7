import { errorEnvelopeSchema, perkRedemptionRequestSchema, perkRedemptionResponseSchema } from '@pts/shared';
import { Router } from 'express';
import {
  type BrandSignatureVerifier,
  hasBrandSignature,
  requireBrandSignature,
  signatureRequired,
} from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import type { RedemptionService } from './redemption.service.ts';

const BODY_LIMIT_BYTES = 8 * 1024;

/** What the redeem route uses from the app: the process's one redemption service (compose.ts). */
export type RedemptionRouterDeps = { redemption: RedemptionService; verifyBrandSignature: BrandSignatureVerifier };

/**
 * `POST /perks/redeem` of the services router (spec 4.3, brand-signed): checks balance, supply, per-user
 * maximum and constraints, then pays with the user's custodial wallet (permit) through the relayer.
 */
export function createRedemptionRouter(deps: RedemptionRouterDeps): Router {
  const router = Router();
  const service = deps.redemption;

  router.post('/perks/redeem', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    if (!hasBrandSignature(req)) throw signatureRequired('Redeeming a perk');
    const input = parseInput(perkRedemptionRequestSchema, req.body);
    await requireBrandSignature(deps.verifyBrandSignature, req, input.brandId, 'Redeeming a perk');
    const outcome = await service.redeem(input);
    res.setHeader('Cache-Control', 'no-store');
    res.status(outcome.status).json(outcome.body);
  });

  return router;
}

/** OpenAPI entry of the redeem route. */
export function registerRedemptionDocs(docs: ApiDocs, prefix = '/services'): void {
  const error = (description: string) => ({ description, schema: errorEnvelopeSchema });
  docs.register({
    method: 'post',
    path: `${prefix}/perks/redeem`,
    summary: "Redeem a perk for a user: pay with the user's custodial wallet and claim through the relayer",
    description:
      'Brand-signed (X-PTS-Timestamp, X-PTS-Signature). `perkId` is the perk uuid or its integer id. Checks, in ' +
      'order: perk active, balance (minus pending redemptions) ≥ cost, supply left, per-user maximum, constraints; ' +
      "then the user's wallet signs an EIP-2612 permit and the relayer sends PointsSale.claimPerkWithPermit. " +
      '200 when mined; 202 `status: pending` when not mined within PTS_RELAYER_WAIT_MS (the code stays valid).',
    tags: ['perks'],
    request: { body: perkRedemptionRequestSchema },
    responses: {
      200: { description: 'Redeemed', schema: perkRedemptionResponseSchema },
      202: { description: 'Sent; not mined yet', schema: perkRedemptionResponseSchema },
      400: error('Validation failed, or the user has no wallet yet (NO_WALLET)'),
      401: error('Missing or bad brand signature'),
      403: error('NOT_ELIGIBLE: a constraint is not met (details.failed)'),
      404: error('Unknown perk (or another brand’s)'),
      409: error('INSUFFICIENT_BALANCE (details.missing), SOLD_OUT, CLAIM_LIMIT_REACHED, PERK_UNAVAILABLE'),
      500: error('TRANSACTION_FAILED: the claim was mined and reverted; nothing was spent'),
      501: error('NOT_IMPLEMENTED: wallets are not custodial here (Privy)'),
      503: error('Chain or contracts unavailable'),
    },
  });
}
