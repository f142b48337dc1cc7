import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord.js';
import type { Command } from '../core/types.ts';

/** Discord allows at most this many global chat-input commands per application. */
export const MAX_COMMANDS = 100;
const NAME_PATTERN = /^[-_\p{Ll}\p{N}]{1,32}$/u;

export interface SlashCommandOptions {
  /**
   * Discord has no aliases. Each alias becomes its own slash command (same options, description "Same as
   * /name: …") so users who know a name from Telegram find it; the adapter dispatches the alias and the core
   * resolves it. False registers only the main names.
   */
  includeAliases?: boolean;
}

/**
 * The application command JSON for `PUT /applications/{id}/commands`, built from the core's command list:
 * one string option per positional argument (required until the first argument the schema lets be absent),
 * admin-only commands hidden by default from members without Manage Server (the core still checks),
 * DM-capable commands offered in the bot's DMs too.
 */
export function buildSlashCommands(
  commands: readonly Command[],
  options: SlashCommandOptions = {},
): RESTPutAPIApplicationCommandsJSONBody {
  const includeAliases = options.includeAliases ?? true;
  const body: RESTPutAPIApplicationCommandsJSONBody = [];
  const seen = new Set<string>();
  const entries: { name: string; command: Command; aliasOf?: string }[] = [];
  for (const command of commands) entries.push({ name: command.name, command });
  if (includeAliases) {
    for (const command of commands) {
      for (const alias of command.aliases) entries.push({ name: alias, command, aliasOf: command.name });
    }
  }
  for (const { name: rawName, command, aliasOf } of entries) {
    const name = rawName.toLowerCase();
    if (!NAME_PATTERN.test(name)) {
      if (aliasOf) continue;
      throw new Error(
        `Command name "${rawName}" is not a valid Discord slash command name (1-32 lowercase letters, digits, - or _)`,
      );
    }
    if (seen.has(name)) continue;
    if (body.length >= MAX_COMMANDS) {
      if (aliasOf) continue;
      throw new Error(`More than ${MAX_COMMANDS} commands: Discord refuses the list`);
    }
    seen.add(name);
    const description = aliasOf ? `Same as /${aliasOf}: ${command.description}` : command.description;
    let optional = false;
    body.push({
      type: ApplicationCommandType.ChatInput,
      name,
      description: clip(description || name, 100),
      options: command.argNames.slice(0, 25).map((argName) => {
        optional ||= acceptsAbsent(command, argName);
        return {
          type: ApplicationCommandOptionType.String,
          name: optionName(argName),
          description: clip(optionName(argName).replaceAll('_', ' '), 100),
          required: !optional,
        };
      }),
      default_member_permissions: command.adminOnly ? PermissionFlagsBits.ManageGuild.toString() : null,
      contexts: command.dmAllowed
        ? [InteractionContextType.Guild, InteractionContextType.BotDM]
        : [InteractionContextType.Guild],
      integration_types: [ApplicationIntegrationType.GuildInstall],
    });
  }
  return body;
}

/** The slash option name for a positional argument name (lowercase, `-`/`_` only). */
export function optionName(argName: string): string {
  return (
    argName
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .toLowerCase()
      .replace(/[^-_\p{Ll}\p{N}]/gu, '_')
      .slice(0, 32) || 'value'
  );
}

/** Whether the command's argument schema accepts the argument missing (an object schema with that key optional). */
function acceptsAbsent(command: Command, argName: string): boolean {
  const shape = (command.args as { shape?: Record<string, { safeParse?: (value: unknown) => { success: boolean } }> })
    .shape;
  const field = shape?.[argName];
  if (!field?.safeParse) return false;
  return field.safeParse(undefined).success;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
