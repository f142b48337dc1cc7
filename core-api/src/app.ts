import { PORTAL_DIST_DIR } from '@pts/portal/build';
import { AppError, RELAY_BODY_LIMIT_BYTES } from '@pts/shared';
import express, { type Express, Router } from 'express';
import { createAgentAuthenticator, recordAgentSignature } from './agent/agent-auth.ts';
import { createAgentRouter, documentAgentTools } from './agent/agent-router.ts';
import { agentTools } from './agent/agent-tools.ts';
import { growthLeadAdminRoutes } from './agent/growth/growth-leads.routes.ts';
import { agentKeyAdminRoutes } from './agent/keys/agent-keys.routes.ts';
import type { ActiveAgentKey } from './agent/keys/agent-keys.service.ts';
import { createMcpRouter } from './agent/mcp/mcp.routes.ts';
import { createKeyedCache } from './caching/keyed-cache.ts';
import { relayContractsOf } from './chain/contract-addresses.ts';
import type { AppServices } from './compose.ts';
import { hasRole, type Role } from './config.ts';
import type { AppDeps } from './deps.ts';
import { createErrorHandler, notFoundHandler } from './http/errors.ts';
import { jsonBody } from './http/json-body.ts';
import { documentRoutes, type Route, routerFrom } from './http/route-table.ts';
import { securityHeaders } from './http/security-headers.ts';
import { accountRoutes } from './modules/accounts/accounts.routes.ts';
import { achievementAdminRoutes, achievementRoutes } from './modules/achievements/achievements.routes.ts';
import { balanceRoutes } from './modules/balances/balances.routes.ts';
import { brandAdminRoutes } from './modules/brands/brands.routes.ts';
import { campaignAdminRoutes, communityRoutes } from './modules/community/community.routes.ts';
import {
  createSeedRelayerCompatRouter,
  seedEventCompat,
  seedServicesCompat,
} from './modules/compat/seed-compat.routes.ts';
import { dnsRoutes } from './modules/dns/dns.routes.ts';
import { dropRoutes } from './modules/drops/drops.routes.ts';
import { eventRoutes, limitUnsignedByIp } from './modules/events/events.routes.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import { identityAdminRoutes, jwksRoutes } from './modules/identity/identity.routes.ts';
import { leaderboardRoutes } from './modules/leaderboards/leaderboards.routes.ts';
import { readWalletBalance } from './modules/ledger/wallet-balance.ts';
import { createPaymentErrorHandler, paymentAdminRoutes, paymentRoutes } from './modules/payments/payments.routes.ts';
import { constraintUrlPolicy } from './modules/perks/constraints/constraint-checker.ts';
import {
  constraintAdminRoutes,
  constraintUpdaterRoutes,
  eligibilityRoutes,
} from './modules/perks/constraints/constraints.routes.ts';
import { perkAdminRoutes, perkCatalogueRoutes } from './modules/perks/perks.routes.ts';
import { redemptionRoutes } from './modules/perks/redemption.routes.ts';
import { portalAdminRoutes, portalRoutes } from './modules/portal/portal.routes.ts';
import { portalMemberRoutes } from './modules/portal/portal-members.routes.ts';
import { portalPerkRoutes } from './modules/portal/portal-perks.routes.ts';
import { requireCsrf } from './modules/portal/portal-session.ts';
import { portalSecurityHeaders, portalStaticRouter } from './modules/portal/portal-static.ts';
import { accountVerifierFromConfig } from './modules/pregeneration/account-verifiers.ts';
import { pregenerationRoutes } from './modules/pregeneration/pregeneration.routes.ts';
import { relayerRoutes } from './modules/relayer/relayer.router.ts';
import { relayerGasAdminRoutes } from './modules/relayer/relayer-gas.routes.ts';
import { rewardProcessorRoutes } from './modules/reward-processor/reward-processor.routes.ts';
import { sdkRoutes } from './modules/sdk/sdk.routes.ts';
import { streakRoutes } from './modules/streaks/streaks.routes.ts';
import { webhookAdminRoutes } from './modules/webhooks/webhooks.routes.ts';
import { createDocsRouter } from './observability/docs.routes.ts';
import { createHttpMetricsMiddleware } from './observability/http-metrics.ts';
import { createMetricsRouter, createRewardStatusSampler } from './observability/metrics.routes.ts';
import { createApiDocs } from './observability/openapi.ts';

