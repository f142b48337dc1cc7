import { z } from 'zod';
import { cleanString } from './common.ts';

/**
 * Orders from a Shopify shop (docs/shop-program.md, "Shopify"): the brand connects its shop (domain and webhook
 * secret), points the shop's webhook subscriptions at `POST /integrations/shopify/:brandId/webhooks`, and each
 * paid order earns a `purchase` through the one event path.
 */

/** The topics pts acts on; any other authentic topic is recorded as ignored. */
export const SHOPIFY_TOPICS = ['orders/paid', 'customers/create', 'refunds/create'] as const;

/**
 * What pts did with one delivery. `reversed`: a refund took points back (`rewardAmount` is the pts it took back);
 * `waiting`: a refund came before its order and is applied when the order's orders/paid arrives.
 */
export const SHOPIFY_DELIVERY_RESULTS = [
  'processing',
  'rewarded',
  'duplicate',
  'ignored',
  'failed',
  'reversed',
  'waiting',
] as const;
export type ShopifyDeliveryResult = (typeof SHOPIFY_DELIVERY_RESULTS)[number];

/** Which amount of an order is the purchase's value: `subtotal_price` (before shipping and taxes) or `total_price`. */
export const SHOPIFY_VALUE_SOURCES = ['subtotal', 'total'] as const;

/** `NAME.myshopify.com`, as Shopify names the shop in `X-Shopify-Shop-Domain`. */
export const shopifyShopDomainSchema = cleanString(
  z
    .string()
    .transform((value) => value.trim().toLowerCase())
    .pipe(
      z
        .string()
        .max(100, 'must be at most 100 characters')
        .regex(
          /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/,
          'must be the shop\'s myshopify.com domain, e.g. "my-shop.myshopify.com" (Shopify admin → Settings → Domains)',
        ),
    ),
);

export const shopifyConnectRequestSchema = z
  .object({
    shopDomain: shopifyShopDomainSchema,
    secret: z
      .string()
      .min(
        16,
        "must be at least 16 characters: the secret Shopify signs webhooks with (Settings → Notifications → Webhooks, or the app's client secret)",
      )
      .max(256, 'must be at most 256 characters'),
    valueSource: z.enum(SHOPIFY_VALUE_SOURCES).optional().meta({
      description: 'Which order amount is the purchase value: subtotal (default; before shipping and taxes) or total',
    }),
    customers: z.boolean().optional().meta({
      description: 'Whether customers/create earns the account_creation rule (default false)',
    }),
  })
  .strict()
  .meta({ id: 'ShopifyConnectRequest' });
export type ShopifyConnectRequest = z.infer<typeof shopifyConnectRequestSchema>;

export const shopifyConnectionSchema = z
  .object({
    brandId: z.string(),
    shopDomain: z.string(),
    valueSource: z.enum(SHOPIFY_VALUE_SOURCES),
    customers: z.boolean(),
    /** The address to paste into the shop's webhook subscriptions. */
    webhookUrl: z.string(),
    /** The topics to subscribe the address to. */
    topics: z.array(z.string()),
    connectedAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ShopifyConnection' });
export type ShopifyConnection = z.infer<typeof shopifyConnectionSchema>;

export const shopifyDeliverySchema = z
  .object({
    id: z.string(),
    webhookId: z.string(),
    topic: z.string(),
    shopDomain: z.string(),
    result: z.enum(SHOPIFY_DELIVERY_RESULTS),
    reason: z.string().nullable(),
    orderId: z.string().nullable(),
    eventId: z.string().nullable(),
    rewardAmount: z.number().int().nullable(),
    receivedAt: z.string(),
  })
  .meta({ id: 'ShopifyDelivery' });
export type ShopifyDelivery = z.infer<typeof shopifyDeliverySchema>;

/** The brand's shop (null when none is connected) and its last deliveries, newest first. */
export const shopifyIntegrationSchema = z
  .object({
    success: z.literal(true),
    connection: shopifyConnectionSchema.nullable(),
    /** Where to point the shop's webhooks (also when nothing is connected yet). */
    webhookUrl: z.string(),
    deliveries: z.array(shopifyDeliverySchema),
  })
  .meta({ id: 'ShopifyIntegration' });
export type ShopifyIntegration = z.infer<typeof shopifyIntegrationSchema>;

export const shopifyConnectResponseSchema = z
  .object({ success: z.literal(true), connection: shopifyConnectionSchema })
  .meta({ id: 'ShopifyConnectResponse' });

/** What disconnecting answers: the shop that was connected. Its deliveries stay listed; new ones answer 404. */
export const shopifyDisconnectResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    shopDomain: z.string().meta({ description: 'The shop that was connected' }),
  })
  .meta({ id: 'ShopifyDisconnectResponse' });
export type ShopifyDisconnectResponse = z.infer<typeof shopifyDisconnectResponseSchema>;

/** The answer to Shopify: any 2xx stops its retries. */
export const shopifyWebhookResponseSchema = z
  .object({
    success: z.literal(true),
    result: z.enum(SHOPIFY_DELIVERY_RESULTS),
    /** true when this X-Shopify-Webhook-Id was received before: nothing was done again. */
    duplicate: z.literal(true).optional(),
    reason: z.string().nullable(),
    eventId: z.string().nullable(),
    rewardAmount: z.number().int().nullable(),
  })
  .meta({ id: 'ShopifyWebhookResponse' });
export type ShopifyWebhookResponse = z.infer<typeof shopifyWebhookResponseSchema>;
