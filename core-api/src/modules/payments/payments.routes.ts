import {
  AppError,
  brandIdParamsSchema,
  brandPurchasesResponseSchema,
  checkoutSessionIdSchema,
  createCheckoutRequestSchema,
  createCheckoutResponseSchema,
  isAppError,
  paymentFailureSchema,
  paymentMintRequestSchema,
  paymentMintResponseSchema,
  paymentWebhookResponseSchema,
} from '@pts/shared';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { errorBody, toClientError } from '../../http/errors.ts';
import { publicBaseUrl } from '../../http/public-url.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { CHECKOUT_PAGE_HEADERS, fillSessionId, renderCheckoutMessage, renderCheckoutPage } from './checkout-page.ts';
import { isLocalPaymentProvider } from './local-provider.ts';
import { METADATA, type PaymentService } from './payments.service.ts';

/** What the payment routes use: the payment service (compose.ts builds it) and two settings. */
export type PaymentsRouterDeps = {
  payments: PaymentService;
  /** The event handler's body limit (PTS_BODY_LIMIT_BYTES). */
  bodyLimitBytes: number;
  /** This service's public URL (PTS_PUBLIC_URL): the local checkout URL's base; the request's host when absent. */
  publicUrl: string | undefined;
};

/** Stripe events carry the whole session object; well under this. */
const WEBHOOK_BODY_LIMIT = '512kb';

/** Spec 4.7 failure shape (`success:false, message`) on top of the usual envelope (`error`, `code`, `details`). */
function sendPaymentError(res: Response, error: AppError): void {
  if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
  res.status(error.status).json({ ...errorBody(error), message: error.message });
}

/**
 * Errors of the payment routes, body-parser failures included, in the payment failure shape: mount it after them
 * on their own router.
 */
export function createPaymentErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    let error = toClientError(err);
    if (!error) {
      logger.error({ err, method: req.method, path: req.path }, 'payment request failed');
      error = new AppError('INTERNAL_ERROR', 'Internal error; it has been logged. Retry with back-off');
    } else if (error.status >= 500) logger.error({ err, path: req.path }, error.message);
    sendPaymentError(res, error);
  };
}

/** Absolute checkout URL: the local provider answers a path on this service, reached at its configured address. */
function absoluteUrl(url: string, req: Request, publicUrl: string | undefined): string {
  try {
    return new URL(url, publicBaseUrl(req, publicUrl)).toString();
  } catch {
    return url;
  }
}

function notFound(res: Response): void {
  sendPage(res, 404, renderCheckoutMessage('Checkout not found', 'There is no checkout session with this id.'));
}

function formToken(req: Request): string {
  return typeof req.body?.token === 'string' ? req.body.token : '';
}

/** The page for a Pay or Cancel the session refused: unknown, stale form, or no longer open. */
function answerRefusedAction(
  res: Response,
  result: 'not_found' | 'bad_token' | 'not_open',
  closedTitle: string,
  closedText: string,
): void {
  if (result === 'not_found') notFound(res);
  else if (result === 'bad_token') {
    sendPage(res, 403, renderCheckoutMessage('Checkout form expired', 'Reload the checkout page and try again.'));
  } else sendPage(res, 409, renderCheckoutMessage(closedTitle, closedText));
}

function sendPage(res: Response, status: number, html: string): void {
  res.status(status).set(CHECKOUT_PAGE_HEADERS).send(html);
}

const paymentFailure = (description: string) => ({ description, schema: paymentFailureSchema });
const page = (description: string) => ({ description, contentType: 'text/html' });

/**
 * Token purchases (spec 4.6, 4.7, 6 inbound), relative to where they are mounted (`/pts-api`, on a router whose
 * errors `createPaymentErrorHandler` answers): `POST /create-checkout`, `POST /payment-mint`,
 * `POST /payment-webhook` (raw body, provider signature), and the local provider's hosted page
 * `GET /checkout/:sessionId` with its form posts `POST …/pay` and `…/cancel`.
 */
