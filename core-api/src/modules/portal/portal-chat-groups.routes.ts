import {
  AppError,
  chatGroupResponseSchema,
  portalChatGroupParamsSchema,
  updateChatGroupRequestSchema,
} from '@pts/shared';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import {
  type ChatGroupDeps,
  chatGroupBrand,
  deactivateChatGroup,
  updateChatGroup,
} from '../community/chat-groups.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthDeps } from './portal-auth.service.ts';
import { portalUserOf, requireSession } from './portal-session.ts';
import { requireRole } from './portal-team.service.ts';

export type PortalChatGroupRoutesDeps = PortalAuthDeps & Omit<ChatGroupDeps, 'actor'>;

const session: ['portalSession'] = ['portalSession'];
const notFound = failure('No such brand among yours, or no such chat group linked to it');

/**
 * The Integrations page's chat groups (docs/portal.md, "Integrations"): admins and owners change what the bots'
 * brand-signed `PATCH|DELETE /services/chat-groups/:chatGroupId` change — the group's name and its
 * configuration (rewards, cooldowns, switches; a changed reward or cooldown is written to the brand's rule) —
 * and unlink it from the brand (deactivate; a later `/setup` in the group links it again). The same chat group
 * service, audited with the portal user. A group linked to another brand answers 404, like an unknown one.
 */
export function portalChatGroupRoutes(deps: PortalChatGroupRoutesDeps): Route[] {
  const signedIn = [requireSession(deps)];
  /** The admin (or owner) changing one of the brand's own groups. */
  const adminOfGroup = async (res: Parameters<typeof portalUserOf>[0], brandId: string, chatGroupId: string) => {
    const user = portalUserOf(res);
    await requireRole(deps.db, user.id, brandId, 'admin');
    if ((await chatGroupBrand(deps.db, chatGroupId)) !== brandId.toLowerCase()) {
      throw new AppError('NOT_FOUND', `No chat group ${chatGroupId} is linked to this brand`, {
        field: 'chatGroupId',
        value: chatGroupId,
      });
    }
    return { ...deps, actor: actorOf(user) };
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
        'Deep-merges configMetadata; a changed reward or cooldown is also written to the brand rule that pays it.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalChatGroupParamsSchema, body: updateChatGroupRequestSchema },
      responses: { ...responses, 400: failure('Validation failed') },
      handle: async ({ params: { brandId, chatGroupId }, body, res }) => {
        const groupDeps = await adminOfGroup(res, brandId, chatGroupId);
        return { success: true, ...(await updateChatGroup(groupDeps, chatGroupId, body)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/chat-groups/:chatGroupId',
      summary: 'Unlink a chat group from the brand (admin or owner): the bots stop rewarding in it until a new /setup',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalChatGroupParamsSchema },
      responses,
      handle: async ({ params: { brandId, chatGroupId }, res }) => {
        const groupDeps = await adminOfGroup(res, brandId, chatGroupId);
        return { success: true, chatGroup: await deactivateChatGroup(groupDeps, chatGroupId) };
      },
    }),
  ];
}
