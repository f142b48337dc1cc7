import { balanceParamsSchema, balanceResponseSchema, identityKeyOf } from '@pts/shared';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BalanceService } from './balances.service.ts';

export interface BalancesRouterDeps {
  balances: BalanceService;
  verifyBrandSignature: BrandSignatureVerifier;
}

/**
 * `GET /balance/:brandId/:userIdentifier` (brand-signed, under `/services`): what a chat user or site visitor
 * can spend — the live on-chain balance of their wallet, never a cached figure — plus rewards accepted and
 * not yet confirmed. One token serves every brand, so the balance is the wallet's, whichever brand asks.
 */
export function balanceRoutes(deps: BalancesRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/balance/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A user's spendable tokens (live on chain) and rewards not yet confirmed",
      security: ['brandSignature'],
      request: { params: balanceParamsSchema },
      responses: {
        200: { description: 'The balance', schema: balanceResponseSchema },
        400: failure('Malformed brand id or identifier'),
        401: failure('Unsigned or badly signed'),
      },
      handle: async ({ params: { brandId, userIdentifier: identityKey }, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, "Reading a user's balance");
        const { figures } = await deps.balances.figures(brandId, identityKeyOf(identityKey));
        const { walletAddress, onChain: balance, pending } = figures;
        res.setHeader('Cache-Control', 'no-store');
        return { success: true, brandId, userIdentifier: identityKey, walletAddress, balance, pending, figures };
      },
    }),
  ];
}
