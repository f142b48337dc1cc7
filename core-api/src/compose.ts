import { buildSdk } from '@pts/sdk/build';
import type { Clock } from '@pts/shared';
import type { Request } from 'express';
import type { Logger } from 'pino';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createActionsReads } from './agent/actions/actions-reads.ts';
import { type AgentAuthenticator, createAgentAuthenticator, recordAgentSignature } from './agent/agent-auth.ts';
import type { AgentServiceDeps } from './agent/agent-services.ts';
import type { AgentTool, AgentToolPorts } from './agent/agent-tool.ts';
import type { AgentToolDeps } from './agent/agent-tool-deps.ts';
import { agentTools } from './agent/agent-tools.ts';
import { createAnalyticsReads } from './agent/analytics/analytics-reads.ts';
import { createCommerceReads } from './agent/commerce/commerce-reads.ts';
import { chatModelFromConfig } from './agent/converse/chat-model.ts';
import { createConverseReads } from './agent/converse/converse.repository.ts';
import { createDiscoveryReads } from './agent/discovery/discovery-reads.ts';
import { createGrowthService } from './agent/growth/growth.service.ts';
import { createIntelligenceReads } from './agent/intelligence/intelligence-reads.ts';
import {
  type ActiveAgentKey,
  type AgentKeyAdminService,
  createAgentKeyAdminService,
  noteAgentKeyUsed,
  portalAgentKeyService,
} from './agent/keys/agent-keys.service.ts';
import { createNetworkReads } from './agent/network/network-stats.repository.ts';
import { createAgentOnboardingService } from './agent/onboarding/onboarding.service.ts';
import { createAgentProgramService } from './agent/program/program.service.ts';
import { createAgentRewardsService } from './agent/rewards/agent-rewards.service.ts';
import { type AnswerCache, createAnswerCache } from './caching/answer-cache.ts';
import { createKeyedCache, type KeyedCache } from './caching/keyed-cache.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, ANVIL_RELAYER_PRIVATE_KEY } from './chain/anvil.ts';
import { type ChainReads, createChainReads, followReceipts } from './chain/chain-reads.ts';
import { relayContractsOf } from './chain/contract-addresses.ts';
import { type ChainPublicClient, createChainClients } from './chain/deploy.ts';
import { acquireSignerLock, createMinter } from './chain/minter.ts';
import type { Minter } from './chain/minter.types.ts';
import { createElectedMinter, type ElectedMinter } from './chain/minter-election.ts';
import { type ChainReconciler, createChainReconciler } from './chain/reconciler.ts';
import type { RelayerSender } from './chain/relayer.types.ts';
import { createRelayerSender, createUnavailableRelayer } from './chain/relayer-sender.ts';
import { type Config, hasRole, mintFinality } from './config.ts';
import type { Database, DatabaseHandle } from './db/database.ts';
import type { AppDeps, ChainInfo, TxtResolver } from './deps.ts';
import type { SignatureClaim } from './http/brand-signature.ts';
import { type BrandSignatureVerifier, createBrandSignatureVerifier } from './http/brand-signature.ts';
import { createCors } from './http/cors.ts';
import {
  createMemoryRateLimitStore,
  createPostgresRateLimitStore,
  createRateLimit,
  type RateLimit,
  type RateLimitStore,
} from './http/rate-limit.ts';
import { createSignedReplies, type SignedReplies } from './http/signed-replies.ts';
import { CONFIRM_ATTEMPTS_PER_10_MINUTES } from './modules/accounts/accounts.routes.ts';
import { type AccountService, createAccountService } from './modules/accounts/accounts.service.ts';
import { type AchievementService, createAchievementService } from './modules/achievements/achievements.service.ts';
import { createBrandAnalyticsService } from './modules/analytics/brand-analytics.ts';
import { compactBrandRollups } from './modules/analytics/brand-rollups.ts';
import { type BalanceService, createBalanceService } from './modules/balances/balances.service.ts';
import { type BrandAdminService, createBrandAdminService } from './modules/brands/brand-admin.service.ts';
import { createPostgresChangeTransport } from './modules/brands/brand-changes.postgres.ts';
import { type ChangeNotifier, createChangeNotifier } from './modules/brands/brand-changes.ts';
import { securityKeysValidAt, verifySecurityKey } from './modules/brands/brand-keys.service.ts';
import { listAllBrandDomains } from './modules/brands/brands.repository.ts';
import { SETUP_FAILURE_WINDOW_SECONDS, SETUP_FAILURES_ALLOWED } from './modules/community/community.routes.ts';
import { type CommunityService, createCommunityService } from './modules/community/community.service.ts';
import { createSeedCompatService, type SeedCompatService } from './modules/compat/compat.service.ts';
import { createDnsService, createSystemTxtResolver, type DnsService } from './modules/dns/dns.service.ts';
import { createDropService, type DropService } from './modules/drops/drops.service.ts';
import { type BrandCache, createBrandCache } from './modules/events/brand-cache.ts';
import { createConfiguredEventBatcher } from './modules/events/event-batcher.ts';
import { createEventConfigCache, type EventConfigCache } from './modules/events/events.routes.ts';
import { createEventService, type EventService } from './modules/events/events.service.ts';
import { createUserTokenService, type UserTokenService } from './modules/identity/identity.service.ts';
import { createLocalIdentityProvider, type IdentityProvider } from './modules/identity/identity-provider.ts';
import { createLocalTokenIssuer, loadOrCreateTokenKey } from './modules/identity/local-token-issuer.ts';
import { createLeaderboardService, type LeaderboardService } from './modules/leaderboards/leaderboards.service.ts';
import { recordReversalActivity, recordRewardActivity } from './modules/leaderboards/reward-activity.ts';
import {
  createMemberAnswers,
  createMemberChangeFeed,
  type MemberAnswers,
  type MemberChangeFeed,
} from './modules/ledger/member-answers.ts';
import { type BrandMemberService, createBrandMemberService } from './modules/members/brand-members.service.ts';
import { createPaymentProvider } from './modules/payments/payment-provider.factory.ts';
import { createPaymentService, type PaymentService, paymentDepsFrom } from './modules/payments/payments.service.ts';
import {
  constraintSettingsFrom,
  constraintUrlPolicy,
  createConstraintChecker,
} from './modules/perks/constraints/constraint-checker.ts';
import { type ConstraintService, createConstraintService } from './modules/perks/constraints/constraints.service.ts';
import { createPerkChain, type PerkChain } from './modules/perks/perk-chain.ts';
import { createPerkService, type PerkService } from './modules/perks/perks.service.ts';
import { createRedemptionService, custodialKeyOf, type RedemptionService } from './modules/perks/redemption.service.ts';
import {
  RESET_REQUESTS_PER_ACCOUNT,
  RESET_REQUESTS_PER_IP,
  RESET_WINDOW_SECONDS,
  SIGN_IN_WINDOW_SECONDS,
} from './modules/portal/portal.routes.ts';
import { createPortalAuthService } from './modules/portal/portal-auth.service.ts';
import { createPortalMailer, type PortalMailer } from './modules/portal/portal-mailer.ts';
import { createPortalOperatorService } from './modules/portal/portal-operator.service.ts';
import type { PortalServices } from './modules/portal/portal-services.ts';
import { createPortalTeamService } from './modules/portal/portal-team.service.ts';
import {
  createPregenerationService,
  type PregenerationService,
} from './modules/pregeneration/pregeneration.service.ts';
import { createReferralService, type ReferralService } from './modules/referrals/referrals.service.ts';
import {
  createRelayChainReader,
  createRelayRecords,
  createRelayService,
  type RelayRecords,
  type RelayService,
  relaySettingsOf,
} from './modules/relayer/relay.service.ts';
import { createReversalService, type ReversalService } from './modules/reversals/reversals.service.ts';
import { createSdkScriptSource, type SdkScript } from './modules/sdk/sdk-script.ts';
import { createShopifyService, type ShopifyService } from './modules/shopify/shopify.service.ts';
import { createSimulatorService, type SimulatorService } from './modules/simulator/simulator.service.ts';
import { createStreakService, type StreakService } from './modules/streaks/streaks.service.ts';
import { createTierService, type TierService } from './modules/tiers/tiers.service.ts';
import { createLocalWalletProvider } from './modules/wallets/wallet-provider.ts';
import { notifyRewardsDistributed } from './modules/webhooks/reward-distributed.ts';
import { notifyRewardsReversed } from './modules/webhooks/reward-reversed.ts';
import { createWebhookService, type WebhookService } from './modules/webhooks/webhooks.service.ts';
import type { Metrics } from './observability/metrics.ts';
import { createRewardStatusSampler, type RewardStatusSampler } from './observability/reward-status.ts';
import { createSecretBox } from './security/secret-box.ts';

