import {
  brandSchema,
  bulkEventsRequestSchema,
  bulkEventsResponseSchema,
  createBrandRequestSchema,
  createdBrandSchema,
  errorEnvelopeSchema,
  eventConfigQuerySchema,
  eventConfigResponseSchema,
  eventRequestSchema,
  eventResponseSchema,
  pregenerateUserRequestSchema,
  pregenerateUserResponseSchema,
  ruleInputSchema,
  ruleSchema,
  savedWebhookEndpointSchema,
  setWebhookRequestSchema,
  updateBrandRequestSchema,
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
  docs.register({
    method: 'post',
    path: '/pts-api/manual-event',
    summary: 'Record a customer event and mint its reward',
    description:
      'Applies the brand rule: domain authorization (or a brand signature), automation, channel, duplicate window, cooldown, per-user and global max claims. Brand-signed requests may set `metadata.source` to a privileged origin or `metadata.skip_cooldown`. An optional `externalId` (1 to 128 characters: a post id, an order id) makes the event idempotent: a repeat of the same brand, eventType and externalId is never rewarded again and answers 200 with the first event and `duplicate: true` (such events skip the 60 s duplicate window; cooldown and limits still apply).',
    tags: ['events'],
    request: { body: eventRequestSchema },
    responses: {
      200: {
        description: 'Rewarded (or, with `duplicate: true`, already rewarded for this externalId)',
        schema: eventResponseSchema,
      },
      400: error('Validation failed or unknown event type'),
      401: error('Bad brand signature'),
      403: error('Domain not authorized, automation disabled or channel not allowed'),
      404: error('Unknown brand'),
      409: error('Duplicate event inside the duplicate window'),
      413: error('Body over 10 KB'),
      429: error('Cooldown, max claims, max total claims or rate limit'),
    },
    security: ['brandSignature'],
  });
  docs.register({
    method: 'post',
    path: '/pts-api/bulk-events',
    summary: 'Record 1 to 100 events in one request',
    description:
      'Each item is a manual-event body (its `externalId` included); items are judged in order, so a repeated externalId inside one request is paid once and its repeats answer `duplicate: true`.',
    tags: ['events'],
    request: { body: bulkEventsRequestSchema },
    responses: {
      200: { description: 'Per-event results, in request order', schema: bulkEventsResponseSchema },
      400: error('Envelope invalid'),
      401: error('Bad brand signature'),
      429: error('Rate limit'),
    },
    security: ['brandSignature'],
  });
  docs.register({
    method: 'get',
    path: '/pts-api/event-config',
    summary: "A brand's active event configuration (cached 5 minutes)",
    tags: ['events'],
    request: { query: eventConfigQuerySchema },
    responses: {
      200: { description: 'Active rules', schema: eventConfigResponseSchema },
      400: error('brandId missing or malformed'),
      404: error('Unknown brand'),
    },
  });

  const brandIdParams = z.object({ brandId: z.string() });
  docs.register({
    method: 'post',
    path: '/admin/brands',
    summary: 'Create a brand (the security key and API key are shown once)',
    tags: ['admin'],
    request: { body: createBrandRequestSchema },
    responses: {
      201: { description: 'Created', schema: z.object({ success: z.literal(true), brand: createdBrandSchema }) },
      400: error('Validation failed'),
      401: error('Missing or wrong admin token'),
      409: error('Brand address already registered'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands',
    summary: 'List brands',
    tags: ['admin'],
    responses: {
      200: { description: 'Brands', schema: z.object({ success: z.literal(true), brands: z.array(brandSchema) }) },
      401: error('Missing or wrong admin token'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId',
    summary: 'One brand',
    tags: ['admin'],
    request: { params: brandIdParams },
    responses: {
      200: { description: 'Brand', schema: z.object({ success: z.literal(true), brand: brandSchema }) },
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'patch',
    path: '/admin/brands/:brandId',
    summary: 'Change a brand (name, domain, automation)',
    tags: ['admin'],
    request: { params: brandIdParams, body: updateBrandRequestSchema },
    responses: {
      200: { description: 'Brand', schema: z.object({ success: z.literal(true), brand: brandSchema }) },
      400: error('Validation failed'),
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'put',
    path: '/admin/brands/:brandId/rules/:eventType',
    summary: 'Create or change the rule of one event type',
    tags: ['admin'],
    request: {
      params: brandIdParams.extend({ eventType: z.string() }),
      body: ruleInputSchema.omit({ eventType: true }),
    },
    responses: {
      200: { description: 'Rule', schema: z.object({ success: z.literal(true), rule: ruleSchema }) },
      400: error('Validation failed'),
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId/rules',
    summary: "A brand's rules, active or not",
    tags: ['admin'],
    request: { params: brandIdParams },
    responses: {
      200: { description: 'Rules', schema: z.object({ success: z.literal(true), rules: z.array(ruleSchema) }) },
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });

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

  docs.register({
    method: 'post',
    path: '/pts-api/pregenerate-user',
    summary: 'Create or fetch the wallet of a social-login identity (or of an email, `{email, brand_id}`)',
    description:
      'Error bodies follow spec 4.8: 400 `{error, required}`, `{error, valid_providers}`, `{error, details, example}`, `{error, hint, provider}`; 404 unknown brand; 429 `{error}` (100 per minute, 10,000 per day per brand). See docs/pregeneration.md.',
    tags: ['pregeneration'],
    request: { body: pregenerateUserRequestSchema },
    responses: {
      200: {
        description: 'The identity wallet (`created_new` says whether it was made now)',
        schema: pregenerateUserResponseSchema,
      },
    },
  });
}
