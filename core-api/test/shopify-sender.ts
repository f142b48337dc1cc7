import { createHmac, randomUUID } from 'node:crypto';

/**
 * A local stand-in for Shopify's webhook sender: it posts the payload shapes Shopify documents for
 * `orders/paid`, `customers/create` and `refunds/create` (REST Admin API resources, abridged to the fields a
 * real delivery always has and a few it usually has), with the headers Shopify sends and a real
 * `X-Shopify-Hmac-Sha256`: base64 of HMAC-SHA256 over the exact body bytes, keyed with the shop's secret.
 */

let sequence = 0;
const nextId = () => 820_982_911_946_154_508n + BigInt(++sequence) * 7919n;

export interface OrderInput {
  email?: string | null;
  currency?: string;
  subtotal?: string;
  total?: string;
  /** A fixed order id (to send the same order twice); a new one by default. */
  id?: bigint;
}

/** An `orders/paid` body as Shopify sends it (fields pts reads, and the neighbours it must ignore). */
export function orderPaidPayload(input: OrderInput = {}): Record<string, unknown> & { id: number } {
  const id = input.id ?? nextId();
  const currency = input.currency ?? 'USD';
  const subtotal = input.subtotal ?? '199.00';
  const total = input.total ?? '214.92';
  const money = (amount: string) => ({
    shop_money: { amount, currency_code: currency },
    presentment_money: { amount, currency_code: currency },
  });
  const email = input.email === undefined ? 'jon@example.com' : input.email;
  return {
    // A JSON number, as Shopify sends it: past 2^53 it loses digits, which is why pts reads the GraphQL id.
    id: Number(id),
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    app_id: null,
    browser_ip: '216.191.105.146',
    buyer_accepts_marketing: false,
    cancel_reason: null,
    cancelled_at: null,
    checkout_id: 901414060,
    confirmed: true,
    contact_email: email,
    created_at: '2026-12-07T14:10:00-05:00',
    currency,
    current_subtotal_price: subtotal,
    current_total_price: total,
    email,
    financial_status: 'paid',
    fulfillment_status: null,
    landing_site: 'http://www.example.com?source=abc',
    name: `#${1000 + sequence}`,
    order_number: 1000 + sequence,
    presentment_currency: currency,
    processed_at: '2026-12-07T14:10:00-05:00',
    subtotal_price: subtotal,
    subtotal_price_set: money(subtotal),
    tags: '',
    test: false,
    total_discounts: '0.00',
    total_line_items_price: subtotal,
    total_price: total,
    total_price_set: money(total),
    total_shipping_price_set: money('0.00'),
    total_tax: '15.92',
    updated_at: '2026-12-07T14:10:01-05:00',
    customer: {
      id: 115310627314724,
      email,
      accepts_marketing: false,
      first_name: 'Jon',
      last_name: 'Snow',
      state: 'disabled',
      currency,
      admin_graphql_api_id: 'gid://shopify/Customer/115310627314724',
    },
    line_items: [
      {
        id: 866550311766439,
        admin_graphql_api_id: 'gid://shopify/LineItem/866550311766439',
        name: 'IPod Nano - 8GB',
        price: subtotal,
        quantity: 1,
        sku: 'IPOD-342-N',
        taxable: true,
      },
    ],
    shipping_lines: [],
    refunds: [],
  } as Record<string, unknown> & { id: number };
}

/** A `customers/create` body as Shopify sends it. */
export function customerCreatePayload(email: string | null): Record<string, unknown> {
  const id = nextId();
  return {
    id: Number(id),
    admin_graphql_api_id: `gid://shopify/Customer/${id}`,
    email,
    accepts_marketing: false,
    created_at: '2026-12-07T14:10:00-05:00',
    first_name: 'Bob',
    last_name: 'Biller',
    orders_count: 0,
    state: 'disabled',
    total_spent: '0.00',
    verified_email: true,
    currency: 'USD',
    tags: '',
  };
}

export interface RefundInput {
  /** The order refunded (its exact id, as `admin_graphql_api_id` of the order names it). */
  orderId: bigint | number;
  /** A fixed refund id (to send the same refund twice); a new one by default. */
  id?: bigint;
  /** The returned goods: each line's subtotal (after discounts, before tax) in the shop's currency. */
  lines?: string[];
  /** The money returned (tax and shipping included): one successful refund transaction; none when absent. */
  refunded?: string;
  currency?: string;
}

