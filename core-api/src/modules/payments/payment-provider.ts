/** A provider's view of a checkout session, re-fetched whenever a decision depends on it. */
export interface CheckoutSession {
  id: string;
  paymentStatus: 'paid' | 'unpaid' | 'no_payment_required';
  /** `open`, `complete` or `expired`; null when the provider does not say. */
  status: string | null;
  metadata: Record<string, string>;
  /** Total charged in the currency's minor unit (cents); null when the provider does not say. */
  amountTotal: number | null;
  currency: string | null;
  paymentIntentId: string | null;
}

export interface CreateCheckoutSessionInput {
  brandId: string;
  brandName: string;
  amountCents: number;
  currency: string;
  customerEmail: string;
  /** May contain `{CHECKOUT_SESSION_ID}`, replaced by the session id on the way back. */
  successUrl: string;
  cancelUrl: string;
  productName: string;
  metadata: Record<string, string>;
}

export interface CreatedCheckoutSession {
  id: string;
  /** The hosted payment page. The local provider answers a path on this service (`/pts-api/checkout/…`). */
  url: string;
}

/** A verified inbound notification. */
export interface PaymentWebhookEvent {
  id: string;
  type: string;
  /** The checkout session the event is about, when it is about one. */
  sessionId: string | undefined;
}

/**
 * The payment port (CONVENTIONS habit 5): Stripe in production, an embedded local provider by default.
 * Adapters throw `AppError` SERVICE_UNAVAILABLE (reason `payment_provider_unavailable`) when the provider
 * cannot be reached, and VALIDATION_ERROR (reason `invalid_webhook_signature`) for a webhook that fails
 * verification.
 */
export interface PaymentProvider {
  readonly name: 'local' | 'stripe';
  createCheckoutSession(input: CreateCheckoutSessionInput): Promise<CreatedCheckoutSession>;
  /** The session as the provider sees it now; undefined when the provider does not know the id. */
  retrieveSession(id: string): Promise<CheckoutSession | undefined>;
  /** Verifies the signature over the exact raw body (with a timestamp tolerance) and parses the event. */
  verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined): PaymentWebhookEvent;
}

/** Appends `session_id={CHECKOUT_SESSION_ID}` unless the URL already carries the placeholder. */
export function withSessionIdPlaceholder(url: string): string {
  if (url.includes('{CHECKOUT_SESSION_ID}')) return url;
  const hashAt = url.indexOf('#');
  const base = hashAt === -1 ? url : url.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : url.slice(hashAt);
  return `${base}${base.includes('?') ? '&' : '?'}session_id={CHECKOUT_SESSION_ID}${hash}`;
}
