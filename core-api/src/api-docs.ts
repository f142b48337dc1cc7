import {
  errorEnvelopeSchema,
  savedWebhookEndpointSchema,
  setWebhookRequestSchema,
  webhookDeliveriesQuerySchema,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookTestResultSchema,
} from '@pts/shared';
import { z } from 'zod';
import type { ApiDocs } from './observability/openapi.ts';

const error = (description: string) => ({ description, schema: errorEnvelopeSchema });

/** Documents the routes this build serves, from the same zod schemas the routes validate with. */
export function registerApiDocs(docs: ApiDocs): void {
  const webhookParams = z.object({ brandId: z.string() });
  docs.register({
    method: 'put',
    path: '/admin/brands/:brandId/webhook',
    summary: "Set the brand's webhook endpoint (the signing secret is returned when issued)",
    tags: ['webhooks'],
    request: { params: webhookParams, body: setWebhookRequestSchema },
    responses: {
      200: {
        description: 'Endpoint',
        schema: z.object({ success: z.literal(true), webhook: savedWebhookEndpointSchema }),
      },
      400: error('Invalid URL (HTTPS required outside local mode; private and internal addresses refused)'),
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId/webhook',
    summary: "The brand's webhook endpoint (never the secret)",
    tags: ['webhooks'],
    request: { params: webhookParams },
    responses: {
      200: { description: 'Endpoint', schema: z.object({ success: z.literal(true), webhook: webhookEndpointSchema }) },
      404: error('Unknown brand or no endpoint'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'delete',
    path: '/admin/brands/:brandId/webhook',
    summary: 'Remove the endpoint; its queued deliveries end as dead',
    tags: ['webhooks'],
    request: { params: webhookParams },
    responses: { 200: { description: 'Removed' }, 404: error('Unknown brand or no endpoint') },
    security: ['adminToken'],
  });
  docs.register({
    method: 'post',
    path: '/admin/brands/:brandId/webhook/test',
    summary: 'Send a signed webhook.test event now and report what the receiver answered',
    tags: ['webhooks'],
    request: { params: webhookParams },
    responses: {
      200: { description: 'Result', schema: z.object({ success: z.literal(true), result: webhookTestResultSchema }) },
      404: error('Unknown brand or no endpoint'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId/webhook/deliveries',
    summary: "The brand's webhook deliveries, newest first",
    tags: ['webhooks'],
    request: { params: webhookParams, query: webhookDeliveriesQuerySchema },
    responses: {
      200: {
        description: 'Deliveries',
        schema: z.object({ success: z.literal(true), deliveries: z.array(webhookDeliverySchema) }),
      },
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'post',
    path: '/admin/webhook-deliveries/:id/replay',
    summary: 'Queue a delivery again (also a dead one); the event id stays the same',
    description:
      "Deliveries POST `{id, type, created, data}` to the brand's URL with `x-pts-signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, t + '.' + body)>`; see docs/webhooks.md.",
    tags: ['webhooks'],
    request: { params: z.object({ id: z.string() }) },
    responses: {
      200: { description: 'Queued', schema: z.object({ success: z.literal(true), delivery: webhookDeliverySchema }) },
      404: error('Unknown delivery'),
      409: error('The delivery is being sent right now'),
    },
    security: ['adminToken'],
  });
}
