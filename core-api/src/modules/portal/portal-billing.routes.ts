import {
  AppError,
  CHECKOUT_MAX_CENTS,
  CHECKOUT_MIN_CENTS,
  type Clock,
  createCheckoutResponseSchema,
  paymentMintResponseSchema,
  portalBillingSchema,
  portalBrandParamsSchema,
  portalCheckoutParamsSchema,
  portalCheckoutRequestSchema,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { ChainInfo } from '../../chain/chain-info.ts';
import type { Minter } from '../../chain/minter.types.ts';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { tokensForCents } from '../payments/payment-amounts.ts';
import type { PaymentProvider } from '../payments/payment-provider.ts';
import { findPayment } from '../payments/payments.repository.ts';
import { createCheckout, fulfilPayment, listBrandPurchases, paymentDepsFrom } from '../payments/payments.service.ts';
import { gasUsageView } from '../relayer/relayer-gas.routes.ts';
import { actorOf, baseUrlOf } from './portal.routes.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import { requireRole } from './portal-team.service.ts';

/** What the Billing page's routes use: the checkout of `/pts-api/create-checkout` and the relayer's gas ledger. */
export interface PortalBillingDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  minter: Minter;
  config: Config;
  payments: PaymentProvider;
  chain: ChainInfo;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notMember = failure('No such brand among yours');

/**
 * The Billing page (docs/portal.md): token purchases through the same checkout and fulfilment as the public
 * API, the purchase history, and the relayer gas charged to the brand. Buying needs admin or owner.
 */
export function portalBillingRoutes(deps: PortalBillingDeps): Route[] {
  const signedIn = [requireSession(deps)];
  const payment = paymentDepsFrom(deps);
  const billingUrl = (baseUrl: string, brandId: string) => `${baseUrl}/portal/brands/${brandId}/billing`;

  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/billing',
      summary: "The brand's token purchases with totals, and the relayer gas charged to it",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Billing', schema: portalBillingSchema }, 401: signedOut, 404: notMember },
      handle: async ({ params: { brandId }, res }) => {
        await requireRole(deps.db, portalUserOf(res).id, brandId, 'viewer');
        const { purchases, totals } = await listBrandPurchases(deps, brandId);
        const [gas] = await readGasByBrand(deps.db, deps.chain.chainId, brandId);
        return {
          success: true,
          purchases,
          totals,
          gas: gasUsageView(gas?.gasUsed ?? 0n, gas?.costWei ?? 0n, gas?.transactions ?? 0),
          checkout: {
            minCents: CHECKOUT_MIN_CENTS,
            maxCents: CHECKOUT_MAX_CENTS,
            tokensPerUsd: Number(tokensForCents(100n)),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/checkout',
      summary: 'Buy tokens for the brand (admin): opens the same hosted checkout as /pts-api/create-checkout',
      description: 'The browser goes to `checkoutUrl`; paying brings it back to the Billing page.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema, body: portalCheckoutRequestSchema },
      responses: {
        200: { description: 'Checkout opened', schema: createCheckoutResponseSchema },
        400: failure('Amount not a whole number of cents from 100 to 1,000,000'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
        503: failure('Payment provider unreachable; retry'),
      },
      handle: async ({ params: { brandId }, body, req, res }) => {
        const user = portalUserOf(res);
        await requireRole(deps.db, user.id, brandId, 'admin');
        const page = billingUrl(baseUrlOf(req, deps.config.PTS_PUBLIC_URL), brandId);
        const created = await createCheckout(
          payment,
          {
            brandId,
            amount: body.amount,
            currency: 'usd',
            userEmail: user.email,
            successUrl: `${page}?session_id={CHECKOUT_SESSION_ID}`,
            cancelUrl: `${page}?checkout=canceled`,
          },
          { actor: actorOf(user) },
        );
        return {
          success: true,
          checkoutUrl: new URL(created.checkoutUrl, baseUrlOf(req, deps.config.PTS_PUBLIC_URL)).toString(),
          sessionId: created.sessionId,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/purchases/:sessionId/confirm',
      summary: "Mint a paid purchase's tokens now (admin; idempotent, the same fulfilment as /pts-api/payment-mint)",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalCheckoutParamsSchema },
      responses: {
        200: { description: 'Minted, queued, or already processed', schema: paymentMintResponseSchema },
        400: failure('Malformed session id, or the session does not match what was bought'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such purchase of it'),
        409: failure('Not paid yet'),
        503: failure('Payment provider unreachable; retry'),
      },
      handle: async ({ params: { brandId, sessionId }, res }) => {
        await requireRole(deps.db, portalUserOf(res).id, brandId, 'admin');
        const purchase = await findPayment(deps.db, sessionId);
        if (purchase?.brand_id !== brandId) {
          throw new AppError('NOT_FOUND', `No purchase ${sessionId} of this brand`, { field: 'sessionId' });
        }
        return fulfilPayment(payment, sessionId);
      },
    }),
  ];
}
