import { buildSdk } from '@pts/sdk/build';
import type { Request } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { type AgentAuthenticator, createAgentAuthenticator, recordAgentSignature } from './agent/agent-auth.ts';
import type { AgentTool, AgentToolDeps } from './agent/agent-tool.ts';
import { agentTools } from './agent/agent-tools.ts';
import { chatModelFromConfig } from './agent/converse/chat-model.ts';
import { type ActiveAgentKey, noteAgentKeyUsed, portalAgentKeyService } from './agent/keys/agent-keys.service.ts';
import { type AnswerCache, createAnswerCache } from './caching/answer-cache.ts';
import { createKeyedCache, type KeyedCache } from './caching/keyed-cache.ts';
import { relayContractsOf } from './chain/contract-addresses.ts';
import { webhooksAllowInsecure } from './config.ts';
import type { AppDeps } from './deps.ts';
import type { SignatureClaim } from './http/brand-signature.ts';
import { type BrandSignatureVerifier, createBrandSignatureVerifier } from './http/brand-signature.ts';
import { createCors } from './http/cors.ts';
import { createMemoryRateLimitStore, createRateLimit, type RateLimit, type RateLimitStore } from './http/rate-limit.ts';
import { createSignedReplies, type SignedReplies } from './http/signed-replies.ts';
import { CONFIRM_ATTEMPTS_PER_10_MINUTES } from './modules/accounts/accounts.routes.ts';
import { createBrandAnalyticsService } from './modules/analytics/brand-analytics.ts';
import type { ChangeNotifier } from './modules/brands/brand-changes.ts';
import { securityKeysValidAt, verifySecurityKey } from './modules/brands/brand-keys.service.ts';
import { listAllBrandDomains } from './modules/brands/brands.repository.ts';
import { SETUP_FAILURE_WINDOW_SECONDS, SETUP_FAILURES_ALLOWED } from './modules/community/community.routes.ts';
import { type BrandCache, createBrandCache } from './modules/events/brand-cache.ts';
import { createConfiguredEventBatcher } from './modules/events/event-batcher.ts';
import { createEventConfigCache, type EventConfigCache } from './modules/events/events.routes.ts';
import type { EventDeps } from './modules/events/events.service.ts';
import {
  createMemberAnswers,
  createMemberChangeFeed,
  type MemberAnswers,
  type MemberChangeFeed,
} from './modules/ledger/member-answers.ts';
import { constraintUrlPolicy } from './modules/perks/constraints/constraint-checker.ts';
import { createRedemptionService, custodialKeyOf, type RedemptionService } from './modules/perks/redemption.service.ts';
import { SIGN_IN_WINDOW_SECONDS } from './modules/portal/portal.routes.ts';
import { createPortalAuthService } from './modules/portal/portal-auth.service.ts';
import { createPortalMailer, type PortalMailer } from './modules/portal/portal-mailer.ts';
import { createPortalOperatorService } from './modules/portal/portal-operator.service.ts';
import {
  createPortalAchievementService,
  createPortalBillingService,
  createPortalBrandService,
  createPortalCampaignService,
  createPortalChatGroupService,
  createPortalDropService,
  createPortalMemberService,
  createPortalPerkService,
  createPortalStreakService,
  createPortalWebhookService,
  type PortalServices,
} from './modules/portal/portal-services.ts';
import { createPortalTeamService } from './modules/portal/portal-team.service.ts';
import { createSdkScriptSource, type SdkScript } from './modules/sdk/sdk-script.ts';

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
  /** The event pipeline: ONE batcher (and so one wallet reserve) for every path that rewards. */
  events: EventDeps;
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
  /** The brand portal's services: its sessions and team, and the modules' operations its pages call. */
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
    chatSetupFailures: store.limiter({
      keyPrefix: 'chat-setup-failures',
      points: SETUP_FAILURES_ALLOWED,
      durationSeconds: SETUP_FAILURE_WINDOW_SECONDS,
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
  const events: EventDeps = {
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
  };
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
    events,
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
  };
  const agent = composeAgent(deps, shared);
  return { ...shared, agent, portal: composePortalServices(deps, { ...shared, agent }) };
}

/** The named services the agent tools use: no tool reaches the process's whole container. */
export function composeAgentToolDeps(
  deps: AppDeps,
  services: Pick<AppServices, 'events' | 'changes' | 'redemption' | 'agentAnswers' | 'memberAnswers'>,
): AgentToolDeps {
  const { config } = deps;
  return {
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    secrets: deps.secrets,
    chain: deps.chain,
    contracts: relayContractsOf(deps),
    relayerAddress: deps.relayer.address,
    publicClient: deps.publicClient,
    chainReads: deps.chainReads,
    perkChain: deps.perkChain,
    events: services.events,
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

/**
 * The brand portal's services (docs/portal.md), each built once over the shared ones: the rewarding paths
 * (members' awards, drops, streaks) go through the one event pipeline, every change tells the brand caches.
 */
function composePortalServices(
  deps: AppDeps,
  services: Pick<AppServices, 'changes' | 'events' | 'portalMailer' | 'agent'>,
): PortalServices {
  const { config, db, clock, logger, secrets } = deps;
  const { changes, events } = services;
  const allowInsecure = webhooksAllowInsecure(config);
  return {
    auth: createPortalAuthService({ db, clock }),
    team: createPortalTeamService({ db, clock, mailer: services.portalMailer }),
    operators: createPortalOperatorService({ db, clock }),
    brands: createPortalBrandService({
      db,
      secrets,
      clock,
      changes,
      defaultCooldownHours: config.PTS_DEFAULT_COOLDOWN_HOURS,
      resolveTxt: deps.resolveTxt,
      logger,
    }),
    analytics: createBrandAnalyticsService({ db, clock, chain: deps.chain, logger }),
    members: createPortalMemberService({
      db,
      clock,
      logger,
      events,
      wallet: {
        db,
        publicClient: deps.publicClient,
        rewardToken: deps.chain.contracts.rewardToken as `0x${string}`,
        balanceOf: deps.chainReads?.balanceOf,
      },
    }),
    perks: createPortalPerkService({
      db,
      clock,
      perkChain: deps.perkChain,
      logger,
      changes,
      defaultTtlSeconds: config.PTS_CONSTRAINT_DEFAULT_TTL_SECONDS,
      urlPolicy: constraintUrlPolicy(config),
    }),
    campaigns: createPortalCampaignService({ db, clock }),
    drops: createPortalDropService({ db, clock, logger, events, secrets, changes }),
    chatGroups: createPortalChatGroupService({ db, clock, secrets, changes }),
    streaks: createPortalStreakService({ db, clock, logger, events }),
    achievements: createPortalAchievementService({ db, clock }),
    webhooks: createPortalWebhookService({
      db,
      secrets,
      clock,
      policy: { allowInsecure, allowLoopback: allowInsecure },
      timeoutMs: config.PTS_WEBHOOK_TIMEOUT_MS,
    }),
    billing: createPortalBillingService({
      db,
      clock,
      logger,
      minter: deps.minter,
      provider: deps.payments,
      explorerUrl: config.PTS_EXPLORER_URL,
      mintWaitMs: config.PTS_MINT_WAIT_MS,
      chain: deps.chain,
    }),
    // A revocation through the portal is forgotten at once by this process's key cache.
    agentKeys: portalAgentKeyService({ db, clock, secrets }, (keyId) => services.agent.keys.forget(keyId)),
  };
}
