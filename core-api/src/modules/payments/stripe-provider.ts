import { AppError, type Clock } from '@pts/shared';
import Stripe from 'stripe';
import type { CheckoutSession, PaymentProvider, PaymentWebhookEvent } from './payment-provider.ts';

export interface StripeProviderOptions {
  secretKey: string;
  /** `whsec_…`; without it every webhook is refused with 503 (so Stripe keeps retrying until it is set). */
  webhookSecret?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  protocol?: 'http' | 'https' | undefined;
  /** Webhook timestamps older than this are refused (replays). Stripe's own default. */
  toleranceSeconds?: number;
  clock: Clock;
}

/** Stripe's error classes carry `type` and `statusCode`; matching on them avoids importing the classes. */
interface StripeLikeError {
  type?: string;
  statusCode?: number;
  code?: string;
  message?: string;
}

function unavailable(error: unknown): AppError {
  const message = (error as StripeLikeError)?.message ?? String(error);
  return new AppError('SERVICE_UNAVAILABLE', `The payment provider (Stripe) did not answer: ${message}; retry later`, {
    reason: 'payment_provider_unavailable',
  });
}

/** Network failures, Stripe outages and rate limits are worth a retry; anything else is a bug or bad config. */
function isTransient(error: unknown): boolean {
  const { type, statusCode } = (error ?? {}) as StripeLikeError;
  return (
    type === 'StripeConnectionError' ||
    type === 'StripeAPIError' ||
    type === 'StripeRateLimitError' ||
    (typeof statusCode === 'number' && (statusCode >= 500 || statusCode === 429))
  );
}

const KNOWN_PAYMENT_STATUSES = ['paid', 'unpaid', 'no_payment_required'] as const;

function toCheckoutSession(session: Stripe.Checkout.Session): CheckoutSession {
  const intent = session.payment_intent;
  return {
    id: session.id,
    // Only `paid` ever mints; a status this client does not know is treated as not paid.
    paymentStatus: KNOWN_PAYMENT_STATUSES.find((known) => known === session.payment_status) ?? 'unpaid',
    status: session.status ?? null,
    metadata: { ...(session.metadata ?? {}) },
    amountTotal: session.amount_total ?? null,
    currency: session.currency ?? null,
    paymentIntentId: typeof intent === 'string' ? intent : (intent?.id ?? null),
  };
}

/** The Stripe adapter: Checkout Sessions through the official client, webhooks verified with its scheme. */
export function createStripePaymentProvider(options: StripeProviderOptions): PaymentProvider {
  const stripe = new Stripe(options.secretKey, {
    ...(options.host ? { host: options.host } : {}),
    ...(options.port ? { port: options.port } : {}),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'pts-core-api' },
  });
  const tolerance = options.toleranceSeconds ?? 300;

  return {
    name: 'stripe',

    async createCheckoutSession(input) {
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create({
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: input.currency,
                unit_amount: input.amountCents,
                product_data: { name: input.productName },
              },
            },
          ],
          customer_email: input.customerEmail,
          client_reference_id: input.brandId,
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          metadata: input.metadata,
          payment_intent_data: { metadata: input.metadata },
        });
      } catch (error) {
        if (isTransient(error)) throw unavailable(error);
        throw error;
      }
      if (!session.url) throw new Error(`Stripe created checkout session ${session.id} without a url`);
      return { id: session.id, url: session.url };
    },

    async retrieveSession(id) {
      try {
        return toCheckoutSession(await stripe.checkout.sessions.retrieve(id));
      } catch (error) {
        const { statusCode, code } = (error ?? {}) as StripeLikeError;
        if (statusCode === 404 || code === 'resource_missing') return undefined;
        if (isTransient(error)) throw unavailable(error);
        throw error;
      }
    },

    verifyWebhook(rawBody, signatureHeader): PaymentWebhookEvent {
      if (!options.webhookSecret) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'Stripe webhooks are not configured on this server: set PTS_STRIPE_WEBHOOK_SECRET',
          { reason: 'webhook_not_configured' },
        );
      }
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(
          rawBody,
          signatureHeader ?? '',
          options.webhookSecret,
          tolerance,
          undefined,
          options.clock.now().getTime(),
        );
      } catch (error) {
        throw new AppError('VALIDATION_ERROR', `Invalid Stripe webhook: ${(error as Error).message}`, {
          reason: 'invalid_webhook_signature',
          field: 'stripe-signature',
        });
      }
      const object = event.data?.object as { object?: string; id?: string } | undefined;
      return {
        id: event.id,
        type: event.type,
        sessionId: object?.object === 'checkout.session' && typeof object.id === 'string' ? object.id : undefined,
      };
    },
  };
}
