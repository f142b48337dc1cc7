import { PORTAL_DIST_DIR } from '@pts/portal/build';
import { AppError, RELAY_BODY_LIMIT_BYTES } from '@pts/shared';
import express, { type Express, Router } from 'express';
import { createAgentRouter, documentAgentTools } from './agent/agent-router.ts';
import { growthLeadAdminRoutes } from './agent/growth/growth-leads.routes.ts';
import { agentKeyAdminRoutes } from './agent/keys/agent-keys.routes.ts';
import { createMcpRouter } from './agent/mcp/mcp.routes.ts';
import { relayContractsOf } from './chain/contract-addresses.ts';
import type { AppServices } from './compose.ts';
import { hasRole, type Role } from './config.ts';
import type { AppDeps } from './deps.ts';
import { compressResponses } from './http/compression.ts';
import { createErrorHandler, notFoundHandler } from './http/errors.ts';
import { jsonBody } from './http/json-body.ts';
import { documentRoutes, type Route, routerFrom } from './http/route-table.ts';
import { noStore, securityHeaders, skipUnder } from './http/security-headers.ts';
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
import { dropAdminRoutes, dropRoutes } from './modules/drops/drops.routes.ts';
import { eventRoutes, limitUnsignedByIp } from './modules/events/events.routes.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import { identityAdminRoutes, jwksRoutes } from './modules/identity/identity.routes.ts';
import { leaderboardRoutes } from './modules/leaderboards/leaderboards.routes.ts';
import { memberAdminRoutes } from './modules/members/members.routes.ts';
import { createPaymentErrorHandler, paymentAdminRoutes, paymentRoutes } from './modules/payments/payments.routes.ts';
import {
  constraintAdminRoutes,
  constraintUpdaterRoutes,
  eligibilityRoutes,
} from './modules/perks/constraints/constraints.routes.ts';
import { perkAdminRoutes, perkCatalogueRoutes } from './modules/perks/perks.routes.ts';
import { redemptionRoutes } from './modules/perks/redemption.routes.ts';
import { portalAdminRoutes, portalRoutes } from './modules/portal/portal.routes.ts';
import { portalBillingRoutes } from './modules/portal/portal-billing.routes.ts';
import { portalCampaignRoutes } from './modules/portal/portal-campaigns.routes.ts';
import { portalChatGroupRoutes } from './modules/portal/portal-chat-groups.routes.ts';
import { portalDashboardRoutes } from './modules/portal/portal-dashboard.routes.ts';
import { portalEngagementRoutes } from './modules/portal/portal-engagement.routes.ts';
import { portalIntegrationRoutes } from './modules/portal/portal-integrations.routes.ts';
import { portalMemberRoutes } from './modules/portal/portal-members.routes.ts';
import { portalOperatorAdminRoutes, portalOperatorRoutes } from './modules/portal/portal-operator.routes.ts';
import { portalPerkRoutes } from './modules/portal/portal-perks.routes.ts';
import { requireCsrf } from './modules/portal/portal-session.ts';
import { portalShopifyRoutes } from './modules/portal/portal-shopify.routes.ts';
import { portalSecurityHeaders, portalStaticRouter } from './modules/portal/portal-static.ts';
import { portalTierRoutes } from './modules/portal/portal-tiers.routes.ts';
import { accountVerifierFromConfig } from './modules/pregeneration/account-verifiers.ts';
import { pregenerationRoutes } from './modules/pregeneration/pregeneration.routes.ts';
import { referralAdminRoutes, referralRoutes } from './modules/referrals/referrals.routes.ts';
import { relayerRoutes } from './modules/relayer/relayer.router.ts';
import { relayerGasAdminRoutes } from './modules/relayer/relayer-gas.routes.ts';
import { reversalAdminRoutes, reversalRoutes } from './modules/reversals/reversals.routes.ts';
import { rewardProcessorRoutes } from './modules/reward-processor/reward-processor.routes.ts';
import { sdkRoutes } from './modules/sdk/sdk.routes.ts';
import { shopifyAdminRoutes, shopifyWebhookRoutes } from './modules/shopify/shopify.routes.ts';
import { simulatorAdminRoutes } from './modules/simulator/simulator.routes.ts';
import { streakRoutes } from './modules/streaks/streaks.routes.ts';
import { tierAdminRoutes, tierRoutes } from './modules/tiers/tiers.routes.ts';
import { webhookAdminRoutes } from './modules/webhooks/webhooks.routes.ts';
import { createDocsRouter } from './observability/docs.routes.ts';
import { createHttpMetricsMiddleware } from './observability/http-metrics.ts';
import { createMetricsRouter } from './observability/metrics.routes.ts';
import { createApiDocs } from './observability/openapi.ts';