/**
 * The services a process shares between its routers and jobs, each built once (CONVENTIONS habit 5): two
 * copies of a cache or a verifier means one of them goes stale — this happened when check-in had a brand
 * cache of its own that no rule change reached.
 */
export interface AppServices {
  /** Brand changes (admin writes) → every cache below. */
  changes: ChangeNotifier;
  /** Brands, their rules and decrypted security keys, for every path: events, check-in, milestones, signatures. */
  brands: BrandCache;
  /** `GET /pts-api/event-config` answers (5 minutes unless a rule changes). */
  eventConfigCache: EventConfigCache;
  /** CORS over the brands' authorized domains. */
  cors: ReturnType<typeof createCors>;
  /**
   * The event pipeline, over ONE batcher (and so one wallet reserve): its `award` is the one entry through
   * which every reward is made. Routers, agent tools and the modules that reward get this, never its parts.
   */
  eventService: EventService;
  /** VIP tiers (docs/tiers.md): the table, a member's standing, the period's turn. */
  tiers: TierService;
  /** Referrals (docs/referrals.md): the program, members' codes, the stats, the reversal of a referral. */
  referrals: ReferralService;
  /** The what-if simulator (docs/simulator.md): past events replayed through the judge under proposed rules. */
  simulator: SimulatorService;
  /** Brand request signatures, with one key lookup: the brand cache. */
  verifyBrandSignature: BrandSignatureVerifier;
  /** Identical signed requests: the first one's answer, replayed (docs/api/events.md, "Retries"). */
  signedReplies: SignedReplies;
  /**
   * Every request limit of the process, over one store: PostgreSQL (shared by every replica on the
   * database) when DATABASE_URL is set, memory on PGlite (docs/operations.md, "Several processes").
   */
  limits: AppLimits;
  /**
   * Perk redemptions for every surface (/services/perks/redeem, the agent API, MCP): one per process, since
   * its wallet queues keep two claims of one wallet from signing the same permit nonce.
   */
  redemption: RedemptionService;
  /** The browser SDK served at `/sdk.js`, built once per process (docs/sdk.md). */
  sdk: { load(): Promise<SdkScript> };
  /** Aggregate answers of the agent API, shared by REST, MCP and converse; cleared by any brand change. */
  agentAnswers: AnswerCache;
  /** The brand portal's invite and reset links: e-mailed with PTS_SMTP_URL, logged otherwise. */
  portalMailer: PortalMailer;
  /** Member answers of the agent tools, dropped by the database's notices of each member's writes. */
  memberAnswers: MemberAnswers;
  /** The agent API's tools, key cache and authenticator (REST `/api/v1`, MCP, converse). */
  agent: AgentSurface;
  /** One compaction pass of the brand rollups (modules/analytics/brand-rollups.ts), for the worker's job. */
  compactRollups(): ReturnType<typeof compactBrandRollups>;
  /** The gasless relay (`/relayer/relay`, `/relayer/transactions/:id`; spec 4.9). */
  relay: RelayService;
  /** The relayer's records: gas paid per brand, contract deployments (any instance, relayer key or not). */
  relayRecords: RelayRecords;
  /** Brands' webhook endpoints (admin API, portal) and the delivery queue the webhook worker drains. */
  webhooks: WebhookService;
  /** Token purchases over the configured payment provider (spec 4.6, 4.7; the portal's Billing page). */
  payments: PaymentService;
  /** Connected Shopify shops and their webhook deliveries: paid orders earn through `eventService` (issue 35 §3). */
  shopify: ShopifyService;
  /** Wallet pregeneration for social-login identities and emails (spec 4.8). */
  pregeneration: PregenerationService;
  /** The local identity provider's access tokens for the admin API. */
  userTokens: UserTokenService;
  /** Domain verification by `_pts.<domain>` TXT record (`POST /pts-api/verify-dns`, the portal). */
  dns: DnsService;
  /** `reward_mints` rows by status, `/metrics`' fallback when the minter does not answer. */
  rewardStatuses: RewardStatusSampler;
  /** Account linking (`/services/link`). */
  accounts: AccountService;
  /** Members' achievements and the brands' definitions (`/services/achievements`, `/admin`). */
  achievements: AchievementService;
  /** What a member can spend (`/services/balance`, the seed-compatible balance answers). */
  balances: BalanceService;
  /** Chat groups and hashtag campaigns (`/services/chat-groups`, `/services/campaigns`, `/admin`, the portal). */
  community: CommunityService;
  /** The seed system's clients' mapping onto pts (docs/compatibility.md). */
  seedCompat: SeedCompatService;
  /** Drops: the brand-signed create and claim, the admin API's and the portal's list, change and end. */
  drops: DropService;
  /** Reversals of events' rewards (issue 35 §2): the ledger entry and its chain side. */
  reversals: ReversalService;
  /** Leaderboards and member activity (`/services/leaderboard`, `/services/activity`). */
  leaderboards: LeaderboardService;
  /** A brand's members: the admin API's manual award, the portal's Members page. */
  members: BrandMemberService;
  /** Perk eligibility constraints, their cache invalidation and reported chat roles. */
  constraints: ConstraintService;
  /** The perk catalogue: admin and portal changes and the public catalogue. */
  perks: PerkService;
  /** Streaks, daily check-in and streak settings (`/services/streak`, `/services/checkin`). */
  streaks: StreakService;
  /** Brand and rule administration (`/admin/brands`, the portal's brand pages). */
  brandAdmin: BrandAdminService;
  /** The brand portal's own services: its sessions, team, operators, dashboard and agent keys. */
  portal: PortalServices;
}

