import { Client, GatewayIntentBits, Partials } from 'discord.js';

/** The gateway intents the bot needs: guilds, guild messages with content (greetings), members (joins), DMs. */
export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildMembers,
  GatewayIntentBits.DirectMessages,
] as const;

export interface DiscordClientOptions {
  /** REST base without version, e.g. `https://discord.com/api` (a local fake in tests). */
  apiUrl: string;
}

/**
 * A discord.js client with the bot's intents. DM channels are not cached before their first message, so
 * `Partials.Channel` is needed for direct messages to arrive at all.
 */
export function createDiscordClient(options: DiscordClientOptions): Client {
  return new Client({
    intents: [...DISCORD_INTENTS],
    partials: [Partials.Channel],
    rest: { api: options.apiUrl.replace(/\/+$/, '') },
  });
}