export const SERVICE_NAME = 'pts-core-api';
export const SERVICE_VERSION = '0.1.0';

/** Bulk requests carry up to 100 events of up to 10 KB each; the envelope gets room for that. */
const BULK_BODY_LIMIT_BYTES = 256 * 1024;
const ADMIN_BODY_LIMIT_BYTES = 64 * 1024;
/** Brands' pages revalidate their copy of /sdk.js (a 304 when unchanged) after 5 minutes. */
const SDK_MAX_AGE_SECONDS = 300;

/** Where the route tables go: each is mounted on its router and documented under its prefix, once. */
type Serve = (router: Router, prefix: string, routes: readonly Route[]) => void;

/** The process's ports and shared services, as createApp's parts read them. */
interface Parts {
  deps: AppDeps;
  services: AppServices;
  serve: Serve;
}

/**
 * Builds the HTTP app: every role's routes under its prefix (`/pts-api`, `/reward-processor`, `/admin`, …);
 * a process running a single role also serves that role's routes at the root, so each host of the spec
 * (`{reward_processor_url}/queue`, …) matches exactly. One JSON error handler comes last. Every service is
 * built by the composition root (compose.ts); here each router gets the named services it uses.
 */
export function createApp(deps: AppDeps, services: AppServices): Express {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.PTS_TRUST_PROXY);
  app.set('etag', false);

  app.use(createHttpMetricsMiddleware({ metrics: deps.metrics, logger }));
  app.use(securityHeaders);
  // Before every router: each answer is compressed as it is sent (issue 33 §8).
  app.use(compressResponses());
  // The portal is same-origin only: its cookie session must never answer a brand website's script, so CORS
  // (brand origins are allowed on the brand-facing APIs) is skipped under /portal (issue 33 §7).
  app.use(skipUnder('/portal', services.cors));
  app.use(services.signedReplies.capture);

  const docs = createApiDocs();
  const serve: Serve = (router, prefix, routes) => {
    router.use(routerFrom(routes));
    documentRoutes(docs, routes, prefix);
  };
  const parts: Parts = { deps, services, serve };

  const mounted: string[] = [];
  const roleRouters: [Role, string, Router][] = [];
  const mount = (role: Role, prefix: string, router: Router) => {
    if (!hasRole(config, role)) return;
    roleRouters.push([role, prefix, router]);
    mounted.push(prefix);
  };

  // Perk eligibility (public by wallet address): under /services, and /pts-api/check-eligibility for seed clients.
  const eligibility = eligibilityRoutes({
    constraints: services.constraints,
    checker: deps.constraints,
    verifyBrandSignature: services.verifyBrandSignature,
    ipLimit: services.limits.ip,
  });
  mount('event-handler', '/pts-api', eventHandlerRouter(parts, eligibility));
  mount('reward-processor', '/reward-processor', rewardProcessorRouter(parts));
  mount('relayer', '/relayer', relayerRouter(parts));
  const adminRouter = Router();
  adminRouter.use(jsonBody(ADMIN_BODY_LIMIT_BYTES));
  serveAdminRoutes(parts, adminRouter);
  mount('event-handler', '/services', servicesRouter(parts, eligibility));
  // Shops' webhooks (docs/shop-program.md, "Shopify"): raw bodies, verified by the shop's own signature.
  const integrationsRouter = Router();
  serve(integrationsRouter, '/integrations/shopify', shopifyWebhookRoutes({ shopify: services.shopify }));
  mount('event-handler', '/integrations/shopify', integrationsRouter);
  const updaterRouter = Router();
  serve(updaterRouter, '/constraint-updater', constraintUpdaterRoutes({ constraints: services.constraints }));
  mount('constraint-updater', '/constraint-updater', updaterRouter);
  mount('admin', '/admin', adminRouter);
  const portal = portalRouter(parts, adminRouter);

  // A process running one role is that role's host: its routes (its own /health included) answer at the
  // root too, ahead of the generic health routes.
  const singleRole = config.PTS_ROLES.length === 1 && config.PTS_ROLES[0] !== 'all' ? config.PTS_ROLES[0] : undefined;
  for (const [role, , router] of roleRouters) if (role === singleRole) app.use(router);

  app.use(operationsRouter(parts, () => mounted));
  // {base_url}/sdk.js (spec 1 item 6): the browser SDK belongs to the event handler host.
  const sdkRouter = Router();
  serve(sdkRouter, '', sdkRoutes({ sdk: services.sdk, logger, maxAgeSeconds: SDK_MAX_AGE_SECONDS }));
  if (hasRole(config, 'event-handler')) app.use(sdkRouter);
  app.use(createDocsRouter({ docs, info: { title: 'pts core-api', version: SERVICE_VERSION } }));

  for (const [, prefix, router] of roleRouters) app.use(prefix, router);
  // Never at the root (its page fallback would answer every path), even on a single-role admin host.
  if (hasRole(config, 'admin')) {
    app.use('/portal', portal);
    mounted.push('/portal');
  }

  // The agent API (docs/agent-api.md): served by the event handler host, under /api/v1 only (its own 404 and
  // error envelope, so it is never mounted at the root).
  if (hasRole(config, 'event-handler')) {
    mountAgentApi(app, parts);
    documentAgentTools(docs, services.agent.tools);
    mounted.push('/api/v1');
  }

  app.use(notFoundHandler);
  app.use(createErrorHandler(logger, { replies: services.signedReplies }));
  return app;
}