/** What the agent API's routers (`/api/v1`, `/mcp`) and the key administration share, built once. */
export interface AgentSurface {
  /** The named services each tool factory receives (tests build one area's tools with them). */
  toolDeps: AgentToolDeps;
  /** Every tool (agent/agent-tools.ts), as REST, MCP and converse serve them. */
  tools: AgentTool[];
  /**
   * Live agent keys for signature checks: a revocation through this process (or any brand change, which an
   * onboarding that grants a brand to its key makes) forgets at once; other processes' within the TTL.
   */
  keys: KeyedCache<ActiveAgentKey>;
  /** `/admin/agent-keys`: create, list, revoke (a revocation forgets the key in `keys` at once). */
  keyAdmin: AgentKeyAdminService;
  authenticate: AgentAuthenticator;
  /** Marks a signed change's signature used, so a replay gets the first answer. */
  recordSignature(req: Request, claim: SignatureClaim): Promise<void>;
  /** Writes a key's `last_used_at`. */
  noteKeyUsed(keyId: string): Promise<void>;
  /** Whether `key` is a current security key of the brand (MCP's brand_* tools). */
  verifyBrandKey(brandId: string, key: string): Promise<boolean>;
}

export interface AppLimits {
  /** Unsigned traffic per IP on the event handler host (/pts-api, /services). */
  ip: RateLimit;
  /** Signed traffic per brand on the event handler host. */
  brand: RateLimit;
  /** `POST /pts-api/verify-dns` per IP (each costs an outbound DNS query). */
  verifyDns: RateLimit;
  /** `POST /pts-api/pregenerate-user` per brand (spec 8). */
  pregeneration: { perMinute: RateLimit; perDay: RateLimit };
  /** `POST /relay` per IP (the per-user hourly quota is a database row already). */
  relayIp: RateLimit;
  /** The relayer's perk charge endpoints per IP. */
  perkChargeIp: RateLimit;
  /** `POST /services/link/confirm` per brand and confirming identity. */
  linkConfirm: RateLimit;
  /** Failed chat group `/setup` attempts per group and per IP. */
  chatSetupFailures: RateLimiterAbstract;
  /** Public agent API calls (`/api/v1`) per IP: 100 a minute (spec 8). */
  agentIp: RateLimit;
  /**
   * Signed agent API calls per key at the key's own `rate_per_minute` (default 20, spec 8): one limit per
   * distinct rate, built on first use and kept, so every key of that rate counts in its own row of the store.
   */
  agentKey(ratePerMinute: number): RateLimit;
  /** Failed brand portal sign-ins per account and per IP (docs/portal.md, "Sign-in"). */
  portalSignInFailures: { account: RateLimiterAbstract; ip: RateLimiterAbstract };
  /** Password reset requests per e-mail and per IP (docs/portal.md, "Security"). */
  portalResetRequests: { account: RateLimiterAbstract; ip: RateLimiterAbstract };
}

