import { z } from 'zod';

const snowflake = z.string().regex(/^\d{17,20}$/, 'a Discord id (17-20 digits)');

/** The Discord bot's environment (`npm run bot:discord`); every key is documented in docs/bots.md. */
export const discordConfigSchema = z.object({
  DISCORD_BOT_TOKEN: z.string().min(20, 'the bot token from the Developer Portal (Bot → Reset Token)'),
  DISCORD_APPLICATION_ID: snowflake,
  /** Commands are registered for this guild only (instant, for development) when set; globally otherwise. */
  DISCORD_GUILD_ID: snowflake.optional(),
  DISCORD_API_URL: z.url({ protocol: /^https?$/ }).default('https://discord.com/api'),
  PTS_CORE_API_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:3000'),
  PTS_SERVICE_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+\.[a-z]{2,}$/i, 'a domain such as pts.example.com')
    .default('pts.local'),
  BOT_DATA_DIR: z.string().min(1).default('data/bots'),
  BOT_MASTER_KEY: z.string().min(32, 'at least 32 characters; it encrypts the groups\' security keys at rest'),
  HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type DiscordConfig = z.output<typeof discordConfigSchema>;

/** Parses the environment; a bad value throws one message listing every key to fix. */
export function loadDiscordConfig(env: NodeJS.ProcessEnv = process.env): DiscordConfig {
  const parsed = discordConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid Discord bot configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** Only the keys register-commands.ts needs. */
export const registerConfigSchema = discordConfigSchema.pick({
  DISCORD_BOT_TOKEN: true,
  DISCORD_APPLICATION_ID: true,
  DISCORD_GUILD_ID: true,
  DISCORD_API_URL: true,
});
