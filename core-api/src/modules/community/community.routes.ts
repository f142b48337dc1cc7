import type { Clock } from '@pts/shared';
import {
  AppError,
  activeCampaignsQuerySchema,
  activeCampaignsResponseSchema,
  brandIdParamsSchema,
  campaignParamsSchema,
  campaignResponseSchema,
  campaignsResponseSchema,
  chatGroupParamsSchema,
  chatGroupResponseSchema,
  chatGroupSetupRequestSchema,
  chatGroupSetupResponseSchema,
  createCampaignRequestSchema,
  errorEnvelopeSchema,
  updateCampaignRequestSchema,
  updateChatGroupRequestSchema,
  xBotSettingsQuerySchema,
  xBotSettingsResponseSchema,
} from '@pts/shared';
import { type Request, Router } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, hasBrandSignature, signatureRequired } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { getBrand, verifySecurityKey } from '../brands/brands.service.ts';
import {
  activeCampaigns,
  campaignsOverlapping,
  createCampaign,
  getCampaign,
  listCampaigns,
  updateCampaign,
} from './campaigns.service.ts';
import {
  chatGroupBrand,
  chatGroupNotFound,
  deactivateChatGroup,
  getChatGroup,
  qualifiedChatGroupId,
  setupChatGroup,
  updateChatGroup,
} from './chat-groups.service.ts';

const BODY_LIMIT_BYTES = 8 * 1024;
/** Failed `/setup` attempts allowed per chat group and per IP in the window. */
export const SETUP_FAILURES_ALLOWED = 5;
export const SETUP_FAILURE_WINDOW_SECONDS = 600;

export type CommunityServicesDeps = { db: Database; clock: Clock; secrets: SecretBox } & {
  verifyBrandSignature: BrandSignatureVerifier;
  /** Chat group settings write the brand's rules: every rule cache hears of it. */
  changes: ChangeNotifier;
  /**
   * Failed `/setup` attempts per group and per IP: SETUP_FAILURES_ALLOWED points per
   * SETUP_FAILURE_WINDOW_SECONDS (compose.ts builds it, shared by the replicas).
   */
  setupFailures: RateLimiterAbstract;
};

/**
 * Chat group configuration and active hashtag campaigns for the bots, mounted under `/services`:
 * `POST /chat-groups/setup` (security key in the body, as the admin typed it), `GET|PATCH|DELETE
 * /chat-groups/:chatGroupId` (brand-signed by the group's brand), `GET /campaigns/:brandId/active` (public).
 */
export function createCommunityServicesRouter(deps: CommunityServicesDeps): Router {
  const router = Router();
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

  router.post('/chat-groups/setup', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(chatGroupSetupRequestSchema, req.body);
    const chatGroupId = qualifiedChatGroupId(input.platform, input.chatGroupId);
    const keys = [`group:${chatGroupId}`, `ip:${req.ip ?? 'unknown'}`];
    await refuseWhenLocked(keys);
    if (!(await verifySecurityKey(deps.db, input.brandId, input.securityKey))) {
      await recordFailure(keys);
      // Unknown brand and wrong key answer alike, so the endpoint does not tell which Brand IDs exist.
      throw new AppError(
        'UNAUTHORIZED',
        'Brand ID or security key is wrong: copy both from the brand portal (`pts brand create` printed the key once)',
        { reason: 'invalid_security_key' },
      );
    }
    const result = await setupChatGroup(deps, { ...input, chatGroupId });
    res.status(result.created ? 201 : 200).json({ success: true, ...result });
  });

  /** The group's brand must have signed the request. */
  const requireGroupSigned = async (req: Request, chatGroupId: string, what: string) => {
    if (!hasBrandSignature(req)) throw signatureRequired(what);
    const brandId = await chatGroupBrand(deps.db, chatGroupId);
    if (!brandId) throw chatGroupNotFound(chatGroupId);
    await deps.verifyBrandSignature(req, brandId);
  };

  router.get('/chat-groups/:chatGroupId', async (req, res) => {
    const { chatGroupId } = parseInput(chatGroupParamsSchema, req.params, 'path');
    await requireGroupSigned(req, chatGroupId, "Reading a chat group's configuration");
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, chatGroup: await getChatGroup(deps, chatGroupId) });
  });

  router.patch('/chat-groups/:chatGroupId', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const { chatGroupId } = parseInput(chatGroupParamsSchema, req.params, 'path');
    const input = parseInput(updateChatGroupRequestSchema, req.body);
    await requireGroupSigned(req, chatGroupId, "Changing a chat group's configuration");
    res.json({ success: true, ...(await updateChatGroup(deps, chatGroupId, input)) });
  });

  router.delete('/chat-groups/:chatGroupId', async (req, res) => {
    const { chatGroupId } = parseInput(chatGroupParamsSchema, req.params, 'path');
    await requireGroupSigned(req, chatGroupId, 'Deactivating a chat group');
    res.json({ success: true, chatGroup: await deactivateChatGroup(deps, chatGroupId) });
  });

  router.get('/campaigns/:brandId/active', async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const query = parseInput(activeCampaignsQuerySchema, req.query, 'query');
    const at = query.at ? new Date(query.at) : deps.clock.now();
    const campaigns = await activeCampaigns(deps, brandId, at);
    res.json({ success: true, brandId, at: at.toISOString(), campaigns });
  });

  /** The X bot's read on every poll: the brand's handle and its campaigns overlapping [since, now]. */
  router.get('/x-bot/:brandId/settings', async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const query = parseInput(xBotSettingsQuerySchema, req.query, 'query');
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
    const brand = await getBrand(deps, brandId);
    const campaigns = await campaignsOverlapping(deps, brandId, since, at);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, brandId: brand.brandId, xHandle: brand.xHandle, at: at.toISOString(), campaigns });
  });

  return router;
}

