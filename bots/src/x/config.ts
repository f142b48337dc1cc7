import cron from 'node-cron';
import { z } from 'zod';
import { BOT_DEFAULTS } from '../config.ts';

const emptyToUndefined = (value: unknown) => (value === '' ? undefined : value);
const required = (hint: string) =>
  z.preprocess(
    (value) => (typeof value === 'string' ? value.trim() || undefined : value),
    z.string({ message: `is required: ${hint}` }),
  );

/** X API access tiers; likes and reposts of the brand's posts can only be read from `pro` up. */
export const X_API_TIERS = ['free', 'basic', 'pro', 'enterprise'] as const;
export type XApiTier = (typeof X_API_TIERS)[number];

/** The X bot's environment (docs/bots.md, "X"). One process serves one brand. */
export const xBotEnvSchema = z.object({
  PTS_CORE_API_URL: z.preprocess(
    emptyToUndefined,
    z.url("must be core-api's URL, e.g. http://127.0.0.1:3000").default('http://127.0.0.1:3000'),
  ),
  PTS_BRAND_ID: required('the Brand ID the bot rewards for (pts brand list)').pipe(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a Brand ID (0x followed by 40 hex characters)')
      .transform((v) => v.toLowerCase()),
  ),
  PTS_BRAND_SECURITY_KEY: required('the brand security key pts brand create printed once'),
  X_BEARER_TOKEN: required("the app's bearer token from the X developer portal (app-only reads)"),
  /** Optional user-context keys (replies from the brand account); reads need only the bearer token. */
  X_API_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  X_API_SECRET: z.preprocess(emptyToUndefined, z.string().optional()),
  X_ACCESS_TOKEN: z.preprocess(emptyToUndefined, z.string().optional()),
  X_ACCESS_SECRET: z.preprocess(emptyToUndefined, z.string().optional()),
  X_API_ROOT: z.preprocess(emptyToUndefined, z.url('must be an http(s) URL').default('https://api.x.com')),
  X_POLL_CRON: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .refine((value) => cron.validate(value), 'must be a cron expression, e.g. */15 * * * *')
      .default('*/15 * * * *'),
  ),
  X_API_TIER: z.preprocess(
    emptyToUndefined,
    z.enum(X_API_TIERS, { message: `must be one of ${X_API_TIERS.join(', ')}` }).default('basic'),
  ),
  X_BOT_ADMIN_TOKEN: required('a secret for /config, /trigger and /reset (openssl rand -hex 24)').pipe(
    z.string().min(16, 'must be at least 16 characters (openssl rand -hex 24)'),
  ),
  PTS_SERVICE_DOMAIN: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[a-z0-9.-]+\.[a-z]{2,}$|^[a-z0-9-]+\.local$/i, 'must be a domain such as pts.local')
      .default('pts.local'),
  ),
  BOT_DATA_DIR: z.preprocess(emptyToUndefined, z.string().default(BOT_DEFAULTS.x.dataDir)),
  PORT: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).default(BOT_DEFAULTS.x.healthPort)),
  LOG_LEVEL: z.preprocess(
    emptyToUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});
export type XBotConfig = z.output<typeof xBotEnvSchema>;

/** Parses the environment; the message names every missing or wrong variable and what to put there. */
export function loadXBotConfig(env: Record<string, string | undefined>): XBotConfig {
  const parsed = xBotEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'} ${issue.message}`);
    throw new Error(`Invalid X bot configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Whether the tier can read likes and reposts of the brand's posts (post_like, post_repost). */
export function tierReadsEngagement(tier: XApiTier): boolean {
  return tier === 'pro' || tier === 'enterprise';
}
