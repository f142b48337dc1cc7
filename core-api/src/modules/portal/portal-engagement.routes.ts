import {
  achievementDefinitionsResponseSchema,
  portalBrandParamsSchema,
  setAchievementDefinitionsRequestSchema,
  streakSettingsResponseSchema,
  updateStreakSettingsRequestSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { AchievementService } from '../achievements/achievements.service.ts';
import type { StreakService } from '../streaks/streaks.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalEngagementRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  streaks: StreakService;
  achievements: AchievementService;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notFound = failure('No such brand among yours');
/** Room for the 200 definitions the schema allows, each with its longest name and description. */
const DEFINITIONS_BODY_LIMIT_BYTES = 160 * 1024;

/**
 * The Program page's streaks and achievements (docs/portal.md): the brand's streak settings and milestones
 * through the streak service of `PUT /services/streak/settings/:brandId`, its achievement definitions through
 * the achievement service of `GET|PUT /admin/brands/:brandId/achievements`. Changes need admin or owner and
 * are audited with the portal user as the actor; both are read from the database on every use, so a change
 * holds at once on every replica.
 */
export function portalEngagementRoutes(deps: PortalEngagementRoutesDeps): Route[] {
  const { team, streaks, achievements } = deps;
  const signedIn = [requireSession(deps.auth)];
  /** A change by an admin or owner: a viewer is refused before the body is read. */
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/streak-settings',
      summary: "The brand's streak settings: grace, multipliers, milestones, freezes (`custom: false` = defaults)",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Settings', schema: streakSettingsResponseSchema },
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        const { settings, custom } = await streaks.settings(brandId);
        return { success: true, brandId, settings, custom };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/streak-settings',
      summary: 'Change some streak settings (admin or owner): the service of `PUT /services/streak/settings/:brandId`',
      description: 'Fields left out keep their value; the result must be valid as a whole (milestones ascending…).',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: updateStreakSettingsRequestSchema },
      responses: {
        200: { description: 'Saved', schema: streakSettingsResponseSchema },
        400: failure('Invalid settings (`details.errors`: `field: message`)'),
        401: signedOut,
        403: csrfOrRole,
        404: notFound,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const settings = await streaks.updateSettings(brandId, body, actorOf(user));
        return { success: true, brandId, settings, custom: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/achievements',
      summary: "The brand's achievement definitions (`defaults: true` while it has none of its own)",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'The definitions in force', schema: achievementDefinitionsResponseSchema },
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, brandId, ...(await achievements.definitions(brandId)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/achievements',
      summary:
        "Replace the brand's achievement definitions (admin or owner; an empty list restores the defaults): " +
        'the service of `PUT /admin/brands/:brandId/achievements`',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: {
        params: portalBrandParamsSchema,
        body: setAchievementDefinitionsRequestSchema,
        bodyLimitBytes: DEFINITIONS_BODY_LIMIT_BYTES,
      },
      responses: {
        200: { description: 'The definitions now in force', schema: achievementDefinitionsResponseSchema },
        400: failure('Invalid definitions (`details.errors`: `definitions.N.field: message`)'),
        401: signedOut,
        403: csrfOrRole,
        404: notFound,
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const definitions = await achievements.setDefinitions(brandId, body.definitions, actorOf(user));
        return { success: true, brandId, ...definitions };
      },
    }),
  ];
}