export function paymentRoutes(deps: PaymentsRouterDeps): Route[] {
  const { payments } = deps;
  // Read as JSON whatever the declared content type, as the seed clients send it.
  const json = { bodyLimitBytes: deps.bodyLimitBytes, bodyReader: 'json-any-type' } as const;

  // The local provider's hosted checkout page. Errors here are HTML pages, not JSON.
  const local = isLocalPaymentProvider(payments.provider) ? payments.provider : undefined;
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const hostedSessionId = (req: Request): string | undefined => {
    const parsed = checkoutSessionIdSchema.safeParse(req.params.sessionId);
    return parsed.success ? parsed.data : undefined;
  };
  // Documented only: a malformed id answers the HTML 404 page, not a JSON 400.
  const hostedParams = z.object({ sessionId: z.string() });
  const formPost = {
    params: hostedParams,
    body: z.object({ token: z.string() }),
    bodyContentType: 'application/x-www-form-urlencoded',
    bodyReader: 'own',
    validateBody: false,
  } as const;
  const formAnswers = {
    303: { description: "Done: redirects to the session's success (or cancel) URL" },
    403: page('The form is stale (wrong token): reload the checkout page'),
    404: page('Unknown session, or Stripe configured'),
    409: page('The session is no longer open'),
  };

  return [
    defineRoute({
      method: 'post',
      path: '/create-checkout',
      summary: 'Open a hosted checkout for a brand buying reward tokens (1 USD = 1000 tokens)',
      description:
        "The tokens go to the brand's own wallet (its Brand ID). `amount` is USD cents, 100 to 1,000,000; only " +
        '`usd` is accepted. The session carries metadata `wallet`, `usd_amount` ("10.00") and `pts_amount` ' +
        '("10000"). `successUrl` gets `session_id={CHECKOUT_SESSION_ID}` appended unless it has the placeholder. ' +
        "With Stripe configured `checkoutUrl` is Stripe Checkout, otherwise this service's local test page.",
      tags: ['payments'],
      request: { body: createCheckoutRequestSchema, ...json },
      responses: {
        200: { description: 'Checkout created', schema: createCheckoutResponseSchema },
        400: paymentFailure('Validation failed (amount, currency, email, URLs)'),
        404: paymentFailure('Unknown brand'),
        503: paymentFailure('Payment provider unreachable; retry'),
      },
      handle: async ({ body, req }) => {
        const created = await payments.createCheckout(body);
        return {
          success: true,
          checkoutUrl: absoluteUrl(created.checkoutUrl, req, deps.publicUrl),
          sessionId: created.sessionId,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/payment-mint',
      summary: 'Mint the tokens of a paid checkout session (idempotent)',
      description:
        'Re-fetches the session from the payment provider. Paid and consistent → the tokens are minted once; a ' +
        'repeat answers `alreadyProcessed: true` and mints nothing. Without `txHash` the mint is queued ' +
        '(`mintStatus: pending`) and the reward processor sends it. Retry 5xx with back-off.',
      tags: ['payments'],
      request: { body: paymentMintRequestSchema, ...json },
      responses: {
        200: { description: 'Minted, queued, or already processed', schema: paymentMintResponseSchema },
        400: paymentFailure('sessionId malformed, session metadata invalid, or amount mismatch (`details.reason`)'),
        404: paymentFailure('Unknown session (`details.reason: session_not_found`)'),
        409: paymentFailure('Payment not completed; the message carries the payment status'),
        500: paymentFailure('Internal error; retry with back-off'),
        503: paymentFailure('Payment provider unreachable; retry with back-off'),
      },
      handle: ({ body: { sessionId } }) => payments.fulfil(sessionId),
    }),
    defineRoute({
      method: 'post',
      path: '/payment-webhook',
      summary: 'Stripe webhook: checkout.session.completed and checkout.session.async_payment_succeeded',
      description:
        'Verifies the `Stripe-Signature` header over the raw body (5-minute tolerance), deduplicates by event id, ' +
        're-fetches the session and fulfils it like payment-mint. Other event types are acknowledged and ignored. ' +
        'Outcomes a retry cannot change (unpaid, rejected) answer 200; transient failures answer 5xx so Stripe ' +
        'retries.',
      tags: ['payments'],
      // The signature covers the exact bytes: read raw, whatever the content type, and verified before parsing.
      before: [express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT })],
      request: { headers: z.object({ 'stripe-signature': z.string() }) },
      responses: {
        200: { description: 'Handled', schema: paymentWebhookResponseSchema },
        400: paymentFailure('Signature missing, wrong or too old'),
        503: paymentFailure('Webhook secret not configured, or Stripe unreachable'),
      },
      handle: ({ req }) => {
        const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        return payments.handleWebhook(rawBody, req.get('stripe-signature'));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/checkout/:sessionId',
      summary: 'Local test checkout page (only with the embedded local payment provider)',
      description:
        'HTML page with the amount, brand, Pay and Cancel; Pay redirects to successUrl, Cancel to cancelUrl.',
      tags: ['payments'],
      request: { params: hostedParams },
      responses: { 200: page('Checkout page'), 404: page('Unknown session or Stripe configured') },
      handle: async ({ req, res }) => {
        const id = hostedSessionId(req);
        const session = local && id ? await local.findHostedSession(id) : undefined;
        if (!session) return notFound(res);
        return sendPage(
          res,
          200,
          renderCheckoutPage({
            sessionId: session.id,
            brandName: session.brand_name,
            brandId: session.brand_id,
            amountCents: BigInt(session.amount_total),
            currency: session.currency,
            ptsAmount: session.metadata[METADATA.ptsAmount] ?? '?',
            customerEmail: session.customer_email,
            status: session.status,
            formToken: session.form_token,
            successUrl: fillSessionId(session.success_url, session.id),
            cancelUrl: session.cancel_url,
          }),
        );
      },
    }),
    defineRoute({
      method: 'post',
      path: '/checkout/:sessionId/pay',
      summary: 'Pay a local test checkout (the form of its page), then mint the tokens',
      tags: ['payments'],
      before: [form],
      request: formPost,
      responses: {
        ...formAnswers,
        default: page('Paid, but the tokens were not minted: the failure status, the page says why'),
      },
      handle: async ({ req, res }) => {
        const id = hostedSessionId(req);
        if (!local || !id) return notFound(res);
        const action = await local.payHostedSession(id, formToken(req));
        if (action.result !== 'done') {
          return answerRefusedAction(
            res,
            action.result,
            'Checkout canceled',
            'This checkout was canceled; start a new one.',
          );
        }
        try {
          await payments.fulfil(id);
        } catch (error) {
          if (!isAppError(error)) throw error;
          return sendPage(
            res,
            error.status,
            renderCheckoutMessage('Payment received, tokens not minted', error.message),
          );
        }
        return res.redirect(303, fillSessionId(action.session.success_url, id));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/checkout/:sessionId/cancel',
      summary: 'Cancel a local test checkout (the form of its page)',
      tags: ['payments'],
      before: [form],
      request: formPost,
      responses: formAnswers,
      handle: async ({ req, res }) => {
        const id = hostedSessionId(req);
        if (!local || !id) return notFound(res);
        const action = await local.cancelHostedSession(id, formToken(req));
        if (action.result !== 'done') {
          return answerRefusedAction(
            res,
            action.result,
            'Checkout closed',
            'This checkout is already paid or canceled.',
          );
        }
        await payments.markCanceled(id);
        return res.redirect(303, action.session.cancel_url);
      },
    }),
  ];
}

/** `GET /brands/:brandId/purchases`, mounted under `/admin` (admin token required). */
export function paymentAdminRoutes(deps: {
  payments: Pick<PaymentService, 'brandPurchases'>;
  adminToken: string;
}): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/purchases',
      summary: "A brand's token purchases with totals (USD, tokens bought, minted, confirmed)",
      tags: ['admin'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Purchases, newest first', schema: brandPurchasesResponseSchema },
        400: failure('Malformed brand id'),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: ({ params: { brandId } }) => deps.payments.brandPurchases(brandId),
    }),
  ];
}
