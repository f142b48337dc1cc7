import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const emptyToUndefined = (value: unknown) => (value === '' ? undefined : value);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(emptyToUndefined, schema.optional());

/**
 * The bots' environment (docs/bots.md). The Telegram keys are read here; Discord keys (`DISCORD_BOT_TOKEN`,
 * `DISCORD_APPLICATION_ID`) are the Discord adapter's own.
 */
export const botEnvSchema = z
  .object({
    TELEGRAM_BOT_TOKEN: optional(
      z.string().regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'must be a token from @BotFather (123456:ABC…)'),
    ),
    /** Where the Bot API lives (tests point it at a local fake); Telegram's when unset. */
    TELEGRAM_API_ROOT: optional(z.url('must be an http(s) URL')),
    PTS_CORE_API_URL: z.preprocess(
      emptyToUndefined,
      z.url("must be core-api's URL, e.g. http://127.0.0.1:3000").default('http://127.0.0.1:3000'),
    ),
    PTS_SERVICE_DOMAIN: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9.-]+\.[a-z]{2,}$|^[a-z0-9-]+\.local$/i, 'must be a domain such as pts.local')
        .default('pts.local'),
    ),
    /** Unset: the bot's own default (BOT_DEFAULTS), so bots started side by side never share a dir. */
    BOT_DATA_DIR: z.preprocess(emptyToUndefined, z.string().optional()),
    BOT_MASTER_KEY: optional(z.string().regex(HEX_KEY, 'must be 32 bytes as 64 hex characters (openssl rand -hex 32)')),
    TELEGRAM_MODE: z.preprocess(
      emptyToUndefined,
      z.enum(['polling', 'webhook'], { message: 'must be polling or webhook' }).default('polling'),
    ),
    /** Public HTTPS URL Telegram posts updates to in webhook mode (its path is served by this process). */
    TELEGRAM_WEBHOOK_URL: optional(z.url('must be the public https URL of the webhook')),
    TELEGRAM_WEBHOOK_SECRET: optional(
      z.string().regex(/^[A-Za-z0-9_-]{16,256}$/, 'must be 16-256 letters, digits, _ or - (Telegram secret_token)'),
    ),
    /** Unset: the bot's own default port (BOT_DEFAULTS). */
    HEALTH_PORT: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).optional()),
    LOG_LEVEL: z.preprocess(
      emptyToUndefined,
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    ),
  })
  .superRefine((env, ctx) => {
    if (env.TELEGRAM_MODE === 'webhook') {
      if (!env.TELEGRAM_WEBHOOK_URL)
        ctx.addIssue({
          code: 'custom',
          path: ['TELEGRAM_WEBHOOK_URL'],
          message: 'is required when TELEGRAM_MODE=webhook',
        });
      if (!env.TELEGRAM_WEBHOOK_SECRET)
        ctx.addIssue({
          code: 'custom',
          path: ['TELEGRAM_WEBHOOK_SECRET'],
          message: 'is required when TELEGRAM_MODE=webhook',
        });
    }
  });
export type BotEnv = z.output<typeof botEnvSchema>;

/**
 * Each bot's own data dir and health port when BOT_DATA_DIR / HEALTH_PORT are unset: bots run side by side
 * with the documented defaults never share a store (one bot's /setup is not another's) or a port.
 */
export const BOT_DEFAULTS = {
  discord: { dataDir: '.pts-bot-data/discord', healthPort: 8081 },
  telegram: { dataDir: '.pts-bot-data/telegram', healthPort: 8082 },
  x: { dataDir: '.pts-bot-data/x', healthPort: 8083 },
} as const;
export type BotKind = keyof typeof BOT_DEFAULTS;

export interface BotConfig extends Omit<BotEnv, 'BOT_DATA_DIR' | 'HEALTH_PORT'> {
  BOT_DATA_DIR: string;
  HEALTH_PORT: number;
  /** The store key: BOT_MASTER_KEY, or the one generated into BOT_DATA_DIR/master-key. */
  masterKey: Buffer;
  /**
   * Writes a generated key to BOT_DATA_DIR/master-key; called once the platform accepted the bot's token,
   * so a refused token leaves no key file behind. A no-op when the key came from the environment or a file.
   */
  keepMasterKey(): void;
}

/** Parses the environment; the message names every wrong variable and what to fix. */
export function parseBotEnv(env: Record<string, string | undefined>): BotEnv {
  const parsed = botEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'} ${issue.message}`);
    throw new Error(`Invalid bot configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/**
 * The configuration: environment plus the master key, taken from BOT_MASTER_KEY or generated once into
 * `BOT_DATA_DIR/master-key` (mode 0600) like core-api's data dir. An env key is never written to disk.
 */
export function loadBotConfig(
  env: Record<string, string | undefined> = process.env,
  options: { required?: { name: string; hint: string }[]; bot?: BotKind } = {},
): BotConfig {
  const parsed = parseBotEnv(env);
  // Checked before anything is written: a bot started without its token leaves no key file behind.
  for (const { name, hint } of options.required ?? []) {
    if (!env[name]?.trim()) throw new Error(`${name} is required: ${hint}`);
  }
  const defaults = BOT_DEFAULTS[options.bot ?? 'discord'];
  const dataDir = parsed.BOT_DATA_DIR ?? defaults.dataDir;
  let hex = parsed.BOT_MASTER_KEY;
  let generated: string | undefined;
  const path = join(dataDir, 'master-key');
  if (!hex) {
    if (existsSync(path)) hex = readFileSync(path, 'utf8').trim();
    else {
      hex = randomBytes(32).toString('hex');
      generated = hex;
    }
    if (!HEX_KEY.test(hex)) throw new Error(`${path} must hold 64 hex characters; delete it to generate a new key`);
  }
  return {
    ...parsed,
    BOT_DATA_DIR: dataDir,
    HEALTH_PORT: parsed.HEALTH_PORT ?? defaults.healthPort,
    masterKey: Buffer.from(hex, 'hex'),
    keepMasterKey() {
      if (generated === undefined || existsSync(path)) return;
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(path, `${generated}\n`, { mode: 0o600 });
    },
  };
}