/** Builds every limit once, over `store`; each has its own key prefix so none shares another's counters. */
export function composeLimits(deps: Pick<AppDeps, 'config' | 'clock'>, store: RateLimitStore): AppLimits {
  const { config, clock } = deps;
  const perMinute = (name: string, keyPrefix: string, points: number) =>
    createRateLimit({ name, keyPrefix, points, durationSeconds: 60, store, clock });
  const agentKeyLimits = new Map<number, RateLimit>();
  return {
    agentIp: perMinute('IP', 'agent-ip', config.PTS_AGENT_IP_PER_MINUTE),
    agentKey(ratePerMinute) {
      let limit = agentKeyLimits.get(ratePerMinute);
      if (!limit) {
        limit = perMinute('agent key', `agent-key-${ratePerMinute}`, ratePerMinute);
        agentKeyLimits.set(ratePerMinute, limit);
      }
      return limit;
    },
    ip: perMinute('ip', 'ip', config.PTS_RATE_LIMIT_IP_PER_MINUTE),
    brand: perMinute('brand', 'brand', config.PTS_RATE_LIMIT_BRAND_PER_MINUTE),
    verifyDns: perMinute('verify-dns', 'verify-dns', 30),
    pregeneration: {
      perMinute: perMinute('pregeneration brand per minute', 'pregeneration-minute', 100),
      perDay: createRateLimit({
        name: 'pregeneration brand per day',
        keyPrefix: 'pregeneration-day',
        points: 10_000,
        durationSeconds: 86_400,
        store,
        clock,
      }),
    },
    relayIp: perMinute('ip', 'relay-ip', config.PTS_RELAYER_IP_PER_MINUTE),
    perkChargeIp: perMinute('ip', 'perk-charge-ip', config.PTS_RELAYER_IP_PER_MINUTE),
    linkConfirm: createRateLimit({
      name: 'link-confirm identity',
      keyPrefix: 'link-confirm',
      points: CONFIRM_ATTEMPTS_PER_10_MINUTES,
      durationSeconds: 600,
      store,
      clock,
    }),
    portalSignInFailures: {
      account: store.limiter({
        keyPrefix: 'portal-sign-in-account',
        points: 1_000_000,
        durationSeconds: SIGN_IN_WINDOW_SECONDS,
      }),
      ip: store.limiter({ keyPrefix: 'portal-sign-in-ip', points: 1_000_000, durationSeconds: SIGN_IN_WINDOW_SECONDS }),
    },
    portalResetRequests: {
      account: store.limiter({
        keyPrefix: 'portal-reset-account',
        points: RESET_REQUESTS_PER_ACCOUNT,
        durationSeconds: RESET_WINDOW_SECONDS,
      }),
      ip: store.limiter({
        keyPrefix: 'portal-reset-ip',
        points: RESET_REQUESTS_PER_IP,
        durationSeconds: RESET_WINDOW_SECONDS,
      }),
    },
    chatSetupFailures: store.limiter({
      keyPrefix: 'chat-setup-failures',
      points: SETUP_FAILURES_ALLOWED,
      durationSeconds: SETUP_FAILURE_WINDOW_SECONDS,
    }),
  };
}

/** What the start steps hand the composition root (startup/platform.ts): opened, started, loaded. */
export interface StartedPorts {
  config: Config;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  database: DatabaseHandle;
  chain: {
    minter: Minter;
    relayer: RelayerSender;
    publicClient: ChainPublicClient;
    info: ChainInfo;
    perkChain: PerkChain;
    chainReads: ChainReads;
  };
  /** Privy's token verifier and wallets when PTS_IDENTITY_PROVIDER=privy. */
  privy: { identity: IdentityProvider; wallets: AppDeps['wallets'] } | undefined;
  secrets: { adminToken: string; masterKey: string; walletMnemonic: string };
  /** A DNS resolver of the caller's (tests); the system's otherwise. */
  resolveTxt: TxtResolver | undefined;
  /** Registers what must be stopped with the process (the local wallets' address workers). */
  onStop(stop: () => Promise<void>): void;
}

/** The process's ports (deps.ts), from what the start steps opened: what composeServices builds on. */
export function composeDeps(started: StartedPorts): AppDeps {
  const { config, clock, logger, metrics, database, chain, privy, secrets } = started;
  const localWallets = () => {
    const wallets = createLocalWalletProvider(secrets.walletMnemonic, {
      addressThreads: config.PTS_WALLET_ADDRESS_THREADS,
      onWorkerError: (error) => logger.warn({ err: error }, 'wallet address worker failed; deriving inline'),
    });
    started.onStop(() => wallets.close());
    return wallets;
  };
  const tokenIssuer = createLocalTokenIssuer({
    privateJwk: loadOrCreateTokenKey(config.PTS_DATA_DIR),
    issuer: (config.PTS_PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, ''),
    audience: 'pts-local',
    clock,
  });
  return {
    config,
    db: database.db,
    dbKind: database.kind,
    pingDatabase: database.ping,
    clock,
    logger,
    metrics,
    secrets: createSecretBox(secrets.masterKey),
    wallets: privy?.wallets ?? localWallets(),
    minter: chain.minter,
    relayer: chain.relayer,
    publicClient: chain.publicClient,
    chain: chain.info,
    resolveTxt: started.resolveTxt ?? createSystemTxtResolver(config.PTS_DNS_SERVERS),
    adminToken: secrets.adminToken,
    tokenIssuer,
    identity: privy?.identity ?? createLocalIdentityProvider(tokenIssuer),
    payments: createPaymentProvider(config, { db: database.db, clock }),
    perkChain: chain.perkChain,
    chainReads: chain.chainReads,
    constraints: createConstraintChecker({
      db: database.db,
      clock,
      logger,
      balanceOf: chain.perkChain.balanceOf,
      settings: constraintSettingsFrom(config),
    }),
  };
}

