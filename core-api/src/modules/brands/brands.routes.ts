import {
  brandDomainParamsSchema,
  brandIdParamsSchema,
  brandSchema,
  createBrandRequestSchema,
  createdBrandSchema,
  endedPreviousBrandKeySchema,
  rotateBrandKeysRequestSchema,
  rotatedBrandKeysSchema,
  ruleParamsSchema,
  ruleSchema,
  setRuleRequestSchema,
  updateBrandRequestSchema,
} from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandAdminService } from './brand-admin.service.ts';

/** What the admin brand routes need: the brand administration service and the admin token they check. */
export type AdminRouterDeps = { brands: BrandAdminService; adminToken: string };

const adminOnly: ['adminToken'] = ['adminToken'];
const unauthorized = failure('Missing or wrong admin token');
const brandAnswer = z.object({ success: z.literal(true), brand: brandSchema });

/**
 * Brand and rule administration, mounted at `/admin`. Every route requires the admin bearer token; bodies
 * arrive already parsed by the admin router's JSON reader. Responses: `{ success, brand | brands | rule | rules }`.
 */
export function brandAdminRoutes(deps: AdminRouterDeps): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  return [
    defineRoute({
      method: 'post',
      path: '/brands',
      summary: 'Create a brand (the security key and API key are shown once)',
      description: 'A new brand starts with the spec 2.4 default rules, so it can receive events right away.',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { body: createBrandRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Created', schema: z.object({ success: z.literal(true), brand: createdBrandSchema }) },
        400: failure('Validation failed'),
        401: unauthorized,
        409: failure('Brand address already registered'),
      },
      handle: async ({ body, res }) => {
        const brand = await deps.brands.create(body);
        res.status(201);
        return { success: true, brand };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands',
      summary: 'List brands',
      tags: ['admin'],
      security: adminOnly,
      before,
      responses: {
        200: { description: 'Brands', schema: z.object({ success: z.literal(true), brands: z.array(brandSchema) }) },
        401: unauthorized,
      },
      handle: async () => ({ success: true, brands: await deps.brands.list() }),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId',
      summary: 'One brand',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Brand', schema: brandAnswer },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => ({ success: true, brand: await deps.brands.get(brandId) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId',
      summary: 'Change a brand (name, domain, automation, unsigned events, X handle)',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema, body: updateBrandRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Brand', schema: brandAnswer },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => ({
        success: true,
        brand: await deps.brands.update(brandId, body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/domains/:domain',
      summary: "Take a domain out of the brand's verified domains (`pts brand remove-domain`)",
      description:
        "Its pages no longer send events as the brand's until the domain is verified again (`POST /pts-api/verify-dns`).",
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandDomainParamsSchema },
      responses: {
        200: { description: 'Brand', schema: brandAnswer },
        400: failure('Malformed brand id or domain'),
        401: unauthorized,
        404: failure('Unknown brand, or the domain is not verified for it'),
      },
      handle: async ({ params: { brandId, domain } }) => ({
        success: true,
        brand: await deps.brands.removeDomain(brandId, domain),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/rules/:eventType',
      summary: 'Create or change the rule of one event type',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: ruleParamsSchema, body: setRuleRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Rule', schema: z.object({ success: z.literal(true), rule: ruleSchema }) },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId, eventType }, body }) => ({
        success: true,
        rule: await deps.brands.setRule(brandId, { ...body, eventType }),
      }),
    }),
    ...(['archive', 'restore'] as const).map((change) =>
      defineRoute({
        method: 'post',
        path: `/brands/:brandId/rules/:eventType/${change}`,
        summary:
          change === 'archive'
            ? 'Archive a rule (`pts rule archive`): its events are refused with RULE_ARCHIVED'
            : 'Restore an archived rule (`pts rule restore`): it comes back paused; set it active to earn again',
        description: `The same service as the portal's Rules page; audited as \`rule.${change}\` by \`admin\`.`,
        tags: ['admin'],
        security: adminOnly,
        before,
        request: { params: ruleParamsSchema },
        responses: {
          200: {
            description: change === 'archive' ? 'Archived' : 'Restored',
            schema: z.object({ success: z.literal(true), rule: ruleSchema }),
          },
          400: failure('Malformed brand id or event type'),
          401: unauthorized,
          404: failure('Unknown brand, or the brand has no rule for this event type'),
          409: failure(change === 'archive' ? 'Already archived' : 'Not archived'),
        },
        handle: async ({ params: { brandId, eventType } }) => ({
          success: true as const,
          rule: await deps.brands.archiveRule(brandId, eventType, change === 'archive'),
        }),
      }),
    ),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/rules',
      summary: "A brand's rules, active or not",
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Rules', schema: z.object({ success: z.literal(true), rules: z.array(ruleSchema) }) },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => ({ success: true, rules: await deps.brands.rules(brandId) }),
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/keys/rotate',
      summary: "Rotate a brand's security key and API key (the new keys are shown once)",
      description:
        'With `graceMinutes` the replaced security key still verifies brand signatures until then, so the ' +
        "brand's servers, plugin and bots can move to the new key one by one; without, it is refused at once. " +
        'The API key is replaced at once.',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema, body: rotateBrandKeysRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'New keys', schema: z.object({ success: z.literal(true), keys: rotatedBrandKeysSchema }) },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => ({
        success: true,
        keys: await deps.brands.rotateKeys(brandId, { graceMinutes: body.graceMinutes }),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/keys/end-previous',
      summary: 'End the grace of the security key the last rotation replaced: only the current key verifies now',
      description:
        'For when every integration runs on the new key, or the old one leaked. Audited as `brand.keys_end_previous`. ' +
        'The same action as `pts brand end-old-key` and the portal\'s "End the old key now".',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: {
          description: 'The old key is refused from now on',
          schema: z.object({ success: z.literal(true), keys: endedPreviousBrandKeySchema }),
        },
        400: failure('Malformed brand id'),
        401: unauthorized,
        404: failure('Unknown brand'),
        409: failure('No replaced key is still verifying'),
      },
      handle: async ({ params: { brandId } }) => ({ success: true, keys: await deps.brands.endPreviousKey(brandId) }),
    }),
  ];
}