/** `/pts-api`: the seed system's vocabulary first (docs/compatibility.md), then events, DNS, payments, pregeneration. */
function eventHandlerRouter({ deps, services, serve }: Parts, eligibility: readonly Route[]): Router {
  const { config, logger } = deps;
  const { verifyBrandSignature } = services;
  const router = Router();
  const seedEvents = seedEventCompat({
    seed: services.seedCompat,
    balances: services.balances,
    verifyBrandSignature,
    bodyLimitBytes: config.PTS_BODY_LIMIT_BYTES,
    bulkBodyLimitBytes: BULK_BODY_LIMIT_BYTES,
    eligibility: routerFrom(eligibility),
  });
  router.use(seedEvents.adapters);
  serve(router, '/pts-api', seedEvents.routes);
  router.use(limitUnsignedByIp(services.limits.ip));
  serve(
    router,
    '/pts-api',
    eventRoutes(
      {
        events: services.eventService,
        verifyBrandSignature,
        brandLimit: services.limits.brand,
        bodyLimitBytes: config.PTS_BODY_LIMIT_BYTES,
        bulkBodyLimitBytes: BULK_BODY_LIMIT_BYTES,
        eventConfigCacheSeconds: config.PTS_EVENT_CONFIG_CACHE_SECONDS,
      },
      services.eventConfigCache,
    ),
  );
  serve(
    router,
    '/pts-api',
    reversalRoutes({
      reversals: services.reversals,
      verifyBrandSignature,
      brandLimit: services.limits.brand,
    }),
  );
  serve(router, '/pts-api', dnsRoutes({ dns: services.dns, config }, { limit: services.limits.verifyDns }));
  // Token purchases answer their errors in the payment failure shape (spec 4.7), on their own router.
  const paymentsRouter = Router();
  serve(
    paymentsRouter,
    '/pts-api',
    paymentRoutes({
      payments: services.payments,
      bodyLimitBytes: config.PTS_BODY_LIMIT_BYTES,
      publicUrl: config.PTS_PUBLIC_URL,
    }),
  );
  paymentsRouter.use(createPaymentErrorHandler(logger));
  router.use(paymentsRouter);
  // Real-account checks with the providers whose credentials are configured (docs/identity.md).
  const accountVerifier = accountVerifierFromConfig(config, { logger });
  serve(
    router,
    '/pts-api',
    pregenerationRoutes({
      pregeneration: services.pregeneration,
      logger,
      limits: services.limits.pregeneration,
      ...(accountVerifier ? { verifier: accountVerifier } : {}),
    }),
  );
  return router;
}

