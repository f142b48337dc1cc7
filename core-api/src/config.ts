import { z } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((value) => ['true', '1', 'yes', 'on'].includes(value));
const listFromEnv = z.string().transform((value) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean),
);
const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex characters');

export const ROLES = [
  'event-handler',
  'relayer',
  'register',
  'constraint-updater',
  'reward-processor',
  'worker',
  'admin',
] as const;
export type Role = (typeof ROLES)[number];

/** Every setting, read from the environment once at start. See docs/configuration.md. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PTS_PUBLIC_URL: z.url().optional(),
  PTS_DATA_DIR: z.string().default('.pts-data'),
  DATABASE_URL: z.string().optional(),
  /**
   * Connections per process; unset (or `auto`): the server's `max_connections` (less its superuser reserve)
   * shared by PTS_DB_PROCESSES processes, less the one each holds outside the pool, within 2–20.
   */
  PTS_DB_POOL_SIZE: z.preprocess(
    (value) => (value === 'auto' || value === '' ? undefined : value),
    z.coerce
      .number()
      .int()
      .min(
        2,
        'at least 2: the minter signer lock holds one pooled connection for as long as the process signs, and every query needs another',
      )
      .max(500)
      .optional(),
  ),
  /** How many core-api processes share the PostgreSQL server: the automatic pool size divides its connections by it. */
  PTS_DB_PROCESSES: z.coerce.number().int().min(1).max(1_000).default(10),
  PTS_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  PTS_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** 32-byte hex key that encrypts secrets at rest; generated into the data dir when unset. */
  PTS_MASTER_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters')
    .optional(),
  /** BIP-39 mnemonic the local identity provider derives user wallets from; generated into the data dir when unset. */
  PTS_WALLET_MNEMONIC: z.string().optional(),
  PTS_ROLES: listFromEnv.pipe(z.array(z.enum([...ROLES, 'all']))).default(['all']),
  /** Hostnames of the service itself: always allowed by CORS. */
  PTS_SERVICE_DOMAINS: listFromEnv.default(['localhost', '127.0.0.1']),
  /**
   * Domain of synthetic member identities (`discord_<id>@<domain>`), the bots' variable of the same name: seed
   * clients that name a member by platform and platform id are mapped onto the identity the bots use.
   */
  PTS_SERVICE_DOMAIN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .regex(/^[a-z0-9.-]+\.[a-z]{2,}$|^[a-z0-9-]+\.local$/i, 'must be a domain such as pts.local')
      .transform((value) => value.toLowerCase())
      .default('pts.local'),
  ),
  PTS_DUPLICATE_WINDOW_SECONDS: z.coerce.number().int().min(0).default(60),
  PTS_DEFAULT_COOLDOWN_HOURS: z.coerce.number().int().min(0).default(24),
  PTS_RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  PTS_RATE_LIMIT_BRAND_PER_MINUTE: z.coerce.number().int().min(1).default(120_000),
  /** Agent API calls per minute and IP on public tools (spec 8: 100). */
  PTS_AGENT_IP_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  PTS_AGENT_ANSWER_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(3600).default(300),
  /** Member answers kept per process (modules/ledger/member-answers.ts); 0 keeps none. */
  PTS_MEMBER_ANSWERS_MAX: z.coerce.number().int().min(0).max(10_000_000).default(20_000),
  /** Longest a member answer is kept when no write touches it (seconds); 0 keeps none. */
  PTS_MEMBER_ANSWERS_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(3600),
  PTS_SIGNATURE_TOLERANCE_SECONDS: z.coerce.number().int().min(1).default(300),
  PTS_EVENT_CONFIG_CACHE_SECONDS: z.coerce.number().int().min(0).default(300),
  PTS_RULE_CACHE_SECONDS: z.coerce.number().min(0).default(5),
  PTS_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024),
  PTS_TRUST_PROXY: booleanFromEnv.default(false),
  PTS_DNS_SERVERS: listFromEnv.optional(),
  PTS_SEED_DEMO: booleanFromEnv.default(true),
  /** Mail server for the portal's invite and reset links (`smtp://user:pass@host:port`); logged when unset. */
  PTS_SMTP_URL: z.string().optional(),
  PTS_SMTP_FROM: z.string().default('pts portal <portal@localhost>'),
  /** The built brand portal (docs/portal.md); `portal/dist` of this repository by default. */
  PTS_PORTAL_DIR: z.string().optional(),
  /** Worker threads computing new wallets' addresses off the event loop (local identity provider); 0 = inline. */
  PTS_WALLET_ADDRESS_THREADS: z.coerce.number().int().min(0).max(16).default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** `local` spawns anvil and deploys the contracts; `rpc` uses PTS_RPC_URL and configured addresses. */
  PTS_CHAIN: z.enum(['local', 'rpc']).default('local'),
  PTS_CHAIN_ID: z.coerce.number().int().positive().default(1868),
  PTS_RPC_URL: z.url().optional(),
  /**
   * Where the node pushes new blocks (`wss://…`), for `PTS_CHAIN=rpc`: agent answers and perk catalogues then
   * keep token balances and perks claimed until a block's logs touch them (chain/chain-reads.ts). Unset: every
   * such read asks the node. `local` uses anvil's own WebSocket.
   */
  PTS_RPC_WS_URL: z.url().optional(),
  PTS_ANVIL_PORT: z.coerce.number().int().min(0).max(65535).default(8545),
  PTS_ANVIL_BLOCK_TIME: z.coerce.number().min(0).optional(),
  /** Seconds between the local chain's state dumps: what survives if anvil itself dies uncleanly. */
  PTS_ANVIL_STATE_INTERVAL: z.coerce.number().int().min(1).default(5),
  PTS_EXPLORER_URL: z.url().default('https://soneium.blockscout.com'),
  PTS_DEPLOYER_PRIVATE_KEY: privateKey.optional(),
  PTS_MINTER_PRIVATE_KEY: privateKey.optional(),
  PTS_REWARD_TOKEN_ADDRESS: address.optional(),

  PTS_MINT_BATCH_MAX: z.coerce.number().int().min(1).max(1000).default(200),
  PTS_MINT_BATCH_WAIT_MS: z.coerce.number().int().min(0).default(5),
  PTS_MINT_INLINE: booleanFromEnv.default(true),
  PTS_MINT_WAIT_MS: z.coerce.number().int().min(0).default(10_000),
  PTS_MINT_STUCK_SECONDS: z.coerce.number().int().min(1).default(30),
  PTS_MINT_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(5),
  PTS_RECEIPT_POLL_MS: z.coerce.number().int().min(10).default(1000),
  /**
   * Blocks a mint's block must have on top of it before its rewards are `confirmed` (docs/chain.md,
   * "Finality"). Unset: 0 with PTS_CHAIN=local (anvil does not reorganise), 10 with `rpc`.
   */
  PTS_MINT_FINALITY_DEPTH: z.coerce.number().int().min(0).max(10_000).optional(),
  /**
   * Block tag a mint's block must also be at or below: `latest` (depth only), `safe` or `finalized` where the
   * chain has them. Unset: `latest` with PTS_CHAIN=local, `safe` with `rpc` (an OP-stack L2's L1-backed head).
   */
  PTS_MINT_FINALITY_TAG: z.enum(['latest', 'safe', 'finalized']).optional(),
  /** Seconds with transactions waiting and no new block before health calls the chain wedged. */
  PTS_CHAIN_WEDGED_SECONDS: z.coerce.number().int().min(1).default(60),
  /** How often a replica that does not sign asks for the minter signer lock (the leader's successor waits ≤ this). */
  PTS_MINTER_ELECTION_SECONDS: z.coerce.number().min(0.1).default(15),
  PTS_REWARD_PROCESSOR_CRON: z.string().default('* * * * *'),
  /** Seconds between chain–ledger reconciler passes (docs/chain.md, "Reconciler"); 0 runs it at start only. */
  PTS_RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(60),
  /** Seconds between compactions of the brand rollups on worker processes (docs/ledger.md, "Brand rollups"). */
  PTS_ROLLUP_COMPACT_SECONDS: z.coerce.number().int().min(1).default(30),
  /** When worker processes run the VIP tiers' period turn (docs/tiers.md); each brand's run is claimed once. */
  PTS_TIER_TURN_CRON: z.string().default('5 0 * * *'),

  /** Token purchases (docs/payments.md): Stripe when a secret key is set, the embedded local checkout otherwise. */
  PTS_STRIPE_SECRET_KEY: z.string().min(1).optional(),
  /** Signing secret (`whsec_…`) of the Stripe webhook endpoint `POST /pts-api/payment-webhook`. */
  PTS_STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** Stripe API host/port/protocol overrides (a local fake in tests; a proxy). Default api.stripe.com:443 https. */
  PTS_STRIPE_HOST: z.string().min(1).optional(),
  PTS_STRIPE_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  PTS_STRIPE_PROTOCOL: z.enum(['http', 'https']).optional(),

  /** Plain-http and loopback webhook targets (local mode); unset means true only with PTS_CHAIN=local. */
  PTS_WEBHOOKS_ALLOW_INSECURE: booleanFromEnv.optional(),
  PTS_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  PTS_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  PTS_WEBHOOK_POLL_MS: z.coerce.number().int().min(10).default(1000),

  /** Identity provider (docs/identity.md): `local` issues its own ES256 tokens; `privy` verifies Privy's. */
  PTS_IDENTITY_PROVIDER: z.enum(['local', 'privy']).default('local'),
  PRIVY_APP_ID: z.string().min(1).optional(),
  PRIVY_APP_SECRET: z.string().min(1).optional(),
  /** Privy API base URL (a local fake in tests). Default https://api.privy.io. */
  PRIVY_API_URL: z.url().optional(),
  /** PEM (SPKI) ES256 verification key from the Privy dashboard; the JWKS is fetched when unset. */
  PRIVY_VERIFICATION_KEY: z.string().min(1).optional(),
  /** JWKS URL of the Privy app; default `<PRIVY_API_URL>/v1/apps/<app id>/jwks.json` (as @privy-io/node). */
  PRIVY_JWKS_URL: z.url().optional(),

  /**
   * Real-account checks for pregeneration (docs/identity.md): a provider with credentials is asked whether
   * the account exists; the others are checked for format only, and the response says so.
   */
  PTS_VERIFY_DISCORD_BOT_TOKEN: z.string().min(1).optional(),
  PTS_VERIFY_DISCORD_API_URL: z.url().default('https://discord.com'),
  PTS_VERIFY_TELEGRAM_BOT_TOKEN: z.string().min(1).optional(),
  PTS_VERIFY_TELEGRAM_API_URL: z.url().default('https://api.telegram.org'),
  PTS_VERIFY_X_BEARER_TOKEN: z.string().min(1).optional(),
  PTS_VERIFY_X_API_URL: z.url().default('https://api.x.com'),
  PTS_VERIFY_GITHUB_TOKEN: z.string().min(1).optional(),
  PTS_VERIFY_GITHUB_API_URL: z.url().default('https://api.github.com'),
  PTS_VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),

  /** Relayer (docs/relayer.md). Its own key, never the minter's; anvil dev account 2 with PTS_CHAIN=local. */
  PTS_RELAYER_PRIVATE_KEY: privateKey.optional(),
  /** Perk contracts when PTS_REWARD_TOKEN_ADDRESS is configured (nothing is deployed then). */
  PTS_PERK_NFT_ADDRESS: address.optional(),
  PTS_POINTS_SALE_ADDRESS: address.optional(),
  PTS_BUSINESS_ESCROW_ADDRESS: address.optional(),
  PTS_RELAYER_MAX_GAS_LIMIT: z.coerce.number().int().min(21_000).max(1_000_000).default(1_000_000),
  PTS_RELAYER_MAX_GAS_PRICE_GWEI: z.coerce.number().positive().max(100).default(100),
  PTS_RELAYER_USER_PER_HOUR: z.coerce.number().int().min(1).default(35),
  PTS_RELAYER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  /** How long `POST /relayer/relay` waits for the receipt before answering `status: "pending"`. */
  PTS_RELAYER_WAIT_MS: z.coerce.number().int().min(0).default(15_000),
  /** A submitted relay transaction unmined after this long is re-signed with a gas bump. */
  PTS_RELAYER_STUCK_SECONDS: z.coerce.number().int().min(1).default(30),

  /** Perk constraints (docs/constraints.md). */
  PTS_CONSTRAINT_DEFAULT_TTL_SECONDS: z.coerce.number().int().min(0).default(60),
  PTS_CHAT_ROLE_REFRESH_SECONDS: z.coerce.number().int().min(1).default(300),
  PTS_CONSTRAINT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Lets constraint URLs reach loopback/plain http (tests, local development). Unset: only with PTS_CHAIN=local. */
  PTS_CONSTRAINTS_ALLOW_INSECURE: booleanFromEnv.optional(),

  /**
   * The agent API's `converse` (docs/agent-api/converse-mcp.md): an OpenAI-compatible chat-completions endpoint
   * plans and writes the answer when all three are set; the offline planner answers otherwise.
   * Base URL up to the version, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended).
   */
  PTS_LLM_BASE_URL: z.url().optional(),
  /** Bearer key of that endpoint; sent only to it, never logged. */
  PTS_LLM_API_KEY: z.string().min(1).optional(),
  PTS_LLM_MODEL: z.string().min(1).optional(),
  PTS_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
});

