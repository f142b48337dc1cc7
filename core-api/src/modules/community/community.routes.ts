import {
  AppError,
  activeCampaignsQuerySchema,
  activeCampaignsResponseSchema,
  brandIdParamsSchema,
  type Clock,
  campaignParamsSchema,
  campaignResponseSchema,
  campaignsResponseSchema,
  chatGroupParamsSchema,
  chatGroupResponseSchema,
  chatGroupSetupRequestSchema,
  chatGroupSetupResponseSchema,
  createCampaignRequestSchema,
  updateCampaignRequestSchema,
  updateChatGroupRequestSchema,
  xBotSettingsQuerySchema,
  xBotSettingsResponseSchema,
} from '@pts/shared';
import type { Request } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, hasBrandSignature, signatureRequired } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { chatGroupNotFound, qualifiedChatGroupId } from './chat-groups.service.ts';
import type { CommunityService } from './community.service.ts';

const BODY_LIMIT_BYTES = 8 * 1024;
/** Failed `/setup` attempts allowed per chat group and per IP in the window. */
export const SETUP_FAILURES_ALLOWED = 5;
export const SETUP_FAILURE_WINDOW_SECONDS = 600;

export type CommunityServicesDeps = {
  community: CommunityService;
  clock: Clock;
  verifyBrandSignature: BrandSignatureVerifier;
  /**
   * Failed `/setup` attempts per group and per IP: SETUP_FAILURES_ALLOWED points per
   * SETUP_FAILURE_WINDOW_SECONDS (compose.ts builds it, shared by the replicas).
   */
  setupFailures: RateLimiterAbstract;
};

const signed: ['brandSignature'] = ['brandSignature'];
const adminOnly: ['adminToken'] = ['adminToken'];

/**
 * Chat group configuration and active hashtag campaigns for the bots, mounted under `/services`:
 * `POST /chat-groups/setup` (security key in the body, as the admin typed it), `GET|PATCH|DELETE
 * /chat-groups/:chatGroupId` (brand-signed by the group's brand), `GET /campaigns/:brandId/active` (public).
 */