/** The X bot may ask for campaigns up to the age of X's recent search (7 days). */
const X_BOT_SINCE_MAX_MS = 7 * 24 * 3600 * 1000;

/** Hashtag campaign administration under `/admin` (admin token). */
export function createCampaignAdminRouter(deps: { db: Database; clock: Clock; adminToken: string }): Router {
  const router = Router();
  const auth = requireAdminToken(deps.adminToken);
  const json = jsonBody(16 * 1024);

  router.post('/brands/:brandId/campaigns', auth, json, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const input = parseInput(createCampaignRequestSchema, req.body ?? {});
    res.status(201).json({ success: true, campaign: await createCampaign(deps, brandId, input) });
  });

  router.get('/brands/:brandId/campaigns', auth, async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    res.json({ success: true, campaigns: await listCampaigns(deps, brandId) });
  });

  router.get('/brands/:brandId/campaigns/:campaignId', auth, async (req, res) => {
    const { brandId, campaignId } = parseInput(campaignParamsSchema, req.params, 'path');
    res.json({ success: true, campaign: await getCampaign(deps, brandId, campaignId) });
  });

  router.patch('/brands/:brandId/campaigns/:campaignId', auth, json, async (req, res) => {
    const { brandId, campaignId } = parseInput(campaignParamsSchema, req.params, 'path');
    const input = parseInput(updateCampaignRequestSchema, req.body ?? {});
    res.json({ success: true, campaign: await updateCampaign(deps, brandId, campaignId, input) });
  });

  return router;
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

/** Documents the chat group and campaign endpoints in the OpenAPI document. */
export function registerCommunityDocs(docs: ApiDocs): void {
  const failure = (description: string) => ({ description, schema: errorEnvelopeSchema });
  const signed = ['brandSignature' as const];
  docs.register({
    method: 'post',
    path: '/services/chat-groups/setup',
    summary: "Link a chat group to a brand (the bots' /setup <brand_id> <security_key>)",
    description:
      'Verifies the security key, creates or re-links the group with the default configuration (spec 2.4) and ' +
      'creates the rules it pays through that the brand lacks. 5 failed attempts per 10 minutes per group and IP.',
    tags: ['community'],
    request: { body: chatGroupSetupRequestSchema },
    responses: {
      200: { description: 'Re-linked or repeated', schema: chatGroupSetupResponseSchema },
      201: { description: 'Created', schema: chatGroupSetupResponseSchema },
      400: failure('Invalid body'),
      401: failure('Wrong Brand ID or security key'),
      429: failure('Too many failed attempts'),
    },
  });
  docs.register({
    method: 'get',
    path: '/services/x-bot/:brandId/settings',
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
  });
  for (const method of ['get', 'patch', 'delete'] as const) {
    docs.register({
      method,
      path: '/services/chat-groups/:chatGroupId',
      summary:
        method === 'get'
          ? "A chat group's configuration record"
          : method === 'patch'
            ? "Deep-merge changes into a chat group's configuration"
            : 'Deactivate a chat group',
      tags: ['community'],
      security: signed,
      request: {
        params: chatGroupParamsSchema,
        ...(method === 'patch' ? { body: updateChatGroupRequestSchema } : {}),
      },
      responses: {
        200: { description: 'The record', schema: chatGroupResponseSchema },
        400: failure('Invalid input'),
        401: failure('Missing, wrong or replayed brand signature'),
        404: failure('Unknown chat group'),
      },
    });
  }
  docs.register({
    method: 'get',
    path: '/services/campaigns/:brandId/active',
    summary: 'Hashtag campaigns active now (or at `at`)',
    tags: ['community'],
    request: { params: brandIdParamsSchema, query: activeCampaignsQuerySchema },
    responses: {
      200: { description: 'Active campaigns', schema: activeCampaignsResponseSchema },
      400: failure('Invalid input'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'post',
    path: '/admin/brands/:brandId/campaigns',
    summary: 'Create a hashtag campaign',
    tags: ['community'],
    security: ['adminToken' as const],
    request: { params: brandIdParamsSchema, body: createCampaignRequestSchema },
    responses: {
      201: { description: 'Created', schema: campaignResponseSchema },
      400: failure('Invalid body'),
      401: failure('Missing or wrong admin token'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId/campaigns',
    summary: "A brand's hashtag campaigns",
    tags: ['community'],
    security: ['adminToken' as const],
    request: { params: brandIdParamsSchema },
    responses: { 200: { description: 'Campaigns', schema: campaignsResponseSchema }, 404: failure('Unknown brand') },
  });
  docs.register({
    method: 'patch',
    path: '/admin/brands/:brandId/campaigns/:campaignId',
    summary: 'Change a hashtag campaign',
    tags: ['community'],
    security: ['adminToken' as const],
    request: { params: campaignParamsSchema, body: updateCampaignRequestSchema },
    responses: {
      200: { description: 'Changed', schema: campaignResponseSchema },
      400: failure('Invalid body'),
      404: failure('Unknown brand or campaign'),
    },
  });
}
