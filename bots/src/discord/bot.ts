import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Client,
  Events,
  type GuildMember,
  type Interaction,
  type Message,
  MessageFlags,
  type PartialGuildMember,
  PermissionFlagsBits,
  type PermissionsBitField,
} from 'discord.js';
import type { Logger } from 'pino';
import type { ChatPlace, ChatUser, Command, CommandInput, Reply } from '../core/types.ts';
import { renderInteractionReply, renderReply } from './render.ts';
import { optionName } from './slash-commands.ts';

/** What a command, button or message handler receives: a `CommandInput` before its arguments are parsed. */
export type AdapterInput = Omit<CommandInput<unknown>, 'args'>;

/**
 * The command core as the Discord adapter uses it, with its deps bound (`createDiscordCore` in
 * core-binding.ts builds it from bots/src/core; tests may pass their own).
 */
export interface DiscordCommandCore {
  commands: readonly Command[];
  /**
   * Runs `/name` (or an alias): `rawArgs` are the positional tokens joined by spaces (the last argument takes
   * the rest); validation and the admin check are the core's. Undefined for an unknown command.
   */
  dispatch(name: string, rawArgs: string, input: AdapterInput): Promise<Reply | undefined>;
  /** Runs a button's action (`<handler>:<payload>`). */
  press(action: string, input: AdapterInput): Promise<Reply>;
  /** A plain message (greetings); undefined when the bot stays silent. */
  handleMessage(message: { user: ChatUser; place: ChatPlace; text: string }): Promise<Reply | undefined>;
  /** A member joined a group (welcome bonus); undefined when the bot stays silent. */
  handleMemberJoined(member: { user: ChatUser; place: ChatPlace }): Promise<Reply | undefined>;
  /** A member's roles changed: reported to core-api for `chat_role` perk constraints. */
  handleMemberRolesChanged(change: { user: ChatUser; place: ChatPlace; roles: readonly string[] }): Promise<void>;
}

export interface DiscordBotOptions {
  logger: Logger;
  /**
   * Discord drops an interaction not answered within 3 s. A handler slower than this is deferred (an
   * ephemeral "thinking…") and the reply edited in when it is ready. 2 s when absent.
   */
  deferAfterMs?: number;
}

/** The answer to a slash command the core does not know (an outdated registration). */
export const UNKNOWN_COMMAND: Reply = {
  text: 'I do not know that command any more. Try /help (an admin may need to re-register the commands).',
  ephemeral: true,
};

/** The answer when a handler throws (the core normally turns failures into replies itself). */
export const ADAPTER_ERROR: Reply = {
  text: 'Something went wrong on our side. Please try again in a minute.',
  ephemeral: true,
};

/**
 * Wires a discord.js client to the command core: slash commands and buttons (interactions), messages
 * (greetings) and member joins (welcome bonus). Returns a function that detaches the listeners.
 */
