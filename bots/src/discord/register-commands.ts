import { pathToFileURL } from 'node:url';
import { REST, type RESTPutAPIApplicationCommandsJSONBody, Routes } from 'discord.js';
import type { Command } from '../core/types.ts';
import { parseDiscordEnv } from './config.ts';
import { loadCommandList } from './core-binding.ts';
import { buildSlashCommands, type SlashCommandOptions } from './slash-commands.ts';

export interface RegisterOptions extends SlashCommandOptions {
  token: string;
  applicationId: string;
  /** Register for one guild (appears at once; for development) instead of globally. */
  guildId?: string;
  apiUrl?: string;
}

/**
 * Replaces the application's slash commands with the core's list (`PUT /applications/{id}/commands`, or
 * `/applications/{id}/guilds/{guild}/commands`). Idempotent: running it again changes nothing.
 */
export async function registerCommands(
  commands: readonly Command[],
  options: RegisterOptions,
): Promise<RESTPutAPIApplicationCommandsJSONBody> {
  const body = buildSlashCommands(commands, options);
  const rest = new REST({ api: (options.apiUrl ?? 'https://discord.com/api').replace(/\/+$/, '') }).setToken(
    options.token,
  );
  const route = options.guildId
    ? Routes.applicationGuildCommands(options.applicationId, options.guildId)
    : Routes.applicationCommands(options.applicationId);
  const registered = (await rest.put(route, { body })) as RESTPutAPIApplicationCommandsJSONBody;
  return registered;
}

async function main(): Promise<void> {
  const config = parseDiscordEnv(process.env);
  const registered = await registerCommands(loadCommandList(), {
    token: config.DISCORD_BOT_TOKEN,
    applicationId: config.DISCORD_APPLICATION_ID,
    apiUrl: config.DISCORD_API_URL,
    ...(config.DISCORD_GUILD_ID ? { guildId: config.DISCORD_GUILD_ID } : {}),
  });
  const where = config.DISCORD_GUILD_ID ? `guild ${config.DISCORD_GUILD_ID}` : 'all guilds (global)';
  console.log(
    `Registered ${registered.length} slash commands for ${where}: ${registered.map((c) => `/${c.name}`).join(' ')}`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