export function communityRoutes(deps: CommunityServicesDeps): Route[] {
  const failures = deps.setupFailures;

  /** 429 while the group or the IP has used up its failed attempts (checked before the key is). */
  const refuseWhenLocked = async (keys: string[]) => {
    for (const key of keys) {
      const state = await failures.get(key);
      if (state && state.consumedPoints >= SETUP_FAILURES_ALLOWED) throw tooManyFailures(state.msBeforeNext);
    }
  };
  const recordFailure = async (keys: string[]) => {
    for (const key of keys) {
      await failures.penalty(key, 1);
    }
  };

  /** The group's brand must have signed the request. */
  const requireGroupSigned = async (req: Request, chatGroupId: string, what: string) => {
    if (!hasBrandSignature(req)) throw signatureRequired(what);
    const brandId = await deps.community.chatGroupBrand(chatGroupId);
    if (!brandId) throw chatGroupNotFound(chatGroupId);
    await deps.verifyBrandSignature(req, brandId);
  };
  const groupResponses = {
    200: { description: 'The record', schema: chatGroupResponseSchema },
    400: failure('Invalid input'),
    401: failure('Missing, wrong or replayed brand signature'),
    404: failure('Unknown chat group'),
  };

  return [
    defineRoute({
      method: 'post',
      path: '/chat-groups/setup',
      summary: "Link a chat group to a brand (the bots' /setup <brand_id> <security_key>)",
      description:
        'Verifies the security key, creates or re-links the group with the default configuration (spec 2.4) and ' +
        'creates the rules it pays through that the brand lacks. 5 failed attempts per 10 minutes per group and IP.',
      tags: ['community'],
      request: { body: chatGroupSetupRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Re-linked or repeated', schema: chatGroupSetupResponseSchema },
        201: { description: 'Created', schema: chatGroupSetupResponseSchema },
        400: failure('Invalid body'),
        401: failure('Wrong Brand ID or security key'),
        429: failure('Too many failed attempts'),
      },
      handle: async ({ body: input, req, res }) => {
        const chatGroupId = qualifiedChatGroupId(input.platform, input.chatGroupId);
        const keys = [`group:${chatGroupId}`, `ip:${req.ip ?? 'unknown'}`];
        await refuseWhenLocked(keys);
        if (!(await deps.community.verifySecurityKey(input.brandId, input.securityKey))) {
          await recordFailure(keys);
          // Unknown brand and wrong key answer alike, so the endpoint does not tell which Brand IDs exist.
          throw new AppError(
            'UNAUTHORIZED',
            'Brand ID or security key is wrong: copy both from the brand portal (`pts brand create` printed the key once)',
            { reason: 'invalid_security_key' },
          );
        }
        const result = await deps.community.setupChatGroup({ ...input, chatGroupId });
        res.status(result.created ? 201 : 200);
        return { success: true, ...result };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/chat-groups/:chatGroupId',
      summary: "A chat group's configuration record",
      tags: ['community'],
      security: signed,
      request: { params: chatGroupParamsSchema },
      responses: groupResponses,
      handle: async ({ params: { chatGroupId }, req, res }) => {
        await requireGroupSigned(req, chatGroupId, "Reading a chat group's configuration");
        res.setHeader('Cache-Control', 'no-store');
        return { success: true, chatGroup: await deps.community.getChatGroup(chatGroupId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/chat-groups/:chatGroupId',
      summary: "Deep-merge changes into a chat group's configuration",
      tags: ['community'],
      security: signed,
      request: { params: chatGroupParamsSchema, body: updateChatGroupRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: groupResponses,
      handle: async ({ params: { chatGroupId }, body, req }) => {
        await requireGroupSigned(req, chatGroupId, "Changing a chat group's configuration");
        return { success: true, ...(await deps.community.updateChatGroup(chatGroupId, body)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/chat-groups/:chatGroupId',
      summary: 'Deactivate a chat group',
      tags: ['community'],
      security: signed,
      request: { params: chatGroupParamsSchema },
      responses: groupResponses,
      handle: async ({ params: { chatGroupId }, req }) => {
        await requireGroupSigned(req, chatGroupId, 'Deactivating a chat group');
        return { success: true, chatGroup: await deps.community.deactivateChatGroup(chatGroupId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/campaigns/:brandId/active',
      summary: 'Hashtag campaigns active now (or at `at`)',
      tags: ['community'],
      request: { params: brandIdParamsSchema, query: activeCampaignsQuerySchema },
      responses: {
        200: { description: 'Active campaigns', schema: activeCampaignsResponseSchema },
        400: failure('Invalid input'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, query }) => {
        const at = query.at ? new Date(query.at) : deps.clock.now();
        const campaigns = await deps.community.activeCampaigns(brandId, at);
        return { success: true, brandId, at: at.toISOString(), campaigns };
      },
    }),
    /** The X bot's read on every poll: the brand's handle and its campaigns overlapping [since, now]. */
    defineRoute({
      method: 'get',
      path: '/x-bot/:brandId/settings',
      summary: "The X bot's settings: the brand's X handle and its hashtag campaigns overlapping [since, now]",
      description:
        'Brand-signed. `xHandle` is set with `pts brand set --x-handle NAME`; `since` (ISO, at most 7 days ago, default now) widens the campaign list so posts made inside a window that just ended still count.',
      tags: ['community'],
      security: signed,
      request: { params: brandIdParamsSchema, query: xBotSettingsQuerySchema },
      responses: {
        200: { description: 'Handle and campaigns', schema: xBotSettingsResponseSchema },
        400: failure('Invalid brand id or since'),
        401: failure('Missing or wrong brand signature'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, query, req, res }) => {
        if (!hasBrandSignature(req)) throw signatureRequired("Reading the X bot's settings");
        await deps.verifyBrandSignature(req, brandId);
        const at = deps.clock.now();
        const since = query.since ? new Date(query.since) : at;
        if (since.getTime() > at.getTime() || at.getTime() - since.getTime() > X_BOT_SINCE_MAX_MS) {
          throw new AppError('VALIDATION_ERROR', 'Invalid query: since must be within the 7 days before now', {
            errors: ['since: must be within the 7 days before now'],
            field: 'since',
          });
        }
        const settings = await deps.community.xBotSettings(brandId, since, at);
        res.setHeader('Cache-Control', 'no-store');
        return {
          success: true,
          brandId: settings.brandId,
          xHandle: settings.xHandle,
          at: at.toISOString(),
          campaigns: settings.campaigns,
        };
      },
    }),
  ];
}

/** The X bot may ask for campaigns up to the age of X's recent search (7 days). */
const X_BOT_SINCE_MAX_MS = 7 * 24 * 3600 * 1000;

/** Hashtag campaign administration under `/admin` (admin token; the admin router reads the body). */
export function campaignAdminRoutes(deps: { community: CommunityService; adminToken: string }): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  const unauthorized = failure('Missing or wrong admin token');
  return [
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/campaigns',
      summary: 'Create a hashtag campaign',
      tags: ['community'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema, body: createCampaignRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Created', schema: campaignResponseSchema },
        400: failure('Invalid body'),
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const campaign = await deps.community.createCampaign(brandId, body);
        res.status(201);
        return { success: true, campaign };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/campaigns',
      summary: "A brand's hashtag campaigns",
      tags: ['community'],
      security: adminOnly,
      before,
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'Campaigns', schema: campaignsResponseSchema },
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => ({
        success: true,
        campaigns: await deps.community.listCampaigns(brandId),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/campaigns/:campaignId',
      summary: 'One hashtag campaign',
      tags: ['community'],
      security: adminOnly,
      before,
      request: { params: campaignParamsSchema },
      responses: {
        200: { description: 'The campaign', schema: campaignResponseSchema },
        401: unauthorized,
        404: failure('Unknown brand or campaign'),
      },
      handle: async ({ params: { brandId, campaignId } }) => ({
        success: true,
        campaign: await deps.community.getCampaign(brandId, campaignId),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/campaigns/:campaignId',
      summary: 'Change a hashtag campaign',
      tags: ['community'],
      security: adminOnly,
      before,
      request: { params: campaignParamsSchema, body: updateCampaignRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Changed', schema: campaignResponseSchema },
        400: failure('Invalid body'),
        401: unauthorized,
        404: failure('Unknown brand or campaign'),
      },
      handle: async ({ params: { brandId, campaignId }, body }) => ({
        success: true,
        campaign: await deps.community.updateCampaign(brandId, campaignId, body),
      }),
    }),
  ];
}

function tooManyFailures(msBeforeNext: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Too many wrong security keys: at most ${SETUP_FAILURES_ALLOWED} failed /setup attempts per ${SETUP_FAILURE_WINDOW_SECONDS / 60} minutes per group and per address; retry in ${retryAfter} s`,
    { reason: 'setup_failures', limit: SETUP_FAILURES_ALLOWED, windowSeconds: SETUP_FAILURE_WINDOW_SECONDS },
    { retryAfter },
  );
}