export type Config = z.infer<typeof configSchema>;

/** Parses the environment; throws one readable error listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/**
 * Webhook local mode: http:// and loopback targets allowed. Explicit PTS_WEBHOOKS_ALLOW_INSECURE wins;
 * otherwise only the embedded default chain (PTS_CHAIN=local) is local.
 */
export function webhooksAllowInsecure(config: Pick<Config, 'PTS_WEBHOOKS_ALLOW_INSECURE' | 'PTS_CHAIN'>): boolean {
  return config.PTS_WEBHOOKS_ALLOW_INSECURE ?? config.PTS_CHAIN === 'local';
}

/** When a mint counts as final (docs/chain.md, "Finality"): depth below the head and the block tag. */
export interface MintFinality {
  depth: number;
  tag: 'latest' | 'safe' | 'finalized';
}

/** The finality rule: explicit settings win; otherwise a local anvil is final at once, an RPC chain at `safe` − 10. */
export function mintFinality(
  config: Pick<Config, 'PTS_CHAIN' | 'PTS_MINT_FINALITY_DEPTH' | 'PTS_MINT_FINALITY_TAG'>,
): MintFinality {
  const local = config.PTS_CHAIN === 'local';
  return {
    depth: config.PTS_MINT_FINALITY_DEPTH ?? (local ? 0 : 10),
    tag: config.PTS_MINT_FINALITY_TAG ?? (local ? 'latest' : 'safe'),
  };
}

/** Whether a role's routes are served by this process. */
export function hasRole(config: Pick<Config, 'PTS_ROLES'>, role: Role): boolean {
  return config.PTS_ROLES.includes('all') || config.PTS_ROLES.includes(role);
}