function rewardProcessorRouter({ deps, serve }: Parts): Router {
  const router = Router();
  serve(
    router,
    '/reward-processor',
    rewardProcessorRoutes({ minter: deps.minter, logger: deps.logger, clock: deps.clock, adminToken: deps.adminToken }),
  );
  return router;
}

function relayerRouter({ deps, services, serve }: Parts): Router {
  const router = Router();
  router.use(createSeedRelayerCompatRouter({ bodyLimitBytes: RELAY_BODY_LIMIT_BYTES }));
  serve(
    router,
    '/relayer',
    relayerRoutes(
      {
        relay: services.relay,
        relayRecords: services.relayRecords,
        logger: deps.logger,
        relayer: deps.relayer,
        publicClient: deps.publicClient,
        perkNftAddress: relayContractsOf(deps).perkNft,
        waitMs: deps.config.PTS_RELAYER_WAIT_MS,
      },
      { verifyBrandSignature: services.verifyBrandSignature, limits: services.limits },
    ),
  );
  return router;
}

/** `/admin`: brands, rules, keys, purchases, webhooks and the rest of the operator's API (small JSON bodies). */
function serveAdminRoutes({ deps, services, serve }: Parts, router: Router): void {
  const { adminToken } = deps;
  serve(router, '/admin', agentKeyAdminRoutes({ keys: services.agent.keyAdmin, adminToken }));
  serve(router, '/admin', paymentAdminRoutes({ payments: services.payments, adminToken }));
  serve(
    router,
    '/admin',
    shopifyAdminRoutes({ shopify: services.shopify, adminToken, publicUrl: deps.config.PTS_PUBLIC_URL }),
  );
  serve(router, '/admin', webhookAdminRoutes({ webhooks: services.webhooks, adminToken }));
  serve(router, '/admin', achievementAdminRoutes({ achievements: services.achievements, adminToken }));
  serve(router, '/admin', tierAdminRoutes({ tiers: services.tiers, adminToken }));
  serve(router, '/admin', referralAdminRoutes({ referrals: services.referrals, adminToken }));
  serve(router, '/admin', simulatorAdminRoutes({ simulator: services.simulator, adminToken }));
  serve(router, '/admin', reversalAdminRoutes({ reversals: services.reversals, adminToken }));
  serve(router, '/admin', relayerGasAdminRoutes({ relayRecords: services.relayRecords, adminToken }));
  serve(router, '/admin', campaignAdminRoutes({ community: services.community, adminToken }));
  serve(router, '/admin', dropAdminRoutes({ drops: services.drops, adminToken }));
  serve(router, '/admin', growthLeadAdminRoutes({ growth: services.agent.toolDeps.growth, adminToken }));
  serve(router, '/admin', perkAdminRoutes({ perks: services.perks, adminToken }));
  serve(router, '/admin', constraintAdminRoutes({ constraints: services.constraints, adminToken }));
  serve(router, '/admin', identityAdminRoutes({ userTokens: services.userTokens, adminToken }));
}