/**
 * Builds the shared services from the process's ports and wires every cache to the change notifier. The
 * rate-limit store is PostgreSQL's when several processes share the database (startup/platform.ts).
 */
export function composeServices(
  deps: AppDeps,
  changes: ChangeNotifier,
  rateLimits: RateLimitStore = createMemoryRateLimitStore(),
  // Without a listener (a test composing by hand) nothing is ever kept: every member answer is read afresh.
  memberChanges: MemberChangeFeed = createMemberChangeFeed(),
): AppServices {
  const { config, db, clock, logger, metrics } = deps;
  const brands = createBrandCache({
    db,
    secrets: deps.secrets,
    clock,
    ttlMs: config.PTS_RULE_CACHE_SECONDS * 1000,
  });
  const eventConfigCache = createEventConfigCache(config.PTS_EVENT_CONFIG_CACHE_SECONDS, clock);
  const cors = createCors({
    serviceDomains: config.PTS_SERVICE_DOMAINS,
    loadBrandDomains: () => listAllBrandDomains(db),
    now: () => clock.now().getTime(),
  });
  const agentAnswers = createAnswerCache({ clock, logger });
  const memberAnswers = createMemberAnswers({
    clock,
    feed: memberChanges,
    maxEntries: config.PTS_MEMBER_ANSWERS_MAX,
    maxAgeMs: config.PTS_MEMBER_ANSWERS_MAX_AGE_SECONDS * 1000,
    chainHead: () => deps.chainReads?.head,
  });
  // `all` (another process's notices may have been missed) carries no brand id: every entry goes.
  changes.subscribe((change) => {
    brands.invalidate(change.brandId);
    eventConfigCache.invalidate(change.brandId);
    cors.refresh();
    agentAnswers.clear();
    memberAnswers.clear();
  });
  const eventService = createEventService({
    db,
    clock,
    logger,
    metrics,
    minter: deps.minter,
    brands,
    batcher: createConfiguredEventBatcher(
      { db, clock, logger, metrics, wallets: deps.wallets, minter: deps.minter },
      config,
    ),
    settings: { mintWaitMs: config.PTS_MINT_WAIT_MS },
  });
  const verifyBrandSignature = createBrandSignatureVerifier({
    db,
    clock,
    toleranceSeconds: config.PTS_SIGNATURE_TOLERANCE_SECONDS,
    securityKeysFor: async (brandId) => {
      const cached = await brands.get(brandId.toLowerCase());
      return cached && securityKeysValidAt(cached.securityKeys, clock.now());
    },
  });
  const shared = {
    changes,
    brands,
    eventConfigCache,
    cors,
    eventService,
    verifyBrandSignature,
    // A retry waits at most as long as the first request may wait for its mint, and a little more.
    signedReplies: createSignedReplies({ db, logger, waitMs: config.PTS_MINT_WAIT_MS + 5_000 }),
    redemption: createRedemptionService({
      db,
      clock,
      logger,
      relayer: deps.relayer,
      publicClient: deps.publicClient,
      contracts: relayContractsOf(deps),
      constraints: deps.constraints,
      custodialKey: custodialKeyOf(deps.wallets),
      identityProvider: config.PTS_IDENTITY_PROVIDER,
      waitMs: config.PTS_RELAYER_WAIT_MS,
    }),
    sdk: createSdkScriptSource(buildSdk),
    limits: composeLimits(deps, rateLimits),
    agentAnswers,
    memberAnswers,
    portalMailer: createPortalMailer({ smtpUrl: config.PTS_SMTP_URL, from: config.PTS_SMTP_FROM, logger }),
    compactRollups: () => compactBrandRollups(db),
    ...composeRelayServices(deps, changes),
    ...composeModuleServices(deps, { brands, eventService, changes }),
  };
  const agent = composeAgent(deps, shared);
  return { ...shared, agent, portal: composePortalServices(deps, { ...shared, agent }) };
}

/**
 * The named services the agent tools use: no tool reaches the process's whole container, nor the database
 * handle — the agent's read and write services below hold it (issue 23 §2).
 */
export function composeAgentToolDeps(
  deps: AppDeps,
  services: Pick<
    AppServices,
    'eventService' | 'changes' | 'redemption' | 'agentAnswers' | 'memberAnswers' | 'balances' | 'tiers' | 'simulator'
  >,
): AgentToolDeps {
  const { config } = deps;
  const ports: AgentToolPorts = {
    clock: deps.clock,
    logger: deps.logger,
    secrets: deps.secrets,
    chain: deps.chain,
    contracts: relayContractsOf(deps),
    relayerAddress: deps.relayer.address,
    publicClient: deps.publicClient,
    chainReads: deps.chainReads,
    perkChain: deps.perkChain,
    // The process's one wallet read (composeModuleServices), shared with /services/balance.
    walletBalances: services.balances,
    events: services.eventService,
    changes: services.changes,
    redemption: services.redemption,
    agentAnswers: services.agentAnswers,
    memberAnswers: services.memberAnswers,
    chatModel: chatModelFromConfig(config),
    settings: {
      chainMode: config.PTS_CHAIN,
      answerMaxAgeSeconds: config.PTS_AGENT_ANSWER_MAX_AGE_SECONDS,
      defaultCooldownHours: config.PTS_DEFAULT_COOLDOWN_HOURS,
    },
  };
  const withHandle: AgentServiceDeps = { ...ports, db: deps.db };
  return {
    ...ports,
    actionsReads: createActionsReads(withHandle),
    analyticsReads: createAnalyticsReads(deps.db),
    commerceReads: createCommerceReads(deps.db),
    discoveryReads: createDiscoveryReads(deps.db),
    converseReads: createConverseReads(deps.db),
    growth: createGrowthService(deps.db),
    intelligenceReads: createIntelligenceReads(deps.db),
    networkReads: createNetworkReads(deps.db),
    onboarding: createAgentOnboardingService(withHandle),
    program: createAgentProgramService(withHandle),
    rewards: createAgentRewardsService(withHandle),
    tiers: services.tiers,
    simulator: services.simulator,
  };
}

