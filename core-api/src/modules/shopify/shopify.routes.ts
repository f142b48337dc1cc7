import {
  brandIdParamsSchema,
  shopifyConnectRequestSchema,
  shopifyConnectResponseSchema,
  shopifyDisconnectResponseSchema,
  shopifyIntegrationSchema,
  shopifyWebhookResponseSchema,
} from '@pts/shared';
import express from 'express';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { publicBaseUrl } from '../../http/public-url.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ShopifyService } from './shopify.service.ts';

/** Orders carry their line items, addresses and discounts: a large order stays well under this. */
const WEBHOOK_BODY_LIMIT = '2mb';

const webhookHeaders = z.object({
  'x-shopify-hmac-sha256': z
    .string()
    .meta({ description: 'base64 HMAC-SHA256 of the raw body, keyed with the secret' }),
  'x-shopify-topic': z.string().meta({ description: 'orders/paid, customers/create, refunds/create, …' }),
  'x-shopify-shop-domain': z.string().meta({ description: 'NAME.myshopify.com: must be the connected shop' }),
  'x-shopify-webhook-id': z.string().meta({ description: 'The delivery id: a repeat of it does nothing' }),
});

/**
 * `POST /:brandId/webhooks` under `/integrations/shopify`: the address a connected shop's webhook
 * subscriptions point at (docs/shop-program.md, "Shopify").
 */
export function shopifyWebhookRoutes(deps: { shopify: ShopifyService }): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/:brandId/webhooks',
      summary: "Shopify webhooks of the brand's connected shop: orders/paid earns a purchase",
      description:
        'Verifies `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the raw body with the connected secret, compared ' +
        'in constant time) before reading anything, checks `X-Shopify-Shop-Domain` is the connected shop, and acts ' +
        'once per `X-Shopify-Webhook-Id` (a repeat answers the first result with `duplicate: true`). `orders/paid` ' +
        "→ a `purchase` of the order's customer e-mail with the order's subtotal or total in the shop's currency, " +
        'the order id as `externalId`, through the same rule judge as every event; `customers/create` → ' +
        '`account_creation` when the brand enabled it; `refunds/create` is acknowledged and not handled yet. An ' +
        'order the rules refuse (another currency, no customer e-mail, a limit) answers 200 with `result: failed` ' +
        'and its reason — Shopify would otherwise retry it and finally remove the subscription — and is listed ' +
        "among the brand's deliveries. A passing fault answers 5xx so Shopify retries.",
      tags: ['integrations'],
      before: [express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT })],
      request: { params: brandIdParamsSchema, headers: webhookHeaders },
      responses: {
        200: { description: 'Handled (or a repeat of a handled delivery)', schema: shopifyWebhookResponseSchema },
        400: failure('A required X-Shopify header is missing, or the body is not JSON'),
        401: failure('X-Shopify-Hmac-Sha256 missing or not matching the connected secret; nothing is recorded'),
        403: failure('X-Shopify-Shop-Domain is not the connected shop'),
        404: failure('No shop connected to this brand (never connected, or disconnected)'),
        413: failure('Body over 2 MB'),
        503: failure('A passing fault: Shopify retries'),
      },
      handle: ({ params: { brandId }, req }) =>
        deps.shopify.receive(brandId, {
          rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
          hmac: req.get('x-shopify-hmac-sha256'),
          topic: req.get('x-shopify-topic'),
          shopDomain: req.get('x-shopify-shop-domain'),
          webhookId: req.get('x-shopify-webhook-id'),
        }),
    }),
  ];
}

/**
 * `PUT|GET|DELETE /brands/:brandId/shopify`, mounted under `/admin` (admin token): connect a shop, see its
 * deliveries, disconnect it.
 */
export function shopifyAdminRoutes(deps: {
  shopify: ShopifyService;
  adminToken: string;
  publicUrl: string | undefined;
}): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  return [
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/shopify',
      summary: "Connect the brand's Shopify shop (domain, webhook secret, value source, customers/create)",
      description:
        'The secret is stored encrypted and never answered. The answer names the webhook address to paste into the ' +
        "shop's webhook subscriptions and the topics to subscribe. Connecting again replaces the shop and secret.",
      tags: ['admin', 'integrations'],
      security: ['adminToken'],
      before,
      request: { params: brandIdParamsSchema, body: shopifyConnectRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Connected', schema: shopifyConnectResponseSchema },
        400: failure('Malformed shop domain, secret, valueSource or customers'),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body, req }) => ({
        success: true,
        connection: await deps.shopify.connect(brandId, body, publicBaseUrl(req, deps.publicUrl)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/shopify',
      summary: "The brand's Shopify connection (never the secret) and its last 20 deliveries",
      tags: ['admin', 'integrations'],
      security: ['adminToken'],
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Connection and deliveries, newest first', schema: shopifyIntegrationSchema },
        400: failure('Malformed brand id'),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: ({ params: { brandId }, req }) => deps.shopify.integration(brandId, publicBaseUrl(req, deps.publicUrl)),
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/shopify',
      summary: "Disconnect the brand's Shopify shop: later deliveries answer 404; past ones stay listed",
      description:
        'The secret is deleted. A webhook the shop still sends answers 404 (no shop connected), as to a brand never ' +
        'connected, and is not recorded; Shopify retries it and finally removes the subscription. Audited as ' +
        '`shopify.disconnect`. Connecting again (PUT) starts anew.',
      tags: ['admin', 'integrations'],
      security: ['adminToken'],
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Disconnected', schema: shopifyDisconnectResponseSchema },
        400: failure('Malformed brand id'),
        401: failure('Missing or wrong admin token'),
        404: failure('No shop connected to this brand'),
      },
      handle: ({ params: { brandId } }) => deps.shopify.disconnect(brandId),
    }),
  ];
}
