import type { Clock } from '@pts/shared';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createLocalPaymentProvider } from './local-provider.ts';
import type { PaymentProvider } from './payment-provider.ts';
import { createStripePaymentProvider } from './stripe-provider.ts';

// The port (payment-provider.ts) knows no adapter; this file picks one (the adapters import the port).

/** Stripe when `PTS_STRIPE_SECRET_KEY` is set, otherwise the embedded local provider. */
export function createPaymentProvider(config: Config, deps: { db: Database; clock: Clock }): PaymentProvider {
  if (config.PTS_STRIPE_SECRET_KEY) {
    return createStripePaymentProvider({
      secretKey: config.PTS_STRIPE_SECRET_KEY,
      webhookSecret: config.PTS_STRIPE_WEBHOOK_SECRET,
      host: config.PTS_STRIPE_HOST,
      port: config.PTS_STRIPE_PORT,
      protocol: config.PTS_STRIPE_PROTOCOL,
      clock: deps.clock,
    });
  }
  return createLocalPaymentProvider(deps);
}
