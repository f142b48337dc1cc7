import {
  brandIdParamsSchema,
  savedWebhookEndpointSchema,
  setWebhookRequestSchema,
  webhookDeliveriesQuerySchema,
  webhookDeliveryParamsSchema,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookTestResultSchema,
} from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { WebhookService } from './webhooks.service.ts';

const BODY_LIMIT_BYTES = 16 * 1024;

/** What the webhook admin routes use: the webhook service (compose.ts builds it) and the admin token. */
export type WebhookRouterDeps = {
  webhooks: WebhookService;
  adminToken: string;
};

const adminOnly: ['adminToken'] = ['adminToken'];
const unauthorized = failure('Missing or wrong admin token');
const noEndpoint = failure('Unknown brand or no endpoint');
const answer = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });

/**
 * Webhook administration, mounted at `/admin` beside the brand routes. Every route requires the admin
 * bearer token. Responses: `{ success, webhook | deliveries | delivery | result }`.
 */
export function webhookAdminRoutes(deps: WebhookRouterDeps): Route[] {
  const { webhooks } = deps;
  const before = [requireAdminToken(deps.adminToken)];

  return [
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/webhook',
      summary: "Set the brand's webhook endpoint (the signing secret is returned when issued)",
      description: 'The secret is in this answer only when one was issued (a new endpoint, or `rotateSecret`).',
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: {
        params: brandIdParamsSchema,
        body: setWebhookRequestSchema,
        bodyReader: 'json-any-type',
        bodyLimitBytes: BODY_LIMIT_BYTES,
      },
      responses: {
        200: { description: 'Endpoint', schema: answer({ webhook: savedWebhookEndpointSchema }) },
        400: failure('Invalid URL (HTTPS required outside local mode; private and internal addresses refused)'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => ({
        success: true,
        webhook: await webhooks.setEndpoint(brandId, body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/webhook',
      summary: "The brand's webhook endpoint (never the secret)",
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Endpoint', schema: answer({ webhook: webhookEndpointSchema }) },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: noEndpoint,
      },
      handle: async ({ params: { brandId } }) => ({
        success: true,
        webhook: await webhooks.getEndpoint(brandId),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/webhook',
      summary: 'Remove the endpoint; its queued deliveries end as dead',
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Removed', schema: answer({}) },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: noEndpoint,
      },
      handle: async ({ params: { brandId } }) => {
        await webhooks.deleteEndpoint(brandId);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/webhook/test',
      summary: 'Send a signed webhook.test event now and report what the receiver answered',
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Result', schema: answer({ result: webhookTestResultSchema }) },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: noEndpoint,
      },
      handle: async ({ params: { brandId } }) => ({ success: true, result: await webhooks.sendTest(brandId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/webhook/deliveries',
      summary: "The brand's webhook deliveries, newest first",
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema, query: webhookDeliveriesQuerySchema },
      responses: {
        200: { description: 'Deliveries', schema: answer({ deliveries: z.array(webhookDeliverySchema) }) },
        400: failure('Malformed brand id or query'),
        401: unauthorized,
      },
      handle: async ({ params: { brandId }, query }) => ({
        success: true,
        deliveries: await webhooks.listDeliveries(brandId, query),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhook-deliveries/:id/replay',
      summary: 'Queue a delivery again (also a dead one); the event id stays the same',
      description:
        "Deliveries POST `{id, type, created, data}` to the brand's URL with `x-pts-signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, t + '.' + body)>`; see docs/webhooks.md.",
      tags: ['webhooks'],
      security: adminOnly,
      before,
      request: { params: webhookDeliveryParamsSchema },
      responses: {
        200: { description: 'Queued', schema: answer({ delivery: webhookDeliverySchema }) },
        400: failure('Malformed delivery id'),
        401: unauthorized,
        404: failure('Unknown delivery'),
        409: failure('The delivery is being sent right now'),
      },
      handle: async ({ params: { id } }) => ({ success: true, delivery: await webhooks.replayDelivery(id) }),
    }),
  ];
}
