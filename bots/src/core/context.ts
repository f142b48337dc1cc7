import { type CoreClient, platformUserEmail } from '@pts/shared';
import { GROUP_ONLY, NOT_SET_UP } from './replies.ts';
import type { BotDeps, BrandCredentials, ChatPlace, ChatUser, Reply } from './types.ts';

/** What a group-bound command runs with: the group's brand client and the user's synthetic identity. */
export interface GroupContext {
  client: CoreClient;
  credentials: BrandCredentials;
  groupId: string;
  /** `<platform>:<group id>`, the id core-api keeps the group under. */
  chatGroupId: string;
  identityKey: string;
}

/** The user's identity: `<platform>_<platform user id>@<service domain>` (spec 2.4). */
export function identityOf(user: Pick<ChatUser, 'platform' | 'id'>, deps: Pick<BotDeps, 'serviceDomain'>): string {
  return platformUserEmail(user.platform, user.id, deps.serviceDomain);
}

/**
 * What events and streak activity carry about the member so the brand's leaderboards show a name rather than
 * `telegram user 1002`: `displayName` (the platform's display name, else `@username`) and `username`.
 */
export function memberMetadata(user: Pick<ChatUser, 'displayName' | 'username'>): {
  displayName?: string;
  username?: string;
} {
  const displayName = user.displayName?.trim() || (user.username ? `@${user.username}` : undefined);
  return {
    ...(displayName ? { displayName } : {}),
    ...(user.username ? { username: user.username } : {}),
  };
}

/**
 * The brand of the place: the group's `/setup` credentials. In a direct message there is no group, and the
 * bot does not guess one (a user may belong to several brands' groups): it answers with guidance.
 */
export async function groupContext(
  user: ChatUser,
  place: ChatPlace,
  deps: BotDeps,
): Promise<GroupContext | { reply: Reply }> {
  if (place.groupId === null) return { reply: GROUP_ONLY };
  const credentials = await deps.groups.get(place.platform, place.groupId);
  if (!credentials) return { reply: NOT_SET_UP };
  return {
    client: deps.coreClient(credentials),
    credentials,
    groupId: place.groupId,
    chatGroupId: `${place.platform}:${place.groupId}`,
    identityKey: identityOf(user, deps),
  };
}
