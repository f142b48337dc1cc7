import type { Clock } from '@pts/shared';
import {
  brandIdParamsSchema,
  setWebhookRequestSchema,
  webhookDeliveriesQuerySchema,
  webhookDeliveryParamsSchema,
} from '@pts/shared';
import { Router } from 'express';
import { type Config, webhooksAllowInsecure } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { jsonBody } from '../../http/json-body.ts';
import type { HostResolver } from '../../http/ssrf-guard.ts';
import { parseInput } from '../../http/validate.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import {
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  replayWebhookDelivery,
  sendTestWebhook,
  setWebhookEndpoint,
  type WebhookServiceDeps,
} from './webhooks.service.ts';

/** What the webhook admin routes need (the app's deps fit as they are); `resolve` replaces DNS in tests. */
export type WebhookRouterDeps = {
  db: Database;
  secrets: SecretBox;
  clock: Clock;
  config: Config;
  adminToken: string;
} & {
  resolve?: HostResolver;
};

/**
 * Webhook administration, mounted at `/admin` beside the brands router. Every route requires the admin
 * bearer token. Responses: `{ success, webhook | deliveries | delivery | result }`.
 */
export function createWebhookAdminRouter(deps: WebhookRouterDeps): Router {
  const allowInsecure = webhooksAllowInsecure(deps.config);
  const service: WebhookServiceDeps = {
    db: deps.db,
    secrets: deps.secrets,
    clock: deps.clock,
    policy: { allowInsecure, allowLoopback: allowInsecure },
    timeoutMs: deps.config.PTS_WEBHOOK_TIMEOUT_MS,
    resolve: deps.resolve,
  };
  const router = Router();
  const auth = requireAdminToken(deps.adminToken);
  const json = jsonBody(16 * 1024);

  // The secret is in this answer only when one was issued (new endpoint or rotateSecret).
  router.put('/brands/:brandId/webhook', auth, json, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const input = parseInput(setWebhookRequestSchema, req.body ?? {});
    res.json({ success: true, webhook: await setWebhookEndpoint(service, brandId, input) });
  });

  router.get('/brands/:brandId/webhook', auth, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    res.json({ success: true, webhook: await getWebhookEndpoint(service, brandId) });
  });

  router.delete('/brands/:brandId/webhook', auth, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    await deleteWebhookEndpoint(service, brandId);
    res.json({ success: true });
  });

  router.post('/brands/:brandId/webhook/test', auth, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    res.json({ success: true, result: await sendTestWebhook(service, brandId) });
  });

  router.get('/brands/:brandId/webhook/deliveries', auth, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const query = parseInput(webhookDeliveriesQuerySchema, req.query, 'query');
    res.json({ success: true, deliveries: await listWebhookDeliveries(service, brandId, query) });
  });

  router.post('/webhook-deliveries/:id/replay', auth, async (req, res) => {
    const { id } = parseInput(webhookDeliveryParamsSchema, req.params, 'path');
    res.json({ success: true, delivery: await replayWebhookDelivery(service, id) });
  });

  return router;
}
