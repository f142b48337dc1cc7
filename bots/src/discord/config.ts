import { z } from 'zod';
import { type BotConfig, loadBotConfig } from '../config.ts';

const emptyToUndefined = (value: unknown) => (value === '' ? undefined : value);
const snowflake = z
  .string()
  .regex(/^\d{17,20}$/, 'must be a Discord id (17-20 digits; Developer Portal → General Information)');

/**
 * The Discord adapter's own keys (docs/bots.md); the shared keys (PTS_CORE_API_URL, PTS_SERVICE_DOMAIN,
 * BOT_DATA_DIR, BOT_MASTER_KEY, HEALTH_PORT, LOG_LEVEL) are read by bots/src/config.ts.
 */
export const discordEnvSchema = z.object({
  DISCORD_BOT_TOKEN: z
    .string({ message: 'is required: the bot token (Developer Portal → Bot → Reset Token)' })
    .regex(/^[A-Za-z0-9_.-]{30,}$/, 'must be the bot token from the Developer Portal (Bot → Reset Token)'),
  DISCORD_APPLICATION_ID: z.string({ message: 'is required: the application id' }).pipe(snowflake),
  /** Register commands in this guild only (they appear at once; for development) instead of globally. */
  DISCORD_GUILD_ID: z.preprocess(emptyToUndefined, snowflake.optional()),
  /** Discord's REST base without version (a local fake in tests). */
  DISCORD_API_URL: z.preprocess(
    emptyToUndefined,
    z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL such as https://discord.com/api' })
      .default('https://discord.com/api'),
  ),
});
export type DiscordEnv = z.output<typeof discordEnvSchema>;

export interface DiscordBotConfig extends BotConfig {
  discord: DiscordEnv;
}

/** Parses the Discord keys only; the message names every wrong variable and what to fix. */
export function parseDiscordEnv(env: Record<string, string | undefined>): DiscordEnv {
  const parsed = discordEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'} ${issue.message}`);
    throw new Error(`Invalid Discord bot configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Everything `npm run bot:discord` needs: the Discord keys, then the shared bot configuration. */
export function loadDiscordConfig(env: Record<string, string | undefined> = process.env): DiscordBotConfig {
  const discord = parseDiscordEnv(env);
  return { ...loadBotConfig(env, { bot: 'discord' }), discord };
}
