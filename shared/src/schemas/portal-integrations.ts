import { z } from 'zod';
import { agentKeySchema } from './agent-keys.ts';
import { brandKeyStatusSchema, xHandleInputSchema } from './brands.ts';
import { domainSchema } from './common.ts';
import { chatGroupSchema } from './community.ts';
import { brandPurchasesResponseSchema, checkoutSessionIdSchema, createCheckoutRequestSchema } from './payments.ts';
import { portalBrandParamsSchema } from './portal.ts';
import { brandGasUsageSchema } from './relayer-gas.ts';
import { webhookDeliverySchema, webhookEndpointSchema } from './webhooks.ts';

// The portal's Integrations and Billing pages (docs/portal.md): core-api validates with these, the pages type
// with them. Secrets (security key, API key, webhook secret, agent key secret) appear only in the answer of
// the change that issued them.

/** What the WordPress plugin's settings screen asks for (cms-plugin/includes/class-pts-settings.php). */
export const portalWordPressSettingsSchema = z.object({
  apiUrl: z.string(),
  brandId: z.string(),
  /** Where the security key comes from: it is never shown again after a rotation. */
  securityKeyHint: z.string(),
});

/** `GET /portal/api/brands/:brandId/integrations`: everything on the page but webhooks and agent keys. */
export const portalIntegrationsSchema = z
  .object({
    success: z.literal(true),
    keys: brandKeyStatusSchema,
    domains: z.object({
      websiteDomain: z.string(),
      verifiedDomains: z.array(z.string()),
      /** The TXT record a domain needs: at `_pts.<domain>`, this value with the brand's API key in it. */
      txtHost: z.string(),
      txtValue: z.string(),
    }),
    sdk: z.object({ scriptUrl: z.string(), snippet: z.string() }),
    wordpress: portalWordPressSettingsSchema,
    xHandle: z.string().nullable(),
    chatGroups: z.array(chatGroupSchema),
  })
  .meta({ id: 'PortalIntegrations' });
export type PortalIntegrations = z.infer<typeof portalIntegrationsSchema>;

export const portalDomainParamsSchema = portalBrandParamsSchema.extend({ domain: domainSchema });
export const portalDeliveryParamsSchema = portalBrandParamsSchema.extend({
  deliveryId: z.uuid('must be a delivery id (uuid)'),
});
export const portalAgentKeyParamsSchema = portalBrandParamsSchema.extend({
  keyId: z.string().regex(/^ak_[0-9a-z]{1,64}$/, 'must be an agent key id: ak_…'),
});
export const portalCheckoutParamsSchema = portalBrandParamsSchema.extend({
  sessionId: checkoutSessionIdSchema,
});

/** `GET …/webhook`: the endpoint (never its secret; null when none) and the latest deliveries. */
export const portalWebhookSchema = z
  .object({
    success: z.literal(true),
    webhook: webhookEndpointSchema.nullable(),
    deliveries: z.array(webhookDeliverySchema),
  })
  .meta({ id: 'PortalWebhook' });
export type PortalWebhook = z.infer<typeof portalWebhookSchema>;

/** `PUT …/x-handle`: the brand's X handle (with or without @); null or "" clears it. */
export const portalXHandleRequestSchema = z
  .object({ xHandle: xHandleInputSchema })
  .meta({ id: 'PortalXHandleRequest' });

/** `POST …/agent-keys`: a key for this brand only; program changes only when asked for. */
export const portalCreateAgentKeyRequestSchema = z
  .strictObject({
    name: z.string().trim().min(1, 'is required').max(200),
    canManageProgram: z.boolean().default(false),
  })
  .meta({ id: 'PortalCreateAgentKeyRequest' });
export type PortalCreateAgentKeyRequest = z.input<typeof portalCreateAgentKeyRequestSchema>;

export const portalAgentKeysSchema = z
  .object({
    success: z.literal(true),
    agentKeys: z.array(agentKeySchema.extend({ sharedWithOtherBrands: z.boolean() })),
  })
  .meta({ id: 'PortalAgentKeys' });
export type PortalAgentKeys = z.infer<typeof portalAgentKeysSchema>;

/** `POST …/checkout`: tokens bought for the brand's own wallet (1 USD = 1000 tokens), in USD cents. */
export const portalCheckoutRequestSchema = z
  .object({
    amount: createCheckoutRequestSchema.shape.amount,
  })
  .meta({ id: 'PortalCheckoutRequest' });

/** `GET …/billing`: purchases with totals, and the relayer gas charged to the brand. */
export const portalBillingSchema = z
  .object({
    success: z.literal(true),
    purchases: brandPurchasesResponseSchema.shape.purchases,
    totals: brandPurchasesResponseSchema.shape.totals,
    gas: brandGasUsageSchema.omit({ brandId: true }),
    checkout: z.object({ minCents: z.number().int(), maxCents: z.number().int(), tokensPerUsd: z.number().int() }),
  })
  .meta({ id: 'PortalBilling' });
export type PortalBilling = z.infer<typeof portalBillingSchema>;
