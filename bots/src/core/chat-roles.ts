import type { CoreClient } from '@pts/shared';
import { groupContext } from './context.ts';
import type { BotDeps, ChatPlace, ChatUser, CommandInput } from './types.ts';

/**
 * Member roles for perks gated by a `chat_role` constraint (docs/constraints.md): the bots tell core-api a
 * member's current roles — Discord role ids, Telegram member status — so a role-gated perk works without
 * anyone calling `/services/chat-roles` by hand. Reported when the member looks at or claims perks, and on
 * Discord whenever the member's roles change. A failed report never blocks the command: core-api then judges
 * on its last snapshot (and refuses when that is too old), which is the safe side.
 */
export async function reportRoles(
  client: CoreClient,
  report: { user: ChatUser; place: ChatPlace; roles: readonly string[] },
  deps: Pick<BotDeps, 'logger'>,
): Promise<void> {
  if (report.place.groupId === null) return;
  try {
    await client.reportChatRoles({
      platform: report.user.platform,
      guildId: report.place.groupId,
      userId: report.user.id,
      roles: [...new Set(report.roles)],
    });
  } catch (error) {
    deps.logger.warn(
      { err: error, platform: report.user.platform, groupId: report.place.groupId },
      'could not report member roles',
    );
  }
}

/** Reports the acting member's roles when the adapter can read them (before `/perks` and claims). */
export async function reportMemberRoles(
  input: CommandInput<unknown>,
  client: CoreClient,
  deps: Pick<BotDeps, 'logger'>,
): Promise<void> {
  if (!input.memberRoles || input.place.groupId === null) return;
  let roles: string[] | undefined;
  try {
    roles = await input.memberRoles();
  } catch (error) {
    deps.logger.warn({ err: error, platform: input.user.platform }, 'could not read member roles');
    return;
  }
  if (roles) await reportRoles(client, { user: input.user, place: input.place, roles }, deps);
}

/** A member's roles changed (Discord `GUILD_MEMBER_UPDATE`): reported for the group's brand, if set up. */
export async function handleMemberRolesChanged(
  change: { user: ChatUser; place: ChatPlace; roles: readonly string[] },
  deps: BotDeps,
): Promise<void> {
  if (change.user.isBot) return;
  const ctx = await groupContext(change.user, change.place, deps);
  if ('reply' in ctx) return;
  await reportRoles(ctx.client, change, deps);
}
