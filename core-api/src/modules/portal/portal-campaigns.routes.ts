import {
  campaignParamsSchema,
  campaignResponseSchema,
  campaignsResponseSchema,
  createCampaignRequestSchema,
  createDropResponseSchema,
  dropParamsSchema,
  dropsResponseSchema,
  portalBrandParamsSchema,
  portalCreateDropRequestSchema,
  updateCampaignRequestSchema,
  updateDropRequestSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { CommunityService } from '../community/community.service.ts';
import type { DropService } from '../drops/drops.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalCampaignRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  /** The campaigns (the same service as `/admin/campaigns` and the X bot's `/services/campaigns`). */
  community: CommunityService;
  drops: DropService;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notMember = failure('No such brand among yours');

/**
 * The Program page's hashtag campaigns (what the X bot rewards) and drops (docs/portal.md, "Program"):
 * reads for every member, changes for admins and owners, through the same campaign and drop services as
 * the admin API, the CLI, the brand-signed services and the MCP tools, audited with the portal user.
 * Neither is cached: the X bot and the claim path read them from the database on every request, and the
 * `drop_claim` rule a first drop creates reaches every replica's rule cache through the change notifier.
 */
export function portalCampaignRoutes(deps: PortalCampaignRoutesDeps): Route[] {
  const { team, community, drops } = deps;
  const signedIn = [requireSession(deps.auth)];
  /** A change by an admin or owner: a viewer is refused before the body is read. */
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/campaigns',
      summary: "The brand's hashtag campaigns (the X bot's), newest start first",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Campaigns', schema: campaignsResponseSchema }, 401: signedOut, 404: notMember },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, campaigns: await community.listCampaigns(brandId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/campaigns',
      summary: 'Create a hashtag campaign (admin or owner): the same service as `pts campaign create`',
      description: 'Exactly one of reward and rewardMultiplier; endDate after startDate.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: createCampaignRequestSchema },
      responses: {
        201: { description: 'Created', schema: campaignResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const campaign = await community.createCampaign(brandId, body, { actor: actorOf(user) });
        res.status(201);
        return { success: true, campaign };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/campaigns/:campaignId',
      summary: 'Change a hashtag campaign (admin or owner): the same service as `PATCH /admin/brands/…/campaigns/:id`',
      description: 'End a campaign early by setting endDate to now.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: campaignParamsSchema, body: updateCampaignRequestSchema },
      responses: {
        200: { description: 'Changed', schema: campaignResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such campaign in it'),
      },
      handle: async ({ params: { brandId, campaignId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const campaign = await community.updateCampaign(brandId, campaignId, body, { actor: actorOf(user) });
        return { success: true, campaign };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/campaigns/:campaignId/end',
      summary: "End a hashtag campaign now by the server's clock (admin or owner): posts from then on earn nothing",
      description: 'The page sends no time: the end is the moment the server answers. 409 once it has ended.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: campaignParamsSchema },
      responses: {
        200: { description: 'Ended', schema: campaignResponseSchema },
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such campaign in it'),
        409: failure('The campaign already ended'),
      },
      handle: async ({ params: { brandId, campaignId }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const campaign = await community.endCampaign(brandId, campaignId, { actor: actorOf(user) });
        return { success: true, campaign };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/drops',
      summary: "The brand's drops, newest first, with what is claimed and left",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Drops', schema: dropsResponseSchema }, 401: signedOut, 404: notMember },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, drops: await drops.list(brandId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/drops',
      summary: 'Create a drop (admin or owner): the same service as the brand-signed `POST /services/drops/create`',
      description:
        "Also creates the brand's `drop_claim` rule (reward 0, no cooldown, unlimited) when it has no active one.",
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: portalCreateDropRequestSchema },
      responses: {
        201: { description: 'Created', schema: createDropResponseSchema },
        400: failure('Validation failed (e.g. endsAt not after startsAt, or in the past)'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const drop = await drops.create({ ...body, brandId }, { actor: actorOf(user) });
        res.status(201);
        return { success: true, drop };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/drops/:dropId',
      summary: 'Change a drop (admin or owner): the same service as `PATCH /admin/brands/…/drops/:dropId`',
      description:
        'Only where safe: nothing once ended; amount only before the first claim; startsAt only before it opens; totalSupply not below what is claimed.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: dropParamsSchema, body: updateDropRequestSchema },
      responses: {
        200: { description: 'Changed', schema: createDropResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such drop in it'),
        409: failure('The change is not safe any more (ended, claimed, opened)'),
      },
      handle: async ({ params: { brandId, dropId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return { success: true, drop: await drops.update(brandId, dropId, body, { actor: actorOf(user) }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/drops/:dropId/end',
      summary: 'End a drop now (admin or owner): claims from now on are refused; what was claimed stays paid',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: dropParamsSchema },
      responses: {
        200: { description: 'Ended', schema: createDropResponseSchema },
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such drop in it'),
        409: failure('The drop already ended'),
      },
      handle: async ({ params: { brandId, dropId }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return { success: true, drop: await drops.end(brandId, dropId, { actor: actorOf(user) }) };
      },
    }),
  ];
}
