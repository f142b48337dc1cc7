import { randomUUID } from 'node:crypto';
import {
  AppError,
  type Clock,
  type CurrencyCode,
  type EventResponse,
  formatMinorUnits,
  isAppError,
  type ReversalResponse,
  type ShopifyConnection,
  type ShopifyConnectRequest,
  type ShopifyDelivery,
  type ShopifyDisconnectResponse,
  type ShopifyIntegration,
  type ShopifyWebhookResponse,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import type { ShopifyDeliveryResult } from '../../db/schema.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import type { EventService } from '../events/events.service.ts';
import type { ReversalService } from '../reversals/reversals.service.ts';
import {
  brandExists,
  claimDelivery,
  type DeliveryRefund,
  type DeliveryRow,
  deleteShop,
  findDelivery,
  findShop,
  purchaseEventOf,
  recentDeliveries,
  releaseDelivery,
  type ShopRow,
  settleDelivery,
  settledOrderDelivery,
  upsertShop,
  waitingRefunds,
} from './shopify.repository.ts';
import {
  customerEmailOf,
  orderValueOf,
  refundOrderIdOf,
  refundValueOf,
  shopifyCustomerSchema,
  shopifyIdOf,
  shopifyOrderSchema,
  shopifyRefundSchema,
} from './shopify-orders.ts';
import { verifyShopifyHmac } from './shopify-signature.ts';

export interface ShopifyDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  /** The one event path: a paid order is a `purchase` judged like any other event. */
  events: Pick<EventService, 'recordEvent'>;
  /** The one reversal path: a refund takes back its share of the order's purchase. */
  reversals: Pick<ReversalService, 'reverse'>;
}

/** One webhook request as Shopify sends it: the exact bytes and its `X-Shopify-*` headers. */
export interface ShopifyWebhookRequest {
  rawBody: Buffer;
  hmac: string | undefined;
  topic: string | undefined;
  shopDomain: string | undefined;
  webhookId: string | undefined;
}

export interface ShopifyService {
  /**
   * Connects (or reconnects) the brand's shop: the secret is stored encrypted and never answered. The brand's
   * audit log records `shopify.connect` with the actor (default `admin`), the shop and its settings, never the secret.
   */
  connect(
    brandId: string,
    input: ShopifyConnectRequest,
    baseUrl: string,
    options?: { actor?: string | undefined },
  ): Promise<ShopifyConnection>;
  /**
   * Disconnects the brand's shop (NOT_FOUND when none): its secret is gone, its deliveries stay listed, and a
   * delivery after it answers 404 like one to a brand never connected. Audited as `shopify.disconnect`.
   */
  disconnect(brandId: string, options?: { actor?: string | undefined }): Promise<ShopifyDisconnectResponse>;
  /** The brand's connection (null when none) and its last deliveries, newest first. */
  integration(brandId: string, baseUrl: string, limit?: number): Promise<ShopifyIntegration>;
  /** Verifies, deduplicates and acts on one webhook delivery. */
  receive(brandId: string, request: ShopifyWebhookRequest): Promise<ShopifyWebhookResponse>;
}

/** The topics a connected shop should subscribe the webhook address to. */
export function shopifyTopicsFor(customers: boolean): string[] {
  return customers ? ['orders/paid', 'refunds/create', 'customers/create'] : ['orders/paid', 'refunds/create'];
}