/** The agent API's tools, key cache and signature checks, over the shared services. */
function composeAgent(deps: AppDeps, services: Omit<AppServices, 'agent' | 'portal'>): AgentSurface {
  const { config, db, clock, secrets } = deps;
  const keys = createKeyedCache<ActiveAgentKey>({ clock, ttlMs: config.PTS_RULE_CACHE_SECONDS * 1000 });
  services.changes.subscribe(() => keys.forget());
  const toolDeps = composeAgentToolDeps(deps, services);
  return {
    toolDeps,
    tools: agentTools(toolDeps),
    keys,
    keyAdmin: createAgentKeyAdminService({ db, clock, secrets }, (keyId) => keys.forget(keyId)),
    authenticate: createAgentAuthenticator({
      db,
      clock,
      secrets,
      toleranceSeconds: config.PTS_SIGNATURE_TOLERANCE_SECONDS,
      keys,
    }),
    recordSignature: (req, claim) => recordAgentSignature(db, req, claim),
    noteKeyUsed: (keyId) => noteAgentKeyUsed({ db, clock, secrets }, keyId),
    verifyBrandKey: (brandId, key) => verifySecurityKey({ db, clock }, brandId, key),
  };
}

/** The relayer's, webhooks', payments', pregeneration's, identity's and DNS verification's services. */
function composeRelayServices(
  deps: AppDeps,
  changes: ChangeNotifier,
): Pick<
  AppServices,
  'relay' | 'relayRecords' | 'webhooks' | 'payments' | 'pregeneration' | 'userTokens' | 'dns' | 'rewardStatuses'
> {
  const { config, db, clock, logger } = deps;
  const contracts = relayContractsOf(deps);
  return {
    relay: createRelayService({
      db,
      clock,
      logger,
      relayer: deps.relayer,
      identity: deps.identity,
      chain: createRelayChainReader(deps.publicClient, contracts),
      contracts,
      constraints: deps.constraints,
      settings: relaySettingsOf(config),
    }),
    relayRecords: createRelayRecords({ db, chainId: deps.chain.chainId }),
    webhooks: createWebhookService({ db, secrets: deps.secrets, clock, config }),
    payments: createPaymentService(paymentDepsFrom(deps)),
    pregeneration: createPregenerationService({ db, wallets: deps.wallets }),
    userTokens: createUserTokenService({ db, wallets: deps.wallets, issuer: deps.tokenIssuer }),
    dns: createDnsService({ db, resolveTxt: deps.resolveTxt, clock, logger, changes }),
    rewardStatuses: createRewardStatusSampler(db),
  };
}

/** In the transaction that settles reversals: the brand's `reward.reversed` notice and the boards' correction. */
function reversalBookkeeping(clock: Clock) {
  return async (trx: Database, reversalIds: string[]): Promise<void> => {
    await notifyRewardsReversed(trx, reversalIds, clock.now());
    await recordReversalActivity(trx, reversalIds, clock.now());
  };
}

/** The feature modules' services for their routers (accounts, achievements, … streaks), each built once. */
function composeModuleServices(
  deps: AppDeps,
  shared: Pick<AppServices, 'brands' | 'eventService' | 'changes'>,
): Pick<
  AppServices,
  | 'accounts'
  | 'achievements'
  | 'balances'
  | 'community'
  | 'seedCompat'
  | 'drops'
  | 'reversals'
  | 'leaderboards'
  | 'members'
  | 'constraints'
  | 'perks'
  | 'streaks'
  | 'brandAdmin'
  | 'shopify'
  | 'tiers'
  | 'referrals'
  | 'simulator'
> {
  const { config, db, clock, logger, secrets } = deps;
  const { brands, eventService: events, changes } = shared;
  const rewardToken = deps.chain.contracts.rewardToken as `0x${string}`;
  // Built once: /services/balance, the compat answers and the agent's member tools read the same wallet figures.
  // Built once: the reversal route, the CLI, the agent's reverse_event and Shopify's refunds take back through it.
  // It tells referrals of each new reversal, and referrals reverse through it: built in turn.
  let referrals: ReferralService | undefined;
  const reversals = createReversalService({
    db,
    clock,
    minter: deps.minter,
    waitMs: config.PTS_MINT_WAIT_MS,
    onSettled: reversalBookkeeping(clock),
    wallet: { db, publicClient: deps.publicClient, rewardToken, balanceOf: deps.chainReads?.balanceOf },
    afterRecorded: (reversal) => referrals?.afterReversal(reversal) ?? Promise.resolve(),
  });
  referrals = createReferralService({ db, clock, logger, brands: events.brands, reversals });
  const balances = createBalanceService({
    db,
    publicClient: deps.publicClient,
    rewardToken,
    balanceOf: deps.chainReads?.balanceOf,
  });
  return {
    accounts: createAccountService({ db, clock, logger, wallets: deps.wallets, balanceOf: deps.perkChain?.balanceOf }),
    achievements: createAchievementService({ db, clock }),
    balances,
    community: createCommunityService({ db, clock, secrets, changes }),
    seedCompat: createSeedCompatService({
      db,
      clock,
      logger,
      brands,
      events,
      balances,
      duplicateWindowSeconds: config.PTS_DUPLICATE_WINDOW_SECONDS,
    }),
    drops: createDropService({ db, clock, logger, secrets, changes, events }),
    reversals,
    referrals,
    leaderboards: createLeaderboardService({ db, clock, logger }),
    members: createBrandMemberService({
      db,
      clock,
      logger,
      events,
      changes,
      wallet: { db, publicClient: deps.publicClient, rewardToken, balanceOf: deps.chainReads?.balanceOf },
    }),
    constraints: createConstraintService({
      db,
      clock,
      defaultTtlSeconds: config.PTS_CONSTRAINT_DEFAULT_TTL_SECONDS,
      urlPolicy: constraintUrlPolicy(config),
    }),
    perks: createPerkService({ db, clock, perkChain: deps.perkChain, logger, changes, brands: events.brands }),
    streaks: createStreakService({ db, clock, logger, events }),
    shopify: createShopifyService({ db, clock, logger, secrets, events, reversals }),
    tiers: createTierService({ db, clock, logger, events }),
    simulator: createSimulatorService({
      db,
      clock,
      settings: { duplicateWindowSeconds: config.PTS_DUPLICATE_WINDOW_SECONDS },
    }),
    brandAdmin: createBrandAdminService({
      db,
      secrets,
      clock,
      changes,
      defaultCooldownHours: config.PTS_DEFAULT_COOLDOWN_HOURS,
    }),
  };
}

