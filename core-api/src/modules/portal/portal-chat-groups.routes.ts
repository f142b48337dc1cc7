import { chatGroupResponseSchema, portalChatGroupParamsSchema, updateChatGroupRequestSchema } from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { CommunityService } from '../community/community.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalChatGroupRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  /** The chat groups (the same service as the bots' `/services/chat-groups`). */
  community: CommunityService;
}

const session: ['portalSession'] = ['portalSession'];
const notFound = failure('No such brand among yours, or no such chat group linked to it');

/**
 * The Integrations page's chat groups (docs/portal.md, "Integrations"): admins and owners change what the bots'
 * brand-signed `PATCH|DELETE /services/chat-groups/:chatGroupId` change — the group's name and its
 * configuration (rewards, cooldowns, switches; a changed reward or cooldown, and only it, is written to the brand's rule) —
 * and unlink it from the brand (deactivate; a later `/setup` in the group links it again). The same chat group
 * service, audited with the portal user. A group linked to another brand answers 404, like an unknown one.
 */
export function portalChatGroupRoutes(deps: PortalChatGroupRoutesDeps): Route[] {
  const signedIn = [requireSession(deps.auth)];
  /** A change by an admin or owner: a viewer is refused before the body is read. */
  const asAdmin = [...signedIn, requireBrandRole(deps.team, 'admin')];
  /** The admin (or owner) changing one of the brand's groups: the audit log's actor. */
  const adminOf = async (res: Parameters<typeof portalUserOf>[0], brandId: string) => {
    const user = portalUserOf(res);
    await deps.team.requireRole(user.id, brandId, 'admin');
    return actorOf(user);
  };
  const responses = {
    200: { description: 'The group', schema: chatGroupResponseSchema },
    401: failure('Not signed in (no session, or it ended)'),
    403: failure('Missing CSRF token, or the role cannot make this change'),
    404: notFound,
  };
  return [
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/chat-groups/:chatGroupId',
      summary: "Change a chat group's name or configuration (admin or owner): the bots' `PATCH /services/chat-groups`",
      description:
        'Deep-merges configMetadata; a changed reward or cooldown is also written to the brand rule that pays it (only that value: the rule keeps its other settings).',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalChatGroupParamsSchema, body: updateChatGroupRequestSchema },
      responses: { ...responses, 400: failure('Validation failed') },
      handle: async ({ params: { brandId, chatGroupId }, body, res }) => {
        const actor = await adminOf(res, brandId);
        return { success: true, ...(await deps.community.updateChatGroup(chatGroupId, body, { actor, brandId })) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/chat-groups/:chatGroupId',
      summary: 'Unlink a chat group from the brand (admin or owner): the bots stop rewarding in it until a new /setup',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalChatGroupParamsSchema },
      responses,
      handle: async ({ params: { brandId, chatGroupId }, res }) => {
        const actor = await adminOf(res, brandId);
        const chatGroup = await deps.community.deactivateChatGroup(chatGroupId, { actor, brandId });
        return { success: true, chatGroup };
      },
    }),
  ];
}
