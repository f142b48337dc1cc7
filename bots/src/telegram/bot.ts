import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, type Context } from 'grammy';
import type { Chat, MessageEntity, User, UserFromGetMe } from 'grammy/types';
import { handleMemberJoined, handleMessage } from '../core/participation.ts';
import { type CommandRegistry, createCommandRegistry } from '../core/registry.ts';
import type { BotDeps, ChatPlace, ChatUser, Reply } from '../core/types.ts';
import { renderReply } from './render.ts';

export interface TelegramBotOptions {
  token: string;
  deps: BotDeps;
  /** The Bot API root (a local fake in tests); Telegram's when absent. */
  apiRoot?: string;
  /** Skips `getMe` (unit tests). */
  botInfo?: UserFromGetMe;
  registry?: CommandRegistry;
  /** Flood-limit retries (auto-retry): attempts and the longest `retry_after` waited for. */
  autoRetry?: { maxRetryAttempts?: number; maxDelaySeconds?: number };
}

const COMMAND = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/;
const ADMIN_STATUSES = new Set(['administrator', 'creator']);

function chatUser(user: User): ChatUser {
  const displayName = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return {
    platform: 'telegram',
    id: String(user.id),
    ...(user.username ? { username: user.username } : {}),
    ...(displayName ? { displayName } : {}),
    isBot: user.is_bot,
  };
}

function chatPlace(chat: Chat): ChatPlace {
  const group = chat.type === 'group' || chat.type === 'supergroup';
  return {
    platform: 'telegram',
    groupId: group ? String(chat.id) : null,
    ...(group && 'title' in chat && chat.title ? { groupName: chat.title } : {}),
    channelId: String(chat.id),
    // Everyone in a group reads what a member types there.
    ...(group ? { typedInPublic: true } : {}),
  };
}

/**
 * The grammY bot over the command core: commands (with aliases and `@botname`), inline-keyboard buttons,
 * greetings, new-member bonuses; admin rights via `getChatMember`; flood limits retried (auto-retry).
 */
