import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, type Clock } from '@pts/shared';
import type { Selectable } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { LocalCheckoutSessionsTable } from '../../db/schema.ts';
import type { CheckoutSession, PaymentProvider } from './payment-provider.ts';

export type LocalCheckoutSession = Selectable<LocalCheckoutSessionsTable>;

/** What the hosted page's Pay and Cancel buttons can lead to. */
export type HostedSessionAction =
  | { result: 'done'; session: LocalCheckoutSession }
  | { result: 'not_found' }
  | { result: 'bad_token' }
  | { result: 'not_open'; session: LocalCheckoutSession };

/** The embedded provider: checkout sessions in a table and a hosted page served by core-api itself. */
export interface LocalPaymentProvider extends PaymentProvider {
  readonly name: 'local';
  findHostedSession(id: string): Promise<LocalCheckoutSession | undefined>;
  /** Marks an open session paid when `formToken` matches; paying an already paid session is `done` again. */
  payHostedSession(id: string, formToken: string): Promise<HostedSessionAction>;
  /** Expires an open session when `formToken` matches. */
  cancelHostedSession(id: string, formToken: string): Promise<HostedSessionAction>;
}

/** Path of the hosted page of a local session, relative to this service. */
export function localCheckoutPath(sessionId: string): string {
  return `/pts-api/checkout/${encodeURIComponent(sessionId)}`;
}

function tokensMatch(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function toCheckoutSession(row: LocalCheckoutSession): CheckoutSession {
  return {
    id: row.id,
    paymentStatus: row.payment_status,
    status: row.status,
    metadata: row.metadata,
    amountTotal: Number(row.amount_total),
    currency: row.currency,
    paymentIntentId: row.payment_intent_id,
  };
}

export function isLocalPaymentProvider(provider: PaymentProvider): provider is LocalPaymentProvider {
  return provider.name === 'local';
}

/** Lets `npm start` demonstrate a purchase end to end with no payment account. Never charges anyone. */
export function createLocalPaymentProvider(deps: { db: Database; clock: Clock }): LocalPaymentProvider {
  const { db, clock } = deps;

  async function act(
    id: string,
    formToken: string,
    apply: (row: LocalCheckoutSession, trx: Database) => Promise<HostedSessionAction>,
  ): Promise<HostedSessionAction> {
    return db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('local_checkout_sessions')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return { result: 'not_found' };
      if (!tokensMatch(row.form_token, formToken)) return { result: 'bad_token' };
      return apply(row, trx);
    });
  }

  return {
    name: 'local',

    async createCheckoutSession(input) {
      const id = `cs_local_${randomBytes(16).toString('hex')}`;
      const now = clock.now();
      await db
        .insertInto('local_checkout_sessions')
        .values({
          id,
          brand_id: input.brandId,
          brand_name: input.brandName,
          amount_total: input.amountCents,
          currency: input.currency,
          customer_email: input.customerEmail,
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          metadata: JSON.stringify(input.metadata),
          status: 'open',
          payment_status: 'unpaid',
          payment_intent_id: null,
          form_token: randomBytes(32).toString('hex'),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { id, url: localCheckoutPath(id) };
    },

    async retrieveSession(id) {
      const row = await db.selectFrom('local_checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toCheckoutSession(row) : undefined;
    },

    verifyWebhook() {
      throw new AppError(
        'VALIDATION_ERROR',
        'The local payment provider sends no webhooks; payments complete on its hosted page. Set PTS_STRIPE_SECRET_KEY to use Stripe',
        { reason: 'webhooks_not_supported' },
      );
    },

    findHostedSession: (id) =>
      db.selectFrom('local_checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst(),

    payHostedSession: (id, formToken) =>
      act(id, formToken, async (row, trx) => {
        if (row.payment_status === 'paid') return { result: 'done', session: row };
        if (row.status !== 'open') return { result: 'not_open', session: row };
        const now = clock.now();
        const session = await trx
          .updateTable('local_checkout_sessions')
          .set({
            status: 'complete',
            payment_status: 'paid',
            payment_intent_id: `pi_local_${randomBytes(12).toString('hex')}`,
            updated_at: now,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { result: 'done', session };
      }),

    cancelHostedSession: (id, formToken) =>
      act(id, formToken, async (row, trx) => {
        if (row.status !== 'open') return { result: 'not_open', session: row };
        const session = await trx
          .updateTable('local_checkout_sessions')
          .set({ status: 'expired', updated_at: clock.now() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { result: 'done', session };
      }),
  };
}
