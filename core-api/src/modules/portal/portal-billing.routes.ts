import {
  CHECKOUT_MAX_CENTS,
  CHECKOUT_MIN_CENTS,
  createCheckoutResponseSchema,
  paymentMintResponseSchema,
  portalBillingSchema,
  portalBrandParamsSchema,
  portalCheckoutParamsSchema,
  portalCheckoutRequestSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { tokensForCents } from '../payments/payment-amounts.ts';
import type { PaymentService } from '../payments/payments.service.ts';
import type { RelayRecords } from '../relayer/relay.service.ts';
import { gasUsageView } from '../relayer/relayer-gas.routes.ts';
import { actorOf, baseUrlOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

/** What the Billing page's routes use: the checkout of `/pts-api/create-checkout` and the relayer's gas ledger. */
export interface PortalBillingDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  /** The purchases (the same service as `/pts-api/create-checkout` and `/pts-api/payment-mint`). */
  payments: PaymentService;
  /** The relayer gas charged to the brand. */
  relayRecords: RelayRecords;
  /** `PTS_PUBLIC_URL`: the base of the Billing page the checkout returns to (the request's host when unset). */
  publicUrl?: string | undefined;
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
  const { team, payments } = deps;
  const signedIn = [requireSession(deps.auth)];
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
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        const { purchases, totals } = await payments.brandPurchases(brandId);
        const [gas] = await deps.relayRecords.gasByBrand(brandId);
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
        await team.requireRole(user.id, brandId, 'admin');
        const page = billingUrl(baseUrlOf(req, deps.publicUrl), brandId);
        const created = await payments.createCheckout(
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
          checkoutUrl: new URL(created.checkoutUrl, baseUrlOf(req, deps.publicUrl)).toString(),
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
        await team.requireRole(portalUserOf(res).id, brandId, 'admin');
        return payments.fulfil(sessionId, { brandId });
      },
    }),
  ];
}