export function attachDiscordBot(client: Client, core: DiscordCommandCore, options: DiscordBotOptions): () => void {
  const deferAfterMs = options.deferAfterMs ?? 2_000;
  const log = options.logger.child({ platform: 'discord' });
  const commandArgs = new Map<string, readonly string[]>();
  for (const command of core.commands) {
    commandArgs.set(command.name.toLowerCase(), command.argNames);
    for (const alias of command.aliases) {
      if (!commandArgs.has(alias.toLowerCase())) commandArgs.set(alias.toLowerCase(), command.argNames);
    }
  }

  const onInteraction = async (interaction: Interaction) => {
    try {
      if (interaction.isChatInputCommand()) {
        const argNames = commandArgs.get(interaction.commandName) ?? [];
        const rawArgs: string[] = [];
        for (const argName of argNames) {
          const value = interaction.options.get(optionName(argName))?.value;
          if (value === undefined || value === null) break;
          rawArgs.push(String(value));
        }
        const input = interactionInput(interaction);
        log.info({ command: interaction.commandName, user: input.user.id, group: input.place.groupId }, 'command');
        const work = core
          .dispatch(interaction.commandName, rawArgs.join(' '), input)
          .then((reply) => reply ?? UNKNOWN_COMMAND);
        await respond(interaction, work);
      } else if (interaction.isButton()) {
        const input = interactionInput(interaction);
        log.info({ action: interaction.customId, user: input.user.id, group: input.place.groupId }, 'button');
        await respond(interaction, core.press(interaction.customId, input));
      }
    } catch (error) {
      log.error({ err: error }, 'discord interaction failed');
    }
  };

  /** Answers an interaction with the handler's reply, deferring first when the handler is slow. */
  async function respond(interaction: ChatInputCommandInteraction | ButtonInteraction, work: Promise<Reply>) {
    let deferral: Promise<unknown> | undefined;
    const timer = setTimeout(() => {
      deferral = interaction.deferReply({ flags: MessageFlags.Ephemeral }).catch((error: unknown) => {
        log.warn({ err: error }, 'could not defer the interaction');
      });
    }, deferAfterMs);
    let reply: Reply;
    try {
      reply = await work;
      // The command carried a secret (`/setup`'s key): its answer stays with the admin who typed it.
      if (reply.sensitiveInput) reply = { ...reply, ephemeral: true };
    } catch (error) {
      log.error({ err: error }, 'handler failed');
      reply = ADAPTER_ERROR;
    } finally {
      clearTimeout(timer);
    }
    const rendered = renderInteractionReply(reply);
    if (!deferral) {
      await interaction.reply(rendered);
      return;
    }
    await deferral;
    if (reply.ephemeral) {
      const { flags: _flags, ...edit } = rendered;
      await interaction.editReply(edit);
    } else {
      // The placeholder was private; a public answer replaces it as a follow-up everyone sees.
      await interaction.deleteReply();
      await interaction.followUp(rendered);
    }
  }

  const onMessage = async (message: Message) => {
    try {
      if (message.author.bot || message.system || message.webhookId) return;
      if (!message.content) return;
      const input = messageInput(message);
      const reply = await core.handleMessage({ user: input.user, place: input.place, text: message.content });
      if (!reply) return;
      if (reply.ephemeral && message.inGuild()) {
        await message.author.send(renderReply(reply));
      } else {
        await message.reply(renderReply(reply));
      }
    } catch (error) {
      log.error({ err: error }, 'discord message handling failed');
    }
  };

  const onMemberAdd = async (member: GuildMember) => {
    try {
      if (member.user.bot) return;
      const reply = await core.handleMemberJoined({
        user: userOf(member.user, member.displayName),
        place: {
          platform: 'discord',
          groupId: member.guild.id,
          groupName: member.guild.name,
          channelId: member.guild.systemChannelId,
          ...(member.guild.systemChannel ? { channelName: member.guild.systemChannel.name } : {}),
        },
      });
      if (!reply) return;
      const channel = member.guild.systemChannel;
      if (channel && !reply.ephemeral) {
        await channel.send(renderReply(reply, { mentionUserId: member.id }));
      } else {
        await member.send(renderReply(reply));
      }
    } catch (error) {
      log.error({ err: error }, 'discord member join handling failed');
    }
  };

  /** Role changes (and members first seen through an update) go to core-api for role-gated perks. */
  const reportMemberRoles = async (member: GuildMember | PartialGuildMember) => {
    try {
      if (member.partial || member.user.bot) return;
      await core.handleMemberRolesChanged({
        user: userOf(member.user, member.displayName),
        place: { platform: 'discord', groupId: member.guild.id, groupName: member.guild.name, channelId: null },
        roles: memberRoleIds(member.guild.id, [...member.roles.cache.keys()]),
      });
    } catch (error) {
      log.error({ err: error }, 'discord member role report failed');
    }
  };
  const onMemberUpdate = async (before: GuildMember | PartialGuildMember, after: GuildMember) => {
    const was = before.partial ? undefined : [...before.roles.cache.keys()].sort().join();
    if (was === [...after.roles.cache.keys()].sort().join()) return;
    await reportMemberRoles(after);
  };

  client.on(Events.InteractionCreate, onInteraction);
  client.on(Events.MessageCreate, onMessage);
  client.on(Events.GuildMemberAdd, onMemberAdd);
  client.on(Events.GuildMemberUpdate, onMemberUpdate);
  client.on(Events.GuildMemberAvailable, reportMemberRoles);
  return () => {
    client.off(Events.InteractionCreate, onInteraction);
    client.off(Events.MessageCreate, onMessage);
    client.off(Events.GuildMemberAdd, onMemberAdd);
    client.off(Events.GuildMemberUpdate, onMemberUpdate);
    client.off(Events.GuildMemberAvailable, reportMemberRoles);
  };
}