/**
 * The brand portal's own services (docs/portal.md), each built once: its sessions, team, operators, dashboard
 * and agent keys. Its pages' changes go through the modules' services above (app.ts hands them over).
 */
function composePortalServices(deps: AppDeps, services: Pick<AppServices, 'portalMailer' | 'agent'>): PortalServices {
  const { db, clock, logger, secrets } = deps;
  return {
    auth: createPortalAuthService({ db, clock }),
    team: createPortalTeamService({ db, clock, mailer: services.portalMailer, logger }),
    operators: createPortalOperatorService({ db, clock }),
    analytics: createBrandAnalyticsService({ db, clock, chain: deps.chain, logger }),
    // A revocation through the portal is forgotten at once by this process's key cache.
    agentKeys: portalAgentKeyService({ db, clock, secrets }, (keyId) => services.agent.keys.forget(keyId)),
  };
}

// The chain's parts and the change sharing (issue 34 §3): built here, each once; startup/platform.ts opens the
// database and the RPC, deploys, then starts what these build (elects the minter, starts the reconciler, the
// relayer and the notifier) and stops them.

/** The minter's and the relayer's keys: configured, or anvil's well-known ones on a local chain. */
export interface ChainSigners {
  minter: PrivateKeyAccount;
  relayer: PrivateKeyAccount | undefined;
}

export function composeChainSigners(config: Config, logger: Logger): ChainSigners {
  const local = config.PTS_CHAIN === 'local';
  const minterKey = config.PTS_MINTER_PRIVATE_KEY ?? (local ? ANVIL_MINTER_PRIVATE_KEY : undefined);
  if (!minterKey) throw new Error('PTS_MINTER_PRIVATE_KEY is required when PTS_CHAIN=rpc');
  const relayerKey = config.PTS_RELAYER_PRIVATE_KEY ?? (local ? ANVIL_RELAYER_PRIVATE_KEY : undefined);
  const relayer = relayerKey ? privateKeyToAccount(relayerKey as `0x${string}`) : undefined;
  // Asking for the relayer role by name without its key is a mistake worth stopping for; the default `all`
  // runs without a relayer (its endpoints answer 503 saying why) so a minting-only deployment still starts.
  if (!relayer && config.PTS_ROLES.includes('relayer')) {
    throw new Error('PTS_RELAYER_PRIVATE_KEY is required for the relayer role when PTS_CHAIN=rpc');
  }
  if (!relayer && hasRole(config, 'relayer')) {
    logger.warn('PTS_RELAYER_PRIVATE_KEY is not set: the relayer endpoints answer 503 until it is');
  }
  return { minter: privateKeyToAccount(minterKey as `0x${string}`), relayer };
}

/** The deployer key (also the perk collection admin): configured, or anvil's on a local chain. */
export function deployerKeyOf(config: Config): string | undefined {
  return config.PTS_DEPLOYER_PRIVATE_KEY ?? (config.PTS_CHAIN === 'local' ? ANVIL_DEPLOYER_PRIVATE_KEY : undefined);
}

/** The chain's clients over the RPC the process opened. */
export function composeChainClients(config: Config, rpcUrl: string): ReturnType<typeof createChainClients> {
  return createChainClients(rpcUrl, config.PTS_CHAIN_ID);
}

/** Everything of the chain a process holds, built and not started: startup/platform.ts starts and stops it. */
export interface ChainParts {
  info: ChainInfo;
  minter: ElectedMinter & { elect(): Promise<boolean> };
  reconciler: ChainReconciler;
  relayer: RelayerSender;
  chainReads: ChainReads;
  perkChain: PerkChain;
}

/** What the chain's parts are built over: the opened database and RPC, the signers, the deployed contracts. */
export interface ChainPartsInput {
  config: Config;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  database: DatabaseHandle;
  rpcUrl: string;
  clients: ReturnType<typeof createChainClients>;
  signers: ChainSigners;
  tokenAddress: `0x${string}`;
  contractAddresses: Record<string, `0x${string}`>;
}

export function composeChain(input: ChainPartsInput): ChainParts {
  const { config, clients, rpcUrl, tokenAddress, contractAddresses } = input;
  const { minter, reconciler } = composeMinting(input);
  const perkNftAddress = contractAddresses.perkNft ?? (config.PTS_PERK_NFT_ADDRESS as `0x${string}` | undefined);
  const { chainReads, perkChain } = composeChainReads(input, perkNftAddress);
  const info: ChainInfo = {
    chainId: config.PTS_CHAIN_ID,
    rpcUrl: config.PTS_CHAIN === 'local' ? rpcUrl : new URL(rpcUrl).origin,
    contracts: { ...contractAddresses, rewardToken: tokenAddress },
    minterAddress: input.signers.minter.address,
    explorerUrl: config.PTS_EXPLORER_URL,
    ping: () => clients.publicClient.getBlockNumber({ cacheTime: 0 }),
    ledger: () => reconciler.report(),
    minting: () => minter.mintingState(),
  };
  return { info, minter, reconciler, relayer: composeRelayer(input), chainReads, perkChain };
}

