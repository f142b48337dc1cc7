import { rotatedBrandKeysSchema } from '@pts/shared/schemas/brands';
import {
  portalAgentKeysSchema,
  portalBillingSchema,
  portalIntegrationsSchema,
  portalWebhookSchema,
} from '@pts/shared/schemas/portal-integrations';
import { shopifyIntegrationSchema } from '@pts/shared/schemas/shopify';
import { savedWebhookEndpointSchema, webhookTestResultSchema } from '@pts/shared/schemas/webhooks';
import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { request } from '../api.ts';

/** The Integrations page: keys, domains, chat groups and X handle in one answer; the webhook; agent keys. */
export const integrationsQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'integrations'] as const,
    queryFn: () => request(portalIntegrationsSchema, 'GET', `/brands/${brandId}/integrations`),
  });

export const webhookQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'webhook'] as const,
    queryFn: () => request(portalWebhookSchema, 'GET', `/brands/${brandId}/webhook`),
  });

export const agentKeysQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'agent-keys'] as const,
    queryFn: () => request(portalAgentKeysSchema, 'GET', `/brands/${brandId}/agent-keys`),
  });

/** The Billing page: the brand's balance of pts to issue and its purchases. */
export const billingQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'billing'] as const,
    queryFn: () => request(portalBillingSchema, 'GET', `/brands/${brandId}/billing`),
  });

/** The answers of the Integrations page's changes that the page reads (the rest it reads again by query). */
export const rotatedKeysAnswerSchema = z.object({ keys: rotatedBrandKeysSchema });
export const domainCheckAnswerSchema = z.object({ domain: z.string(), dnsConfigured: z.boolean(), reason: z.string() });
export const webhookSavedAnswerSchema = z.object({ webhook: savedWebhookEndpointSchema });
export const webhookTestAnswerSchema = z.object({ result: webhookTestResultSchema });
export const agentKeyCreatedAnswerSchema = z.object({ keyId: z.string(), secret: z.string() });

/** The Shopify panel: the webhook address, the connected shop and its last deliveries. */
export const shopifyQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'shopify'] as const,
    queryFn: () => request(shopifyIntegrationSchema, 'GET', `/brands/${brandId}/shopify`),
  });