/** A member's role ids without `@everyone` (whose id is the guild's: every member holds it). */
export function memberRoleIds(guildId: string, roles: readonly string[]): string[] {
  return roles.filter((role) => role !== guildId).sort();
}

/** Manage Server or Administrator: who may run admin-only commands in a guild. */
export function isGuildAdmin(permissions: Readonly<PermissionsBitField> | null | undefined): boolean {
  if (!permissions) return false;
  return (
    permissions.has(PermissionFlagsBits.ManageGuild, false) || permissions.has(PermissionFlagsBits.Administrator, false)
  );
}

function userOf(
  user: { id: string; username: string; globalName: string | null; bot: boolean },
  displayName?: string,
): ChatUser {
  return {
    platform: 'discord',
    id: user.id,
    username: user.username,
    displayName: displayName ?? user.globalName ?? user.username,
    isBot: user.bot,
  };
}

function interactionInput(interaction: ChatInputCommandInteraction | ButtonInteraction): AdapterInput {
  const member = interaction.member;
  const displayName =
    member && 'displayName' in member ? member.displayName : (member?.nick ?? interaction.user.globalName ?? undefined);
  const channel = interaction.channel;
  const place: ChatPlace = {
    platform: 'discord',
    groupId: interaction.guildId,
    channelId: interaction.channelId,
    ...(interaction.guild ? { groupName: interaction.guild.name } : {}),
    ...(channel && 'name' in channel && channel.name ? { channelName: channel.name } : {}),
  };
  return {
    user: userOf(interaction.user, displayName ?? undefined),
    place,
    // The permissions Discord computed for this member in this channel, sent with the interaction.
    isAdmin: async () => interaction.inGuild() && isGuildAdmin(interaction.memberPermissions),
    resolveUser: async (reference) => resolveMention(reference),
    // The member's roles, sent with the interaction (a cached GuildMember, or the raw API member's ids).
    memberRoles: async () => {
      if (!interaction.guildId || !member) return undefined;
      const roles = Array.isArray(member.roles) ? member.roles : [...member.roles.cache.keys()];
      return memberRoleIds(interaction.guildId, roles);
    },
  };
}

function messageInput(message: Message): AdapterInput {
  const place: ChatPlace = {
    platform: 'discord',
    groupId: message.guildId,
    channelId: message.channelId,
    ...(message.guild ? { groupName: message.guild.name } : {}),
    ...('name' in message.channel && message.channel.name ? { channelName: message.channel.name } : {}),
  };
  return {
    user: userOf(message.author, message.member?.displayName),
    place,
    isAdmin: async () => {
      if (!message.inGuild()) return false;
      const member = message.member ?? (await message.guild.members.fetch(message.author.id));
      return isGuildAdmin(member.permissions);
    },
    resolveUser: async (reference) => resolveMention(reference),
  };
}

/** `<@123>`, `<@!123>` or a bare snowflake → the user id. */
export function resolveMention(reference: string): string | undefined {
  const match = reference.trim().match(/^(?:<@!?(\d{17,20})>|(\d{17,20}))$/);
  return match?.[1] ?? match?.[2];
}