/**
 * A `refunds/create` body as Shopify sends it (the REST Admin API's Refund resource, abridged), as the exact text
 * Shopify writes: `order_id` is a JSON number with every digit of the 64-bit id, which `JSON.parse` rounds past
 * 2^53 (why pts reads those digits from the raw body).
 */
export function refundCreateBody(input: RefundInput): { body: string; refundId: string } {
  const id = input.id ?? nextId();
  const currency = input.currency ?? 'USD';
  const ORDER = '__ORDER_ID__';
  const money = (amount: string) => ({
    shop_money: { amount, currency_code: currency },
    presentment_money: { amount, currency_code: currency },
  });
  const lines = input.lines ?? [];
  const payload = {
    id: Number(id),
    order_id: ORDER,
    created_at: '2026-12-07T14:20:00-05:00',
    note: 'Things were damaged',
    user_id: 548380009,
    processed_at: '2026-12-07T14:20:00-05:00',
    restock: true,
    duties: [],
    total_duties_set: money('0.00'),
    additional_fees: [],
    return: null,
    admin_graphql_api_id: `gid://shopify/Refund/${id}`,
    refund_line_items: lines.map((subtotal, index) => ({
      id: 104689539 + index,
      quantity: 1,
      line_item_id: 703073504 + index,
      location_id: 487838322,
      restock_type: 'return',
      // A JSON number in Shopify's payload; the `_set` beside it carries the exact string.
      subtotal: Number(subtotal),
      total_tax: 0,
      subtotal_set: money(subtotal),
      total_tax_set: money('0.00'),
      line_item: {
        id: 703073504 + index,
        name: 'IPod Nano - 8GB',
        price: subtotal,
        quantity: 1,
        sku: 'IPOD-342-N',
        admin_graphql_api_id: `gid://shopify/LineItem/${703073504 + index}`,
      },
    })),
    transactions:
      input.refunded === undefined
        ? []
        : [
            {
              id: 179259969,
              order_id: ORDER,
              kind: 'refund',
              gateway: 'bogus',
              status: 'success',
              message: 'Bogus Gateway: Forced success',
              created_at: '2026-12-07T14:20:00-05:00',
              test: false,
              authorization: 'authorization-key',
              location_id: null,
              user_id: null,
              parent_id: 801038806,
              processed_at: '2026-12-07T14:20:00-05:00',
              device_id: null,
              error_code: null,
              source_name: 'web',
              receipt: {},
              amount: input.refunded,
              currency,
              admin_graphql_api_id: 'gid://shopify/OrderTransaction/179259969',
            },
          ],
    order_adjustments: [],
  };
  return { body: JSON.stringify(payload).replaceAll(`"${ORDER}"`, String(input.orderId)), refundId: String(id) };
}

export interface Delivery {
  topic: string;
  shopDomain: string;
  secret: string;
  /** The exact body; JSON of `payload` when absent. */
  rawBody?: string;
  payload?: unknown;
  webhookId?: string;
  /** Replaces the computed HMAC header (omitted when null). */
  hmac?: string | null;
}

export interface SentDelivery {
  status: number;
  webhookId: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

export function shopifyHmac(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('base64');
}

/** Posts one delivery to `url` as Shopify does. */
export async function sendShopifyWebhook(url: string, delivery: Delivery): Promise<SentDelivery> {
  const body = delivery.rawBody ?? JSON.stringify(delivery.payload);
  const webhookId = delivery.webhookId ?? randomUUID();
  const hmac = delivery.hmac === undefined ? shopifyHmac(delivery.secret, body) : delivery.hmac;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': delivery.topic,
      'x-shopify-shop-domain': delivery.shopDomain,
      'x-shopify-webhook-id': webhookId,
      'x-shopify-api-version': '2025-10',
      'x-shopify-triggered-at': new Date().toISOString(),
      'x-shopify-event-id': randomUUID(),
      ...(hmac === null ? {} : { 'x-shopify-hmac-sha256': hmac }),
    },
    body,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, webhookId, body: parsed };
}
