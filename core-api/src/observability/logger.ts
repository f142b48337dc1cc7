import { type DestinationStream, type Level, type Logger, pino } from 'pino';

export const REDACTED = '[redacted]';

/** Property names that hold secrets wherever they appear in a logged object. */
export const SECRET_KEYS = [
  'securityKey',
  'security_key',
  'apiKey',
  'api_key',
  'privateKey',
  'private_key',
  'adminToken',
  'admin_token',
  'password',
  'secret',
  'webhookSecret',
  'webhook_secret',
  'mnemonic',
  'masterKey',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  // Environment names, in case a config object is logged whole.
  'DATABASE_URL',
  'PTS_ADMIN_TOKEN',
  'PTS_MASTER_KEY',
  'PTS_WALLET_MNEMONIC',
  'PTS_DEPLOYER_PRIVATE_KEY',
  'PTS_MINTER_PRIVATE_KEY',
] as const;

/** Request and response headers that carry credentials. */
const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-pts-signature', 'x-api-key'] as const;

/**
 * Redaction paths. Pino redaction is path based (no recursive search), so each secret key is covered at the
 * top level and two levels down (`{ brand: { apiKey } }`, `{ input: { brand: { apiKey } } }`), which is
 * where our log calls put objects. Headers are covered on `req`, `res` and a bare `headers` object.
 */
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
  ...SECRET_HEADERS.flatMap((header) => [
    `headers["${header}"]`,
    `req.headers["${header}"]`,
    `res.headers["${header}"]`,
    `*.headers["${header}"]`,
  ]),
];

export interface CreateLoggerOptions {
  level: Level | 'silent';
  /** Where lines go; stdout when omitted. Tests pass a stream to read the lines back. */
  destination?: DestinationStream;
  /** Added to every line (`service`, `role`, …). */
  base?: Record<string, unknown>;
}

/** The process logger: JSON lines, ISO timestamps, secrets replaced by "[redacted]". */
export function createLogger(options: CreateLoggerOptions): Logger {
  const settings = {
    level: options.level,
    base: options.base ?? null,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    formatters: { level: (label: string) => ({ level: label }) },
  };
  // Without a destination pino writes to stdout synchronously, so lines logged just before exit are kept.
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