export function createTelegramBot(options: TelegramBotOptions): { bot: Bot; registry: CommandRegistry } {
  const { deps } = options;
  const log = deps.logger;
  const registry = options.registry ?? createCommandRegistry(deps);
  const bot = new Bot(options.token, {
    ...(options.botInfo ? { botInfo: options.botInfo } : {}),
    ...(options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {}),
  });
  bot.api.config.use(
    autoRetry({
      maxRetryAttempts: options.autoRetry?.maxRetryAttempts ?? 5,
      maxDelaySeconds: options.autoRetry?.maxDelaySeconds ?? 60,
    }),
  );

  // Telegram redelivers an update it thinks was not acknowledged (a slow webhook answer, a restart): the
  // same update_id is handled once, so a greeting or /daily is never processed twice by this process.
  const recentUpdates = new Set<number>();
  bot.use(async (ctx, next) => {
    const id = ctx.update.update_id;
    if (recentUpdates.has(id)) {
      log.debug({ updateId: id }, 'telegram update delivered again; skipped');
      return;
    }
    recentUpdates.add(id);
    if (recentUpdates.size > 10_000) recentUpdates.delete(recentUpdates.values().next().value as number);
    await next();
  });

  // Members seen per group (username → id), so `/reward @name 10` works for people who wrote in the group.
  const seen = new Map<string, Map<string, string>>();
  const remember = (chatId: number, user: User) => {
    if (!user.username) return;
    let members = seen.get(String(chatId));
    if (!members) {
      members = new Map();
      seen.set(String(chatId), members);
    }
    members.set(user.username.toLowerCase(), String(user.id));
  };

  const isAdmin = (ctx: Context, user: User) => async (): Promise<boolean> => {
    const chat = ctx.chat;
    if (!chat || (chat.type !== 'group' && chat.type !== 'supergroup')) return false;
    try {
      const member = await ctx.api.getChatMember(chat.id, user.id);
      return ADMIN_STATUSES.has(member.status);
    } catch (error) {
      log.warn({ err: error, chatId: chat.id, userId: user.id }, 'getChatMember failed; treating as not admin');
      return false;
    }
  };

  /**
   * The member's "roles" for `chat_role` perk constraints: Telegram has no roles, so its member status
   * (`creator`, `administrator`, `member`, `restricted`), plus `admin` for the first two.
   */
  const memberRoles = (ctx: Context, user: User) => async (): Promise<string[] | undefined> => {
    const chat = ctx.chat;
    if (!chat || (chat.type !== 'group' && chat.type !== 'supergroup')) return undefined;
    const member = await ctx.api.getChatMember(chat.id, user.id);
    return telegramMemberRoles(member.status);
  };

  /** In a private chat: the set-up groups this user is a member of (a link code's possible brands). */
  const memberGroups = (ctx: Context, user: User) => async (): Promise<string[]> => {
    const groups: string[] = [];
    for (const groupId of await deps.groups.list('telegram')) {
      try {
        const member = await ctx.api.getChatMember(Number(groupId), user.id);
        if (!['left', 'kicked'].includes(member.status)) groups.push(groupId);
      } catch (error) {
        log.debug({ err: error, groupId }, 'getChatMember failed; group skipped');
      }
    }
    return groups;
  };

  /** Deletes a message that holds a secret; false (and a warning) when the bot lacks the right. */
  const deleteSecret = async (ctx: Context, chatId: number, messageId: number): Promise<boolean> => {
    try {
      await ctx.api.deleteMessage(chatId, messageId);
      return true;
    } catch (error) {
      log.warn(
        { chatId, reason: error instanceof Error ? error.message : String(error) },
        'could not delete a message holding a secret (the bot needs the delete-messages right)',
      );
      return false;
    }
  };

  const resolveUser =
    (chatId: number, entities: readonly MessageEntity[], text: string) => async (reference: string) => {
      for (const entity of entities) {
        if (entity.type === 'text_mention' && text.slice(entity.offset, entity.offset + entity.length) === reference) {
          return String(entity.user.id);
        }
      }
      const name = reference.replace(/^@/, '').toLowerCase();
      return seen.get(String(chatId))?.get(name);
    };

  async function send(ctx: Context, reply: Reply, replyTo?: number): Promise<void> {
    const chatId = ctx.chat?.id;
    if (chatId === undefined) return;
    if (reply.secret && ctx.chat?.type !== 'private') {
      // A secret (a link code) posted in a group could be used by anyone there: it goes to a private chat.
      const from = ctx.from;
      let delivered = false;
      if (from) {
        try {
          await ctx.api.sendMessage(from.id, renderReply(reply).text, { parse_mode: 'HTML' });
          delivered = true;
        } catch (error) {
          // 403: the user never opened a private chat with the bot, which may not write first.
          log.info({ err: error, userId: from.id }, 'could not send a secret reply privately');
        }
      }
      const name = ctx.me.username;
      const notice: Reply = delivered
        ? { text: 'I sent it to you in a private message.' }
        : {
            text: `For your security I only send this in a private chat: open @${name}, press Start, then run the command here again.`,
          };
      return send(ctx, notice, replyTo);
    }
    const rendered = renderReply(reply);
    await ctx.api.sendMessage(chatId, rendered.text, {
      parse_mode: 'HTML',
      ...(rendered.reply_markup ? { reply_markup: rendered.reply_markup } : {}),
      ...(replyTo !== undefined && !reply.sensitiveInput
        ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
        : {}),
    });
  }

  bot.on('message:new_chat_members', async (ctx) => {
    for (const member of ctx.message.new_chat_members) {
      if (member.is_bot) continue;
      remember(ctx.chat.id, member);
      const reply = await handleMemberJoined({ user: chatUser(member), place: chatPlace(ctx.chat) }, deps);
      if (reply) await send(ctx, reply);
    }
  });

  bot.on('message:text', async (ctx) => {
    const { message } = ctx;
    const from = message.from;
    remember(ctx.chat.id, from);
    const user = chatUser(from);
    const place = chatPlace(ctx.chat);
    const match = COMMAND.exec(message.text);
    if (match) {
      const [, name = '', target, rawArgs = ''] = match;
      if (target && target.toLowerCase() !== ctx.me.username.toLowerCase()) return;
      // A secret typed in a group (a key, a link code) is deleted at once, before anything else runs.
      const secretInGroup =
        place.typedInPublic === true && registry.find(name)?.sensitiveArgs === true && rawArgs.trim() !== '';
      const deletedAtOnce = secretInGroup && (await deleteSecret(ctx, ctx.chat.id, message.message_id));
      const reply = await registry.dispatch(name, rawArgs, {
        user,
        place,
        isAdmin: isAdmin(ctx, from),
        memberRoles: memberRoles(ctx, from),
        resolveUser: resolveUser(ctx.chat.id, message.entities ?? [], message.text),
        ...(place.groupId === null ? { memberGroups: memberGroups(ctx, from) } : {}),
      });
      if (!reply) return;
      if (reply.sensitiveInput && place.typedInPublic && rawArgs.trim() !== '' && !deletedAtOnce) {
        if (secretInGroup || !(await deleteSecret(ctx, ctx.chat.id, message.message_id))) {
          reply.text = `${reply.text}\nPlease delete your message: it holds a secret.`;
        }
      }
      await send(ctx, reply, deletedAtOnce ? undefined : message.message_id);
      return;
    }
    const reply = await handleMessage({ user, place, text: message.text }, deps);
    if (reply) await send(ctx, reply, message.message_id);
  });

  bot.on('callback_query:data', async (ctx) => {
    const query = ctx.callbackQuery;
    const chat = query.message?.chat;
    const reply: Reply = chat
      ? await registry.press(query.data, {
          user: chatUser(query.from),
          place: chatPlace(chat),
          isAdmin: isAdmin(ctx, query.from),
          memberRoles: memberRoles(ctx, query.from),
        })
      : { text: 'This button only works in the chat it was sent to.' };
    await ctx.answerCallbackQuery({ text: reply.text.slice(0, 200) });
    if (chat) await send(ctx, reply);
  });

  bot.catch((error) => {
    log.error({ err: error.error, updateId: error.ctx.update.update_id }, 'telegram update failed');
  });

  return { bot, registry };
}

/** A Telegram member status as `chat_role` roles: the status itself, plus `admin` for creators and administrators. */
export function telegramMemberRoles(status: string): string[] {
  return ADMIN_STATUSES.has(status) ? [status, 'admin'] : [status];
}
