import {
  DEFAULT_PORTAL_KEY_GRACE_MINUTES,
  endedPreviousBrandKeySchema,
  portalAgentKeyParamsSchema,
  portalAgentKeysSchema,
  portalBrandParamsSchema,
  portalCreateAgentKeyRequestSchema,
  portalDeliveryParamsSchema,
  portalDomainParamsSchema,
  portalIntegrationsSchema,
  portalWebhookSchema,
  portalXHandleRequestSchema,
  rotateBrandKeysRequestSchema,
  rotatedBrandKeysSchema,
  savedWebhookEndpointSchema,
  setWebhookRequestSchema,
  webhookDeliverySchema,
  webhookTestResultSchema,
} from '@pts/shared';
import type { Response } from 'express';
import { z } from 'zod';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandAdminService } from '../brands/brand-admin.service.ts';
import type { CommunityService } from '../community/community.service.ts';
import { type DnsService, ptsTxtRecordValue, txtHostFor } from '../dns/dns.service.ts';
import { sdkScriptUrl, sdkSnippet } from '../sdk/sdk-snippet.ts';
import type { WebhookService } from '../webhooks/webhooks.service.ts';
import { actorOf, baseUrlOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import type { PortalAgentKeyService } from './portal-services.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

/** What the Integrations page's routes use: the same services as the admin API, the CLI and the agent. */
export interface PortalIntegrationDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  brands: BrandAdminService;
  /** Domain verification by TXT record (`POST /pts-api/verify-dns`'s). */
  dns: DnsService;
  /** The brand's chat groups. */
  community: CommunityService;
  webhooks: WebhookService;
  /** The agent API's key service (agent/keys), handed in by the composition root. */
  agentKeys: PortalAgentKeyService;
  /** `PTS_PUBLIC_URL`: the base of the SDK snippet and the WordPress settings (the request's host when unset). */
  publicUrl?: string | undefined;
}

/** Deliveries the page lists. */
const DELIVERIES_SHOWN = 20;

const session: ['portalSession'] = ['portalSession'];
const success = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notMember = failure('No such brand among yours');

/** Answers that carry a secret are never stored by a browser or a proxy. */
function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
}

/**
 * The Integrations page (docs/portal.md): the security key, domains, webhooks, the SDK snippet, the WordPress
 * plugin's settings, chat groups, the X handle and agent keys. Mounted at `/portal/api` behind the CSRF check;
 * every route needs a session and a membership of the brand (404 otherwise), changes a role (403), and each
 * calls the service the admin API, the CLI and the agent call, with the portal user as the audit log's actor.
 */