/** `/services`: shared services for bots, the site plugin and brand back-ends, each feature's own routes. */
function servicesRouter({ deps, services, serve }: Parts, eligibility: readonly Route[]): Router {
  const { verifyBrandSignature } = services;
  const router = Router();
  const seedServices = seedServicesCompat({
    seed: services.seedCompat,
    clock: deps.clock,
    verifyBrandSignature,
    brandLimit: services.limits.brand,
    serviceDomain: deps.config.PTS_SERVICE_DOMAIN,
  });
  router.use(seedServices.adapters);
  serve(router, '/services', seedServices.routes);
  // Check-in, milestones and drop claims count against the event handler's brand limit (and reward through its
  // pipeline: their services are built over it in compose.ts).
  const signed = { verifyBrandSignature, brandLimit: services.limits.brand };
  serve(router, '/services', streakRoutes({ streaks: services.streaks, ...signed }));
  serve(
    router,
    '/services',
    accountRoutes({ accounts: services.accounts, verifyBrandSignature, confirmLimit: services.limits.linkConfirm }),
  );
  serve(
    router,
    '/services',
    communityRoutes({
      community: services.community,
      clock: deps.clock,
      verifyBrandSignature,
      setupFailures: services.limits.chatSetupFailures,
    }),
  );
  serve(router, '/services', leaderboardRoutes({ leaderboards: services.leaderboards, verifyBrandSignature }));
  serve(router, '/services', achievementRoutes({ achievements: services.achievements, verifyBrandSignature }));
  serve(router, '/services', tierRoutes({ tiers: services.tiers, verifyBrandSignature }));
  serve(router, '/services', referralRoutes({ referrals: services.referrals, verifyBrandSignature }));
  serve(router, '/services', balanceRoutes({ balances: services.balances, verifyBrandSignature }));
  serve(router, '/services', perkCatalogueRoutes({ perks: services.perks }));
  serve(router, '/services', redemptionRoutes({ redemption: services.redemption, verifyBrandSignature }));
  serve(router, '/services', eligibility);
  serve(router, '/services', dropRoutes({ drops: services.drops, ...signed }));
  return router;
}

/**
 * The brand portal (docs/portal.md): its JSON API (session + CSRF) and its built pages, under /portal; its
 * operator routes go on the admin router, after the others.
 */