/**
 * The elected minter and the chain reconciler, with the updates that run when a mint confirms. Whoever may
 * sign (the worker role, or an event handler minting its own requests' rewards) stands for election; the
 * winner signs, the others hand their committed reward rows over.
 */
function composeMinting(input: ChainPartsInput): Pick<ChainParts, 'minter' | 'reconciler'> {
  const { config, clock, logger, metrics, database, clients, tokenAddress } = input;
  const account = input.signers.minter;
  const localMinter = createMinter({
    db: database.db,
    chainId: config.PTS_CHAIN_ID,
    publicClient: clients.publicClient,
    account,
    tokenAddress,
    config,
    clock,
    logger,
    metrics,
    // Both run in the transaction that marks the rewards confirmed: the brand's notice and the boards (the
    // leaderboard's and the achievements' progress).
    onMintsConfirmed: async (trx, mints, confirmation) => {
      await notifyRewardsDistributed(trx, mints, confirmation);
      await recordRewardActivity(trx, mints, confirmation);
    },
    onReversalsSettled: reversalBookkeeping(clock),
    finality: mintFinality(config),
    wedgedAfterSeconds: config.PTS_CHAIN_WEDGED_SECONDS,
    // The chain went back: the ledger report stops saying `ok` and the reconciler checks everything at once.
    onRollback: (reason) => reconciler.rollbackSeen(reason),
  });
  // Confirmed mints the chain lost go back to the outbox: at election (before the tracker runs) and periodically.
  const reconciler = createChainReconciler({
    db: database.db,
    chainId: config.PTS_CHAIN_ID,
    publicClient: clients.publicClient,
    signer: account.address,
    tokenAddress,
    clock,
    logger,
    metrics,
    mayRepair: () => minter.isLeader(),
    intervalSeconds: config.PTS_RECONCILE_INTERVAL_SECONDS,
  });
  const minter = createElectedMinter({
    minter: localMinter,
    beforeSigning: async () => {
      await reconciler.reconcile();
    },
    acquireLock: () =>
      acquireSignerLock({
        db: database.db,
        kind: database.kind,
        chainId: config.PTS_CHAIN_ID,
        signer: account.address,
      }),
    logger,
    retryMs: config.PTS_MINTER_ELECTION_SECONDS * 1000,
  });
  return { minter, reconciler };
}

/** The relayer signs with its own key (never the minter's: creation refuses that) and owns its nonces. */
function composeRelayer(input: ChainPartsInput): RelayerSender {
  const { config, clock, logger, metrics, database, clients, signers } = input;
  const account = signers.relayer;
  if (!account) return createUnavailableRelayer('PTS_RELAYER_PRIVATE_KEY is not set on this instance');
  return createRelayerSender({
    db: database.db,
    chainId: config.PTS_CHAIN_ID,
    publicClient: clients.publicClient,
    account,
    config,
    clock,
    logger,
    metrics,
    minterAddress: signers.minter.address,
    acquireLock: () =>
      acquireSignerLock({
        db: database.db,
        kind: database.kind,
        chainId: config.PTS_CHAIN_ID,
        signer: account.address,
      }),
  });
}

/** Balances and perks as of the newest block this process follows, and the perk collections' admin. */
function composeChainReads(input: ChainPartsInput, perkNftAddress: `0x${string}` | undefined) {
  const { config, logger, clients, rpcUrl, tokenAddress } = input;
  const chainReads = createChainReads({
    publicClient: clients.publicClient,
    chain: clients.chain,
    webSocketUrl: config.PTS_CHAIN === 'local' ? rpcUrl.replace(/^http/, 'ws') : config.PTS_RPC_WS_URL,
    tokenAddress,
    perkNftAddress,
    logger,
  });
  // Receipts this process receives (its mints, relays, collections) move the reads past their block at once.
  followReceipts(clients.publicClient, chainReads);
  // Perk collections are created by the collection admin (COLLECTION_ADMIN_ROLE): the deployer key.
  const collectionAdminKey = deployerKeyOf(config);
  const perkChain = createPerkChain({
    publicClient: clients.publicClient,
    tokenAddress,
    perkNftAddress,
    reads: chainReads,
    adminWallet: collectionAdminKey
      ? clients.walletClientFor(privateKeyToAccount(collectionAdminKey as `0x${string}`))
      : undefined,
  });
  return { chainReads, perkChain };
}

/**
 * Several processes on one PostgreSQL database share their rate-limit counters and hear each other's brand
 * changes (docs/operations.md, "Several processes"); PGlite is one process, so memory suffices. Built here;
 * startup/platform.ts starts the notifier and listens for the member notices.
 */
export function composeChangeSharing(database: DatabaseHandle, logger: Logger) {
  const { pool, connectionString } = database;
  // Member answers are dropped by the database's own notices (modules/ledger/member-answers.ts), heard on the
  // brand changes' connection (PostgreSQL) or by the embedded instance itself (PGlite).
  const memberChanges = createMemberChangeFeed();
  const changes = createChangeNotifier({
    onListenerError: (error) => logger.error({ err: error }, 'brand change listener failed'),
    ...(pool && connectionString
      ? { transport: createPostgresChangeTransport({ connectionString, pool, logger, channels: [memberChanges] }) }
      : {}),
  });
  const rateLimits = pool
    ? createPostgresRateLimitStore(pool, {
        onStoreError: (error) =>
          logger.warn({ err: error }, 'rate-limit store failed: limits count in this process until it answers'),
      })
    : createMemoryRateLimitStore();
  return { changes, rateLimits, memberChanges };
}