export function shopifyWebhookUrl(baseUrl: string, brandId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/integrations/shopify/${brandId}/webhooks`;
}

const DELIVERIES_SHOWN = 20;
const WEBHOOK_ID_MAX = 200;
const TOPIC_MAX = 100;

interface Outcome {
  result: ShopifyDeliveryResult;
  reason: string | null;
  eventId: string | null;
  rewardAmount: number | null;
  /** refunds/create: what it refunds (kept on the delivery row). */
  refund?: DeliveryRefund | undefined;
}

const failed = (reason: string): Outcome => ({ result: 'failed', reason, eventId: null, rewardAmount: null });
const ignored = (reason: string): Outcome => ({ result: 'ignored', reason, eventId: null, rewardAmount: null });

function connectionOf(row: ShopRow, baseUrl: string): ShopifyConnection {
  return {
    brandId: row.brand_id,
    shopDomain: row.shop_domain,
    valueSource: row.value_source,
    customers: row.customers,
    webhookUrl: shopifyWebhookUrl(baseUrl, row.brand_id),
    topics: shopifyTopicsFor(row.customers),
    connectedAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function deliveryOf(row: DeliveryRow): ShopifyDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    topic: row.topic,
    shopDomain: row.shop_domain,
    result: row.result,
    reason: row.reason,
    orderId: row.order_id,
    eventId: row.event_id,
    rewardAmount: row.reward_amount === null ? null : Number(row.reward_amount),
    receivedAt: row.received_at.toISOString(),
  };
}

function answerOf(outcome: Outcome, duplicate = false): ShopifyWebhookResponse {
  const { result, reason, eventId, rewardAmount } = outcome;
  return { success: true, ...(duplicate ? { duplicate: true as const } : {}), result, reason, eventId, rewardAmount };
}

function requiredHeader(value: string | undefined, name: string, max: number): string {
  const trimmed = value?.trim();
  if (!trimmed) throw new AppError('MISSING_FIELDS', `Header ${name} is missing: Shopify sends it with every webhook`);
  if (trimmed.length > max) throw new AppError('INVALID_FORMAT', `Header ${name} is longer than ${max} characters`);
  return trimmed;
}

/** The order a delivery is about (an order's own id, or a refund's order), null for other topics or bodies. */
function orderIdOf(topic: string, payload: unknown, rawBody: Buffer): string | null {
  if (topic === 'orders/paid') {
    const order = shopifyOrderSchema.safeParse(payload).data;
    return order ? shopifyIdOf(order) : null;
  }
  if (topic === 'refunds/create') {
    const refund = shopifyRefundSchema.safeParse(payload).data;
    const orderId = refund ? refundOrderIdOf(refund, rawBody.toString('utf8')) : null;
    return typeof orderId === 'string' ? orderId : null;
  }
  return null;
}

export function createShopifyService(deps: ShopifyDeps): ShopifyService {
  const { db, clock } = deps;

  /** The rewarded outcome of an event answer (a repeat of the same order is `duplicate`). */
  const rewardedOutcome = (response: EventResponse): Outcome => ({
    result: response.duplicate ? 'duplicate' : 'rewarded',
    reason: response.duplicate ? 'this order was already rewarded (same order id)' : null,
    eventId: response.eventId,
    rewardAmount: response.rewardAmount,
  });

  /** `orders/paid` → a `purchase` of the order's customer with its value, the order id as externalId. */
  const onOrderPaid = async (
    shop: ShopRow,
    payload: unknown,
  ): Promise<{ outcome: Outcome; orderId: string | null }> => {
    const parsed = shopifyOrderSchema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        outcome: failed(`not an order: ${issue?.path.join('.') || 'body'} ${issue?.message ?? ''}`.trim()),
        orderId: null,
      };
    }
    const order = parsed.data;
    const orderId = shopifyIdOf(order);
    const email = customerEmailOf([order.email, order.contact_email, order.customer?.email]);
    const refused = async (reason: string) => {
      await applyWaitingRefunds(shop, orderId, null, reason);
      return { outcome: failed(reason), orderId };
    };
    if (!email) return refused('the order has no customer e-mail: nobody to reward');
    const value = orderValueOf(order, shop.value_source);
    if ('problem' in value) return refused(value.problem);
    let response: EventResponse;
    try {
      response = await deps.events.recordEvent(
        {
          brandId: shop.brand_id,
          eventType: 'purchase',
          userEmail: email,
          value: value.value,
          externalId: orderId,
          metadata: { source: 'shopify', shop: shop.shop_domain, ...(order.name ? { orderName: order.name } : {}) },
        },
        { signed: true },
      );
    } catch (error) {
      if (isAppError(error) && error.status < 500) return refused(error.message);
      throw error;
    }
    const outcome = rewardedOutcome(response);
    await applyWaitingRefunds(shop, orderId, outcome.eventId, outcome.reason);
    return { outcome, orderId };
  };

  /** The reversal id of a Shopify refund: a refund sent again (new webhook id, or applied from waiting) takes once. */
  const reversalIdOf = (refundId: string) => `shopify-refund-${refundId}`;

  /** Takes a refund back from the order's purchase through the one reversal path. */
  const reverseRefund = async (shop: ShopRow, eventId: string, refund: DeliveryRefund): Promise<Outcome> => {
    let response: ReversalResponse;
    try {
      response = await deps.reversals.reverse({
        brandId: shop.brand_id,
        reversalId: reversalIdOf(refund.refundId),
        eventId,
        value: {
          amount: formatMinorUnits(refund.minor, refund.currency as CurrencyCode),
          currency: refund.currency as CurrencyCode,
        },
      });
    } catch (error) {
      if (isAppError(error) && error.status < 500) return { ...failed(error.message), eventId, refund };
      throw error;
    }
    return {
      result: response.duplicate ? 'duplicate' : 'reversed',
      reason: response.duplicate ? 'this refund was already taken back (same refund id)' : null,
      eventId,
      rewardAmount: response.requested,
      refund,
    };
  };

  /**
   * `refunds/create` → a reversal of the order's purchase, by the refunded share of its value. A refund that
   * comes before its order is `waiting`, applied when the order's orders/paid arrives (applyWaitingRefunds).
   */
  const onRefundCreated = async (
    shop: ShopRow,
    payload: unknown,
    rawBody: string,
    claimId: string,
  ): Promise<Outcome> => {
    const parsed = shopifyRefundSchema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return failed(`not a refund: ${issue?.path.join('.') || 'body'} ${issue?.message ?? ''}`.trim());
    }
    const orderId = refundOrderIdOf(parsed.data, rawBody);
    if (typeof orderId !== 'string') return failed(orderId.problem);
    const brand = await db
      .selectFrom('brands')
      .select('currency')
      .where('address', '=', shop.brand_id)
      .executeTakeFirst();
    const value = refundValueOf(parsed.data, shop.value_source, brand?.currency ?? 'USD');
    if ('problem' in value) return failed(value.problem);
    if (value.minor === 0n || value.currency === undefined) {
      return ignored(
        shop.value_source === 'subtotal'
          ? 'the refund returns no goods (no refund_line_items): nothing of the subtotal to take back'
          : 'the refund returns no money (no successful refund transaction): nothing to take back',
      );
    }
    const refund: DeliveryRefund = { refundId: shopifyIdOf(parsed.data), minor: value.minor, currency: value.currency };
    const eventId = await purchaseEventOf(db, shop.brand_id, orderId);
    if (eventId) return reverseRefund(shop, eventId, refund);
    const order = await settledOrderDelivery(db, shop.brand_id, orderId);
    if (order) {
      return {
        ...ignored(`the order earned no points (its orders/paid was ${order.result}: ${order.reason})`),
        refund,
      };
    }
    // Before its order: kept as waiting. The order may have been recorded meanwhile (both at once): look again, and
    // apply it now if so; the reversal id makes the two appliers take it once.
    await settleDelivery(db, claimId, {
      ...ignored('waiting for its order (orders/paid): applied when the order arrives'),
      result: 'waiting',
      refund,
    });
    const raced = await purchaseEventOf(db, shop.brand_id, orderId);
    if (raced) return reverseRefund(shop, raced, refund);
    return {
      ...ignored('waiting for its order (orders/paid): applied when the order arrives'),
      result: 'waiting',
      refund,
    };
  };

  /** The order's refunds that came before it, applied now that it is recorded (or failed, when it earned nothing). */
  const applyWaitingRefunds = async (
    shop: ShopRow,
    orderId: string,
    eventId: string | null,
    orderReason: string | null,
  ) => {
    for (const waiting of await waitingRefunds(db, shop.brand_id, orderId)) {
      const outcome = eventId
        ? await reverseRefund(shop, eventId, waiting)
        : { ...ignored(`the order earned no points: ${orderReason}`), refund: waiting };
      await settleDelivery(db, waiting.id, outcome);
    }
  };

  /** `customers/create` (when the brand enabled it) → `account_creation`, the customer id as externalId. */
  const onCustomerCreated = async (shop: ShopRow, payload: unknown): Promise<Outcome> => {
    if (!shop.customers) return ignored('customers/create is not enabled for this shop (connect it with customers on)');
    const parsed = shopifyCustomerSchema.safeParse(payload);
    if (!parsed.success) return failed('not a customer: it has no id');
    const email = customerEmailOf([parsed.data.email]);
    if (!email) return failed('the customer has no e-mail: nobody to reward');
    const response = await deps.events.recordEvent(
      {
        brandId: shop.brand_id,
        eventType: 'account_creation',
        userEmail: email,
        externalId: `shopify-customer-${shopifyIdOf(parsed.data)}`,
        metadata: { source: 'shopify', shop: shop.shop_domain },
      },
      { signed: true },
    );
    return rewardedOutcome(response);
  };

  const act = async (shop: ShopRow, topic: string, payload: unknown, rawBody: string, claimId: string) => {
    if (topic === 'orders/paid') return onOrderPaid(shop, payload);
    if (topic === 'customers/create') return { outcome: await onCustomerCreated(shop, payload), orderId: null };
    if (topic === 'refunds/create')
      return { outcome: await onRefundCreated(shop, payload, rawBody, claimId), orderId: null };
    return { outcome: ignored(`pts does not act on the topic ${topic}`), orderId: null };
  };

  /** Acts on a claimed delivery: a refusal of the event path is the delivery's failure, a passing fault is thrown. */
  const handle = async (shop: ShopRow, topic: string, payload: unknown, rawBody: string, claimId: string) => {
    try {
      const { outcome } = await act(shop, topic, payload, rawBody, claimId);
      return outcome;
    } catch (error) {
      if (isAppError(error) && error.status < 500) return failed(error.message);
      await releaseDelivery(db, claimId);
      throw error;
    }
  };

  return {
    async connect(brandId, input, baseUrl, options = {}) {
      if (!(await brandExists(db, brandId))) {
        throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, {
          field: 'brandId',
        });
      }
      const now = clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const saved = await upsertShop(
          trx,
          {
            brand_id: brandId,
            shop_domain: input.shopDomain,
            secret_encrypted: deps.secrets.encrypt(input.secret),
            value_source: input.valueSource ?? 'subtotal',
            customers: input.customers ?? false,
          },
          now,
        );
        await insertAuditEntry(trx, {
          actor: options.actor ?? 'admin',
          action: 'shopify.connect',
          subject: brandId,
          details: { shopDomain: saved.shop_domain, valueSource: saved.value_source, customers: saved.customers },
          at: now,
          brandId,
        });
        return saved;
      });
      return connectionOf(row, baseUrl);
    },

    async disconnect(brandId, options = {}) {
      const now = clock.now();
      const removed = await db.transaction().execute(async (trx) => {
        const row = await deleteShop(trx, brandId);
        if (!row) return undefined;
        await insertAuditEntry(trx, {
          actor: options.actor ?? 'admin',
          action: 'shopify.disconnect',
          subject: brandId,
          details: { shopDomain: row.shop_domain },
          at: now,
          brandId,
        });
        return row;
      });
      if (!removed) {
        throw new AppError('NOT_FOUND', `No Shopify shop is connected to brand ${brandId}: nothing to disconnect`);
      }
      return { success: true, brandId, shopDomain: removed.shop_domain };
    },

    async integration(brandId, baseUrl, limit = DELIVERIES_SHOWN) {
      if (!(await brandExists(db, brandId))) {
        throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`);
      }
      const shop = await findShop(db, brandId);
      return {
        success: true,
        connection: shop ? connectionOf(shop, baseUrl) : null,
        webhookUrl: shopifyWebhookUrl(baseUrl, brandId),
        deliveries: (await recentDeliveries(db, brandId, limit)).map(deliveryOf),
      };
    },

    async receive(brandId, request) {
      const shop = await findShop(db, brandId);
      if (!shop) {
        throw new AppError(
          'NOT_FOUND',
          `No Shopify shop is connected to brand ${brandId}: connect it first (pts shopify connect, or the portal's Integrations page)`,
        );
      }
      // Authenticity first: nothing of an unsigned body is read or recorded.
      if (!verifyShopifyHmac(deps.secrets.decrypt(shop.secret_encrypted), request.rawBody, request.hmac)) {
        throw new AppError(
          'INVALID_SIGNATURE',
          request.hmac
            ? "X-Shopify-Hmac-Sha256 does not match the body: the shop signs with another secret than the one connected (reconnect with the shop's webhook secret)"
            : 'X-Shopify-Hmac-Sha256 is missing: only signed Shopify webhooks are accepted',
          { reason: 'shopify_hmac' },
        );
      }
      const topic = requiredHeader(request.topic, 'X-Shopify-Topic', TOPIC_MAX);
      const webhookId = requiredHeader(request.webhookId, 'X-Shopify-Webhook-Id', WEBHOOK_ID_MAX);
      const shopDomain = requiredHeader(request.shopDomain, 'X-Shopify-Shop-Domain', TOPIC_MAX).toLowerCase();
      const delivery = {
        id: randomUUID(),
        brand_id: brandId,
        webhook_id: webhookId,
        topic,
        shop_domain: shopDomain,
        order_id: null,
        received_at: clock.now(),
      };
      if (shopDomain !== shop.shop_domain) {
        const reason = `sent by ${shopDomain}, but the connected shop is ${shop.shop_domain}`;
        await claimDelivery(db, { ...delivery, result: 'failed', reason });
        throw new AppError(
          'FORBIDDEN',
          `X-Shopify-Shop-Domain ${shopDomain} is not the shop connected to this brand (${shop.shop_domain})`,
          {
            reason: 'shop_mismatch',
          },
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(request.rawBody.toString('utf8'));
      } catch {
        await claimDelivery(db, { ...delivery, result: 'failed', reason: 'the body is not JSON' });
        throw new AppError('INVALID_JSON', 'The webhook body is not valid JSON');
      }
      const claimed = { ...delivery, order_id: orderIdOf(topic, payload, request.rawBody) };
      if (!(await claimDelivery(db, { ...claimed, result: 'processing', reason: null }))) {
        const first = await findDelivery(db, brandId, webhookId);
        return answerOf(
          {
            result: first?.result ?? 'processing',
            reason: first?.reason ?? null,
            eventId: first?.event_id ?? null,
            rewardAmount: first?.reward_amount === null || first === undefined ? null : Number(first.reward_amount),
          },
          true,
        );
      }
      const outcome = await handle(shop, topic, payload, request.rawBody.toString('utf8'), claimed.id);
      await settleDelivery(db, claimed.id, outcome);
      if (outcome.result === 'failed')
        deps.logger.info({ brandId, topic, webhookId, reason: outcome.reason }, 'shopify delivery failed');
      return answerOf(outcome);
    },
  };
}