export const SERVICE_NAME = 'pts-core-api';
export const SERVICE_VERSION = '0.1.0';

/** Bulk requests carry up to 100 events of up to 10 KB each; the envelope gets room for that. */
const BULK_BODY_LIMIT_BYTES = 256 * 1024;
const ADMIN_BODY_LIMIT_BYTES = 64 * 1024;
/** Brands' pages revalidate their copy of /sdk.js (a 304 when unchanged) after 5 minutes. */
const SDK_MAX_AGE_SECONDS = 300;

/**
 * Builds the HTTP app: every role's routes under its prefix (`/pts-api`, `/reward-processor`, `/admin`, …);
 * a process running a single role also serves that role's routes at the root, so each host of the spec
 * (`{reward_processor_url}/queue`, …) matches exactly. One JSON error handler comes last.
 */
export function createApp(deps: AppDeps, services: AppServices): Express {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.PTS_TRUST_PROXY);
  app.set('etag', false);

  const { verifyBrandSignature } = services;
  // Live agent keys for signature checks: a revocation through this process (or any brand change, which an
  // onboarding that grants a brand to its key makes) forgets at once; other processes' within the TTL.
  const agentKeys = createKeyedCache<ActiveAgentKey>({
    clock: deps.clock,
    ttlMs: config.PTS_RULE_CACHE_SECONDS * 1000,
  });
  services.changes.subscribe(() => agentKeys.forget());

  app.use(createHttpMetricsMiddleware({ metrics: deps.metrics, logger }));
  app.use(securityHeaders);
  app.use(services.cors);
  app.use(services.signedReplies.capture);

  // Route tables (http/route-table.ts): each is mounted on its router and documented under its prefix, once.
  const docs = createApiDocs();
  const serve = (router: Router, prefix: string, routes: readonly Route[]) => {
    router.use(routerFrom(routes));
    documentRoutes(docs, routes, prefix);
  };

  const mounted: string[] = [];
  const roleRouters: [Role, string, Router][] = [];
  const mount = (role: Role, prefix: string, router: Router) => {
    if (!hasRole(config, role)) return;
    roleRouters.push([role, prefix, router]);
    mounted.push(prefix);
  };

  // Perk eligibility (public by wallet address): under /services, and /pts-api/check-eligibility for seed clients.
  const eligibility = eligibilityRoutes({
    db: deps.db,
    clock: deps.clock,
    constraints: deps.constraints,
    verifyBrandSignature,
    ipLimit: services.limits.ip,
  });
  // The seed system's vocabulary, mapped at the edge before pts's own routers (docs/compatibility.md).
  const seedCompat = { db: deps.db, clock: deps.clock, logger, brands: services.brands };
  const memberWalletDeps = {
    db: deps.db,
    publicClient: deps.publicClient,
    rewardToken: deps.chain.contracts.rewardToken as `0x${string}`,
  };
  const readMemberBalance = (userIdentifier: string) => readWalletBalance(memberWalletDeps, userIdentifier);
  const eventRouter = Router();
  const seedEvents = seedEventCompat({
    ...seedCompat,
    verifyBrandSignature,
    bodyLimitBytes: config.PTS_BODY_LIMIT_BYTES,
    bulkBodyLimitBytes: BULK_BODY_LIMIT_BYTES,
    readBalance: readMemberBalance,
    eligibility: routerFrom(eligibility),
    duplicateWindowSeconds: config.PTS_DUPLICATE_WINDOW_SECONDS,
  });
  eventRouter.use(seedEvents.adapters);
  serve(eventRouter, '/pts-api', seedEvents.routes);
  eventRouter.use(limitUnsignedByIp(services.limits.ip));
  serve(
    eventRouter,
    '/pts-api',
    eventRoutes(
      {
        ...services.events,
        verifyBrandSignature,
        brandLimit: services.limits.brand,
        bodyLimitBytes: config.PTS_BODY_LIMIT_BYTES,
        bulkBodyLimitBytes: BULK_BODY_LIMIT_BYTES,
        eventConfigCacheSeconds: config.PTS_EVENT_CONFIG_CACHE_SECONDS,
      },
      services.eventConfigCache,
    ),
  );
  serve(eventRouter, '/pts-api', dnsRoutes(deps, { limit: services.limits.verifyDns }));
  // Token purchases answer their errors in the payment failure shape (spec 4.7), on their own router.
  const paymentsRouter = Router();
  serve(paymentsRouter, '/pts-api', paymentRoutes(deps));
  paymentsRouter.use(createPaymentErrorHandler(logger));
  eventRouter.use(paymentsRouter);
  // Real-account checks with the providers whose credentials are configured (docs/identity.md).
  const accountVerifier = accountVerifierFromConfig(config, { logger });
  serve(
    eventRouter,
    '/pts-api',
    pregenerationRoutes({
      db: deps.db,
      wallets: deps.wallets,
      logger,
      limits: services.limits.pregeneration,
      ...(accountVerifier ? { verifier: accountVerifier } : {}),
    }),
  );
  mount('event-handler', '/pts-api', eventRouter);
  const rewardProcessorRouter = Router();
  serve(
    rewardProcessorRouter,
    '/reward-processor',
    rewardProcessorRoutes({ minter: deps.minter, logger, clock: deps.clock, adminToken: deps.adminToken }),
  );
  mount('reward-processor', '/reward-processor', rewardProcessorRouter);
  const relayerRouter = Router();
  relayerRouter.use(createSeedRelayerCompatRouter({ bodyLimitBytes: RELAY_BODY_LIMIT_BYTES }));
  serve(relayerRouter, '/relayer', relayerRoutes(deps, { verifyBrandSignature, limits: services.limits }));
  mount('relayer', '/relayer', relayerRouter);
  // Brands, rules and purchases share the /admin prefix; their bodies are small JSON documents.
  const adminRouter = Router();
  adminRouter.use(jsonBody(ADMIN_BODY_LIMIT_BYTES));
  serve(
    adminRouter,
    '/admin',
    agentKeyAdminRoutes({
      db: deps.db,
      clock: deps.clock,
      secrets: deps.secrets,
      adminToken: deps.adminToken,
      onRevoked: (keyId) => agentKeys.forget(keyId),
    }),
  );
  serve(adminRouter, '/admin', paymentAdminRoutes(deps));
  serve(adminRouter, '/admin', webhookAdminRoutes(deps));
  serve(adminRouter, '/admin', achievementAdminRoutes({ db: deps.db, adminToken: deps.adminToken }));
  serve(adminRouter, '/admin', relayerGasAdminRoutes(deps));
  serve(adminRouter, '/admin', campaignAdminRoutes(deps));
  serve(adminRouter, '/admin', growthLeadAdminRoutes(deps));
  const perkDeps = {
    db: deps.db,
    clock: deps.clock,
    perkChain: deps.perkChain,
    logger,
    adminToken: deps.adminToken,
    changes: services.changes,
  };
  serve(adminRouter, '/admin', perkAdminRoutes(perkDeps));
  serve(
    adminRouter,
    '/admin',
    constraintAdminRoutes({
      ...perkDeps,
      defaultTtlSeconds: config.PTS_CONSTRAINT_DEFAULT_TTL_SECONDS,
      urlPolicy: constraintUrlPolicy(config),
    }),
  );
  serve(
    adminRouter,
    '/admin',
    identityAdminRoutes({
      db: deps.db,
      wallets: deps.wallets,
      issuer: deps.tokenIssuer,
      adminToken: deps.adminToken,
    }),
  );
  // Shared services (perk catalogue, eligibility, chat roles) and the constraint cache's invalidation host.
  // Shared services for bots, the site plugin and brand back-ends: each feature's own router.
  const servicesRouter = Router();
  const seedServices = seedServicesCompat({
    ...seedCompat,
    events: services.events,
    verifyBrandSignature,
    brandLimit: services.limits.brand,
    readBalance: readMemberBalance,
    serviceDomain: config.PTS_SERVICE_DOMAIN,
  });
  servicesRouter.use(seedServices.adapters);
  serve(servicesRouter, '/services', seedServices.routes);
  // Check-in and milestones reward through the event handler's own pipeline, cache and brand limit.
  serve(
    servicesRouter,
    '/services',
    streakRoutes({
      db: deps.db,
      clock: deps.clock,
      logger,
      events: services.events,
      verifyBrandSignature,
      brandLimit: services.limits.brand,
    }),
  );
  serve(
    servicesRouter,
    '/services',
    accountRoutes({
      db: deps.db,
      clock: deps.clock,
      logger,
      wallets: deps.wallets,
      balanceOf: deps.perkChain?.balanceOf,
      verifyBrandSignature,
      confirmLimit: services.limits.linkConfirm,
    }),
  );
  serve(
    servicesRouter,
    '/services',
    communityRoutes({
      db: deps.db,
      clock: deps.clock,
      secrets: deps.secrets,
      verifyBrandSignature,
      changes: services.changes,
      setupFailures: services.limits.chatSetupFailures,
    }),
  );
  serve(
    servicesRouter,
    '/services',
    leaderboardRoutes({ db: deps.db, clock: deps.clock, logger, verifyBrandSignature }),
  );
  serve(servicesRouter, '/services', achievementRoutes({ db: deps.db, clock: deps.clock, verifyBrandSignature }));
  serve(
    servicesRouter,
    '/services',
    balanceRoutes({
      db: deps.db,
      clock: deps.clock,
      publicClient: deps.publicClient,
      rewardToken: deps.chain.contracts.rewardToken as `0x${string}`,
      verifyBrandSignature,
    }),
  );
  serve(
    servicesRouter,
    '/services',
    perkCatalogueRoutes({
      db: deps.db,
      clock: deps.clock,
      perkChain: deps.perkChain,
      logger,
      brands: services.events.brands,
    }),
  );
  serve(servicesRouter, '/services', redemptionRoutes({ redemption: services.redemption, verifyBrandSignature }));
  serve(servicesRouter, '/services', eligibility);
  serve(
    servicesRouter,
    '/services',
    dropRoutes({
      db: deps.db,
      clock: deps.clock,
      logger,
      events: services.events,
      secrets: deps.secrets,
      changes: services.changes,
      verifyBrandSignature,
      brandLimit: services.limits.brand,
    }),
  );
  mount('event-handler', '/services', servicesRouter);
  const updaterRouter = Router();
  serve(updaterRouter, '/constraint-updater', constraintUpdaterRoutes(deps));
  mount('constraint-updater', '/constraint-updater', updaterRouter);
  mount('admin', '/admin', adminRouter);
  serve(
    adminRouter,
    '/admin',
    brandAdminRoutes({
      db: deps.db,
      secrets: deps.secrets,
      clock: deps.clock,
      changes: services.changes,
      defaultCooldownHours: config.PTS_DEFAULT_COOLDOWN_HOURS,
      adminToken: deps.adminToken,
    }),
  );

  // The brand portal (docs/portal.md): its JSON API (session + CSRF) and its built pages, under /portal.
  const portalDeps = {
    db: deps.db,
    clock: deps.clock,
    secrets: deps.secrets,
    changes: services.changes,
    defaultCooldownHours: config.PTS_DEFAULT_COOLDOWN_HOURS,
    mailer: services.portalMailer,
    publicUrl: config.PTS_PUBLIC_URL,
  };
  serve(adminRouter, '/admin', portalAdminRoutes({ ...portalDeps, adminToken: deps.adminToken }));
  const portalRouter = Router();
  portalRouter.use(portalSecurityHeaders);
  const portalApi = Router();
  portalApi.use(requireCsrf);
  serve(
    portalApi,
    '/portal/api',
    portalRoutes({ ...portalDeps, signInFailures: services.limits.portalSignInFailures }),
  );
  const constraintDeps = {
    defaultTtlSeconds: config.PTS_CONSTRAINT_DEFAULT_TTL_SECONDS,
    urlPolicy: constraintUrlPolicy(config),
  };
  const perkNftAddress = relayContractsOf(deps).perkNft;
  serve(portalApi, '/portal/api', portalPerkRoutes({ ...portalDeps, ...perkDeps, ...constraintDeps, perkNftAddress }));
  const wallet = { ...memberWalletDeps, balanceOf: deps.chainReads?.balanceOf };
  serve(portalApi, '/portal/api', portalMemberRoutes({ ...portalDeps, logger, wallet, events: services.events }));
  portalRouter.use('/api', portalApi);
  portalRouter.use(portalStaticRouter(config.PTS_PORTAL_DIR ?? PORTAL_DIST_DIR));

  // A process running one role is that role's host: its routes (its own /health included) answer at the
  // root too, ahead of the generic health routes.
  const singleRole = config.PTS_ROLES.length === 1 && config.PTS_ROLES[0] !== 'all' ? config.PTS_ROLES[0] : undefined;
  for (const [role, , router] of roleRouters) if (role === singleRole) app.use(router);

  const healthRouter = Router();
  serve(
    healthRouter,
    '',
    healthRoutes({
      pingDatabase: deps.pingDatabase,
      chain: deps.chain,
      clock: deps.clock,
      config,
      wallets: deps.wallets,
      dbKind: deps.dbKind,
      logger,
      routes: () => mounted,
      serviceName: SERVICE_NAME,
      version: SERVICE_VERSION,
    }),
  );
  app.use(healthRouter);
  const sampleRewardTable = createRewardStatusSampler(deps.db);
  app.use(
    createMetricsRouter({
      metrics: deps.metrics,
      // The minter's queue status also refreshes the nonce-lag gauge; the table count is the fallback when
      // the chain does not answer.
      sampleRewards: async () => {
        try {
          const queue = await deps.minter.queueStatus();
          return {
            pending: queue.pending,
            submitted: queue.submitted,
            confirmed: queue.confirmed,
            failed: queue.failed,
          };
        } catch {
          return sampleRewardTable();
        }
      },
      logger,
    }),
  );
  const jwksRouter = Router();
  serve(jwksRouter, '', jwksRoutes({ issuer: deps.tokenIssuer }));
  app.use(jwksRouter);
  // {base_url}/sdk.js (spec 1 item 6): the browser SDK belongs to the event handler host.
  const sdkRouter = Router();
  serve(sdkRouter, '', sdkRoutes({ sdk: services.sdk, logger, maxAgeSeconds: SDK_MAX_AGE_SECONDS }));
  if (hasRole(config, 'event-handler')) app.use(sdkRouter);
  app.use(createDocsRouter({ docs, info: { title: 'pts core-api', version: SERVICE_VERSION } }));

  for (const [, prefix, router] of roleRouters) app.use(prefix, router);
  // Never at the root (its page fallback would answer every path), even on a single-role admin host.
  if (hasRole(config, 'admin')) {
    app.use('/portal', portalRouter);
    mounted.push('/portal');
  }

  // The agent API (docs/agent-api.md): served by the event handler host, under /api/v1 only (its own 404 and
  // error envelope, so it is never mounted at the root).
  if (hasRole(config, 'event-handler')) {
    const tools = agentTools({ deps, services });
    const authenticate = createAgentAuthenticator({
      db: deps.db,
      clock: deps.clock,
      secrets: deps.secrets,
      toleranceSeconds: config.PTS_SIGNATURE_TOLERANCE_SECONDS,
      keys: agentKeys,
    });
    app.use('/api/v1', createAgentRouter({ deps, services, tools, authenticate }));
    // MCP over streamable HTTP (docs/agent-api/converse-mcp.md): each POST agent-signed, limited and recorded.
    app.use(
      createMcpRouter({
        db: deps.db,
        clock: deps.clock,
        logger,
        listTools: () => tools,
        authenticate: async (req, res) => {
          const auth = await authenticate(req);
          if (!auth)
            throw new AppError(
              'UNAUTHORIZED',
              'POST /mcp needs an agent signature (X-PTS-Agent-Key, X-PTS-Timestamp, X-PTS-Signature)',
            );
          await services.limits.agentKey(auth.principal.ratePerMinute).consume(res, auth.principal.keyId);
          await recordAgentSignature(deps.db, req, auth.claim);
          return auth.principal;
        },
      }),
    );
    documentAgentTools(docs, tools);
    mounted.push('/api/v1');
  }

  app.use(notFoundHandler);
  app.use(createErrorHandler(logger, { replies: services.signedReplies }));
  return app;
}