function portalRouter({ deps, services, serve }: Parts, adminRouter: Router): Router {
  const { config } = deps;
  serve(adminRouter, '/admin', brandAdminRoutes({ brands: services.brandAdmin, adminToken: deps.adminToken }));
  const { portal } = services;
  const { auth, team } = portal;
  const publicUrl = config.PTS_PUBLIC_URL;
  serve(adminRouter, '/admin', portalAdminRoutes({ team, adminToken: deps.adminToken, publicUrl }));
  serve(adminRouter, '/admin', portalOperatorAdminRoutes({ team, adminToken: deps.adminToken, publicUrl }));
  const router = Router();
  router.use(portalSecurityHeaders);
  const api = Router();
  api.use(noStore);
  api.use(requireCsrf);
  serve(
    api,
    '/portal/api',
    portalRoutes({
      auth,
      team,
      brands: services.brandAdmin,
      signInFailures: services.limits.portalSignInFailures,
      resetRequests: services.limits.portalResetRequests,
      publicUrl,
    }),
  );
  serve(
    api,
    '/portal/api',
    portalOperatorRoutes({ auth, team, operators: portal.operators, brands: services.brandAdmin, publicUrl }),
  );
  serve(
    api,
    '/portal/api',
    portalIntegrationRoutes({
      auth,
      team,
      brands: services.brandAdmin,
      dns: services.dns,
      community: services.community,
      webhooks: services.webhooks,
      agentKeys: portal.agentKeys,
      publicUrl,
    }),
  );
  serve(api, '/portal/api', portalChatGroupRoutes({ auth, team, community: services.community }));
  serve(api, '/portal/api', portalShopifyRoutes({ auth, team, shopify: services.shopify, publicUrl }));
  const { payments, relayRecords } = services;
  serve(api, '/portal/api', portalBillingRoutes({ auth, team, payments, relayRecords, publicUrl }));
  serve(api, '/portal/api', portalDashboardRoutes({ auth, team, analytics: portal.analytics }));
  const perkNftAddress = relayContractsOf(deps).perkNft;
  const { perks, constraints, members, community, drops, streaks, achievements } = services;
  serve(api, '/portal/api', portalPerkRoutes({ auth, team, perks, constraints, perkNftAddress, clock: deps.clock }));
  serve(api, '/portal/api', portalMemberRoutes({ auth, team, members, reversals: services.reversals }));
  serve(api, '/portal/api', portalCampaignRoutes({ auth, team, community, drops }));
  serve(api, '/portal/api', portalEngagementRoutes({ auth, team, streaks, achievements }));
  serve(
    adminRouter,
    '/admin',
    memberAdminRoutes({ members: services.members, reversals: services.reversals, adminToken: deps.adminToken }),
  );
  serve(api, '/portal/api', portalTierRoutes({ auth, team, tiers: services.tiers }));
  router.use('/api', api);
  router.use(portalStaticRouter(config.PTS_PORTAL_DIR ?? PORTAL_DIST_DIR));
  return router;
}

/** Every host's own: `/health`, `/metrics` and the identity provider's `/.well-known/jwks.json`. */
function operationsRouter({ deps, services, serve }: Parts, routes: () => string[]): Router {
  const { config, logger } = deps;
  const router = Router();
  serve(
    router,
    '',
    healthRoutes({
      pingDatabase: deps.pingDatabase,
      chain: deps.chain,
      clock: deps.clock,
      config,
      wallets: deps.wallets,
      dbKind: deps.dbKind,
      logger,
      routes,
      serviceName: SERVICE_NAME,
      version: SERVICE_VERSION,
    }),
  );
  router.use(
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
          return services.rewardStatuses();
        }
      },
      logger,
    }),
  );
  serve(router, '', jwksRoutes({ issuer: deps.tokenIssuer }));
  return router;
}

/** `/api/v1` (REST, one route per tool) and `/mcp` (MCP over streamable HTTP), over the composed agent surface. */
function mountAgentApi(app: Express, { deps, services }: Parts): void {
  const { agent, limits } = services;
  const { clock, logger } = deps;
  app.use(
    '/api/v1',
    createAgentRouter({
      clock,
      logger,
      limits,
      signedReplies: services.signedReplies,
      tools: agent.tools,
      authenticate: agent.authenticate,
      recordSignature: agent.recordSignature,
      noteKeyUsed: agent.noteKeyUsed,
    }),
  );
  // MCP over streamable HTTP (docs/agent-api/converse-mcp.md): each POST agent-signed, limited and recorded.
  app.use(
    createMcpRouter({
      clock,
      logger,
      listTools: () => agent.tools,
      verifyBrandKey: agent.verifyBrandKey,
      serviceDomain: deps.config.PTS_SERVICE_DOMAIN,
      authenticate: async (req, res) => {
        const auth = await agent.authenticate(req);
        if (!auth)
          throw new AppError(
            'UNAUTHORIZED',
            'POST /mcp needs an agent signature (X-PTS-Agent-Key, X-PTS-Timestamp, X-PTS-Signature)',
          );
        await limits.agentKey(auth.principal.ratePerMinute).consume(res, auth.principal.keyId);
        await agent.recordSignature(req, auth.claim);
        return auth.principal;
      },
    }),
  );
}
