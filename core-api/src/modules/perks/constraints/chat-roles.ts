import type { Clock } from '@pts/shared';
import type { Database } from '../../../db/database.ts';

/** A chat platform whose member roles a `chat_role` constraint can require. */
export type ChatPlatform = 'discord' | 'telegram';

/**
 * Port to a chat platform's member roles (the Discord and Telegram adapters implement it). Returns the
 * member's current role ids, or `[]` when the user is not a member; throws when the platform cannot answer.
 */
export interface ChatRoleSource {
  fetchMemberRoles(input: {
    brandId: string;
    platform: ChatPlatform;
    guildId: string;
    userId: string;
  }): Promise<string[]>;
}

/** A stored roles snapshot. */
export interface ChatRolesSnapshot {
  roles: string[];
  refreshedAt: Date;
}

/** The brand's last known roles of a member, or undefined when none were ever reported. */
export async function findChatRoles(
  db: Database,
  key: { brandId: string; platform: string; guildId: string; userId: string },
): Promise<ChatRolesSnapshot | undefined> {
  const row = await db
    .selectFrom('chat_member_roles')
    .select(['roles', 'refreshed_at'])
    .where('brand_id', '=', key.brandId)
    .where('platform', '=', key.platform)
    .where('guild_id', '=', key.guildId)
    .where('platform_user_id', '=', key.userId)
    .executeTakeFirst();
  return row ? { roles: row.roles, refreshedAt: new Date(row.refreshed_at) } : undefined;
}

/** Stores a member's roles as of now (a bot report or a ChatRoleSource answer); replaces the older snapshot. */
export async function saveChatRoles(
  deps: { db: Database; clock: Clock },
  input: { brandId: string; platform: string; guildId: string; userId: string; roles: string[] },
): Promise<ChatRolesSnapshot> {
  const refreshedAt = deps.clock.now();
  const roles = [...new Set(input.roles)];
  await deps.db
    .insertInto('chat_member_roles')
    .values({
      brand_id: input.brandId,
      platform: input.platform,
      guild_id: input.guildId,
      platform_user_id: input.userId,
      roles: JSON.stringify(roles),
      refreshed_at: refreshedAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['brand_id', 'platform', 'guild_id', 'platform_user_id'])
        .doUpdateSet({ roles: JSON.stringify(roles), refreshed_at: refreshedAt }),
    )
    .execute();
  return { roles, refreshedAt };
}