export function portalIntegrationRoutes(deps: PortalIntegrationDeps): Route[] {
  const { brands, webhooks } = deps;
  const signedIn = [requireSession(deps.auth)];
  /** Changes by an admin or owner, or by an owner: a viewer is refused before the body is read (403 before 400). */
  const asAdmin = [...signedIn, requireBrandRole(deps.team, 'admin')];
  const asOwner = [...signedIn, requireBrandRole(deps.team, 'owner')];
  /** The signed-in user, when their role in the brand is at least `role`. */
  const member = async (res: Response, brandId: string, role: 'viewer' | 'admin' | 'owner') => {
    const user = portalUserOf(res);
    await deps.team.requireRole(user.id, brandId, role);
    return user;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/integrations',
      summary: "The brand's integrations: key state, domains, SDK snippet, WordPress settings, chat groups, X handle",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Integrations (never a secret)', schema: portalIntegrationsSchema },
        401: signedOut,
        404: notMember,
      },
      handle: async ({ params: { brandId }, req, res }) => {
        await member(res, brandId, 'viewer');
        const brand = await brands.get(brandId);
        const baseUrl = baseUrlOf(req, deps.publicUrl);
        return {
          success: true,
          keys: await brands.keyStatus(brandId),
          domains: {
            websiteDomain: brand.domain,
            verifiedDomains: brand.verifiedDomains,
            txtHost: txtHostFor(brand.domain),
            txtValue: ptsTxtRecordValue(brand.brandId, '<your API key>'),
          },
          sdk: { scriptUrl: sdkScriptUrl(baseUrl), snippet: sdkSnippet(baseUrl, brand.brandId) },
          wordpress: {
            apiUrl: baseUrl,
            brandId: brand.brandId,
            securityKeyHint: 'The security key shown once when the brand was created or its key last rotated',
          },
          xHandle: brand.xHandle,
          chatGroups: await deps.community.listChatGroups(brand.brandId),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/keys/rotate',
      summary: 'Rotate the security key and API key (owner); the new keys are in this answer only',
      description:
        'The same rotation as `pts brand rotate-key` and the agent tool `manage_brand_keys`. The replaced security ' +
        `key still verifies signatures for \`graceMinutes\` (${DEFAULT_PORTAL_KEY_GRACE_MINUTES} when omitted: a day for ` +
        "the brand's back end, WordPress plugin and bots to move; 0 refuses it at once). The API key is replaced at once.",
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalBrandParamsSchema, body: rotateBrandKeysRequestSchema },
      responses: {
        200: { description: 'New keys (shown once)', schema: success({ keys: rotatedBrandKeysSchema }) },
        400: failure('graceMinutes is not a whole number from 0 to 10080'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = await member(res, brandId, 'owner');
        noStore(res);
        const graceMinutes = body.graceMinutes ?? DEFAULT_PORTAL_KEY_GRACE_MINUTES;
        return { success: true, keys: await brands.rotateKeys(brandId, { graceMinutes }, { actor: actorOf(user) }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/keys/end-previous',
      summary: 'End the old key now (owner): the security key the last rotation replaced stops verifying',
      description:
        'Its own action, apart from the rotation: once every integration runs on the new key, or when the old ' +
        'one leaked. Audited as `brand.keys_end_previous`; the same action as `pts brand end-old-key`.',
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: {
          description: 'The old key is refused from now on',
          schema: success({ keys: endedPreviousBrandKeySchema }),
        },
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
        409: failure('No replaced key is still verifying'),
      },
      handle: async ({ params: { brandId }, res }) => {
        const user = await member(res, brandId, 'owner');
        return { success: true, keys: await brands.endPreviousKey(brandId, { actor: actorOf(user) }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/domains/:domain/verify',
      summary: "Check a domain's _pts TXT record; a match adds it to the brand's verified domains (admin)",
      description:
        "The domain must be the brand's website domain or one of its subdomains. The same check as " +
        '`POST /pts-api/verify-dns`.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalDomainParamsSchema },
      responses: {
        200: {
          description: 'Lookup done; see dnsConfigured and reason',
          schema: success({
            domain: z.string(),
            dnsConfigured: z.boolean(),
            brandId: z.string().nullable(),
            reason: z.string(),
          }),
        },
        400: failure('Not a domain name'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or the domain is not under its website domain'),
        503: failure('The DNS lookup failed; retry later'),
      },
      handle: async ({ params: { brandId, domain }, res }) => {
        const user = await member(res, brandId, 'admin');
        return deps.dns.verify(domain, { actor: actorOf(user), brandId });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/domains/:domain',
      summary: "Take a domain out of the brand's verified domains (admin); the same as `pts brand remove-domain`",
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalDomainParamsSchema },
      responses: {
        200: { description: 'The domains now', schema: success({ verifiedDomains: z.array(z.string()) }) },
        400: failure('Not a domain name'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or the domain is not one of its verified domains'),
      },
      handle: async ({ params: { brandId, domain }, res }) => {
        const user = await member(res, brandId, 'admin');
        const brand = await brands.removeDomain(brandId, domain, { actor: actorOf(user) });
        return { success: true, verifiedDomains: brand.verifiedDomains };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/webhook',
      summary: "The brand's webhook endpoint (never its secret) and its latest deliveries",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Endpoint and deliveries', schema: portalWebhookSchema },
        401: signedOut,
        404: notMember,
      },
      handle: async ({ params: { brandId }, res }) => {
        await member(res, brandId, 'viewer');
        return {
          success: true,
          webhook: await webhooks.findEndpoint(brandId),
          deliveries: await webhooks.listDeliveries(brandId, { limit: DELIVERIES_SHOWN }),
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/webhook',
      summary: 'Set the webhook URL (admin); a new endpoint or rotateSecret issues a signing secret, shown once',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: setWebhookRequestSchema },
      responses: {
        200: {
          description: 'Endpoint (with the secret when one was issued)',
          schema: success({ webhook: savedWebhookEndpointSchema }),
        },
        400: failure('Invalid URL (HTTPS required outside local mode; internal addresses refused)'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = await member(res, brandId, 'admin');
        noStore(res);
        return { success: true, webhook: await webhooks.setEndpoint(brandId, body, { actor: actorOf(user) }) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/webhook',
      summary: 'Remove the webhook endpoint (admin)',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Removed', schema: success({}) },
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no endpoint'),
      },
      handle: async ({ params: { brandId }, res }) => {
        const user = await member(res, brandId, 'admin');
        await webhooks.deleteEndpoint(brandId, { actor: actorOf(user) });
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/webhook/test',
      summary: 'Send a signed webhook.test event now and report what the receiver answered (admin)',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Result', schema: success({ result: webhookTestResultSchema }) },
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no endpoint'),
      },
      handle: async ({ params: { brandId }, res }) => {
        const user = await member(res, brandId, 'admin');
        return { success: true, result: await webhooks.sendTest(brandId, { actor: actorOf(user) }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/webhook/deliveries/:deliveryId/replay',
      summary: 'Queue a delivery of the brand again (admin); the event id stays the same',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalDeliveryParamsSchema },
      responses: {
        200: { description: 'Queued', schema: success({ delivery: webhookDeliverySchema }) },
        400: failure('Malformed delivery id'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such delivery of it'),
        409: failure('The delivery is being sent right now'),
      },
      handle: async ({ params: { brandId, deliveryId }, res }) => {
        const user = await member(res, brandId, 'admin');
        return {
          success: true,
          delivery: await webhooks.replayDelivery(deliveryId, { actor: actorOf(user), brandId }),
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/x-handle',
      summary: "Set or clear the brand's X handle (admin); the X bot's rules are created when first set",
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: portalXHandleRequestSchema },
      responses: {
        200: { description: 'Saved', schema: success({ xHandle: z.string().nullable() }) },
        400: failure('Not an X handle (1 to 15 letters, digits or _)'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = await member(res, brandId, 'admin');
        const brand = await brands.update(brandId, { xHandle: body.xHandle }, { actor: actorOf(user) });
        return { success: true, xHandle: brand.xHandle };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/agent-keys',
      summary: 'Agent keys that act for the brand (never their secrets)',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Keys', schema: portalAgentKeysSchema }, 401: signedOut, 404: notMember },
      handle: async ({ params: { brandId }, res }) => {
        await member(res, brandId, 'viewer');
        const keys = await deps.agentKeys.list(brandId);
        return {
          success: true,
          agentKeys: keys.map((key) => ({ ...key, sharedWithOtherBrands: key.brandIds.length > 1 })),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/agent-keys',
      summary: 'Create an agent key for this brand only (admin); the secret is in this answer only',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: portalCreateAgentKeyRequestSchema },
      responses: {
        201: { description: 'The key id and its secret', schema: success({ keyId: z.string(), secret: z.string() }) },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = await member(res, brandId, 'admin');
        const created = await deps.agentKeys.create(actorOf(user), {
          name: body.name,
          brandIds: [brandId],
          canManageProgram: body.canManageProgram,
        });
        noStore(res);
        res.status(201);
        return { success: true, ...created };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/agent-keys/:keyId/revoke',
      summary: 'Revoke an agent key of this brand (admin); its signatures are refused from now on',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalAgentKeyParamsSchema },
      responses: {
        200: { description: 'Revoked', schema: success({ keyId: z.string(), revoked: z.boolean() }) },
        400: failure('Malformed key id'),
        401: signedOut,
        403: failure('Missing CSRF token, the role cannot revoke, or the key also acts for other brands'),
        404: failure('No such brand among yours, or no such key of it'),
      },
      handle: async ({ params: { brandId, keyId }, res }) => {
        const user = await member(res, brandId, 'admin');
        return { success: true, keyId, ...(await deps.agentKeys.revoke(actorOf(user), keyId, brandId)) };
      },
    }),
  ];
}
