import { AppError, checkEligibilityRequestSchema, reportChatRolesRequestSchema } from '@pts/shared';
import { Router } from 'express';
import type { AppServices } from '../compose.ts';
import type { AppDeps } from '../deps.ts';
import { requireBrandSignature } from '../http/brand-signature.ts';
import { jsonBody } from '../http/json-body.ts';
import { parseInput } from '../http/validate.ts';
import { createAccountsRouter } from './accounts/accounts.routes.ts';
import { createAchievementsRouter } from './achievements/achievements.routes.ts';
import { createBalancesRouter } from './balances/balances.routes.ts';
import { createCommunityServicesRouter } from './community/community.routes.ts';
import { saveChatRoles } from './constraints/chat-roles.ts';
import { createLeaderboardsRouter } from './leaderboards/leaderboards.routes.ts';
import { createPerkCatalogueRouter } from './perks/perks.routes.ts';
import { perkNotFound } from './perks/perks.service.ts';
import { createRedemptionRouter } from './perks/redemption.routes.ts';
import { createStreaksRouter } from './streaks/streaks.routes.ts';

const SERVICES_BODY_LIMIT_BYTES = 16 * 1024;

export type ServicesRouterDeps = Pick<
  AppDeps,
  'db' | 'clock' | 'logger' | 'config' | 'secrets' | 'perkChain' | 'constraints' | 'metrics' | 'minter' | 'wallets'
> &
  Pick<AppDeps, 'chain' | 'relayer' | 'publicClient'>;

/** The shared services the /services routes use (built once in compose.ts). */
export type ServicesRouterServices = Pick<AppServices, 'events' | 'verifyBrandSignature' | 'limits' | 'changes'>;

/**
 * Shared services for bots, the site plugin and brand backends, mounted at `/services` (event-handler role):
 * `GET /perks/:brandId` (catalogue), `POST /perks/check-eligibility`, `POST /chat-roles` (brand-signed).
 */
export function createServicesRouter(deps: ServicesRouterDeps, services: ServicesRouterServices): Router {
  const router = Router();
  const { verifyBrandSignature } = services;
  const ipLimit = services.limits.ip;

  // Check-in and milestones reward through the event handler's own pipeline, cache and brand limit.
  router.use(
    createStreaksRouter({
      db: deps.db,
      clock: deps.clock,
      logger: deps.logger,
      events: services.events,
      verifyBrandSignature,
      brandLimit: services.limits.brand,
    }),
  );
  router.use(
    createAccountsRouter({
      db: deps.db,
      clock: deps.clock,
      logger: deps.logger,
      wallets: deps.wallets,
      balanceOf: deps.perkChain?.balanceOf,
      verifyBrandSignature,
    }),
  );
  router.use(
    createCommunityServicesRouter({
      db: deps.db,
      clock: deps.clock,
      secrets: deps.secrets,
      verifyBrandSignature,
      changes: services.changes,
    }),
  );
  router.use(createLeaderboardsRouter({ db: deps.db, clock: deps.clock, logger: deps.logger, verifyBrandSignature }));
  router.use(createAchievementsRouter({ db: deps.db, clock: deps.clock, verifyBrandSignature }));
  router.use(
    createBalancesRouter({
      db: deps.db,
      clock: deps.clock,
      publicClient: deps.publicClient,
      rewardToken: deps.chain.contracts.rewardToken as `0x${string}`,
      verifyBrandSignature,
    }),
  );
  router.use(
    createPerkCatalogueRouter({ db: deps.db, clock: deps.clock, perkChain: deps.perkChain, logger: deps.logger }),
  );

  router.use(createRedemptionRouter({ ...deps, verifyBrandSignature }));

  router.post('/perks/check-eligibility', jsonBody(SERVICES_BODY_LIMIT_BYTES), async (req, res) => {
    await ipLimit.consume(res, req.ip ?? 'unknown');
    const input = parseInput(checkEligibilityRequestSchema, req.body);
    if (!deps.constraints) throw new AppError('SERVICE_UNAVAILABLE', 'Constraint checks are not configured here');
    const perkId = BigInt(input.perkId);
    const verdict = await deps.constraints.check({ collectionId: perkId, userAddress: input.userAddress });
    // A perk of another brand is reported as unknown to this brand.
    if (verdict.brandId !== input.brandId) throw perkNotFound(perkId);
    res.json({
      success: true,
      brandId: input.brandId,
      perkId: Number(perkId),
      userAddress: input.userAddress,
      eligible: verdict.eligible,
      results: verdict.results,
    });
  });

  router.post('/chat-roles', jsonBody(SERVICES_BODY_LIMIT_BYTES), async (req, res) => {
    const brandId = typeof req.body?.brandId === 'string' ? req.body.brandId.trim().toLowerCase() : '';
    await requireBrandSignature(verifyBrandSignature, req, brandId, 'Reporting chat roles');
    const input = parseInput(reportChatRolesRequestSchema, req.body);
    const saved = await saveChatRoles(deps, {
      brandId: input.brandId,
      platform: input.platform,
      guildId: input.guildId,
      userId: input.userId,
      roles: input.roles,
    });
    res.json({ success: true, refreshedAt: saved.refreshedAt.toISOString(), roles: saved.roles });
  });

  return router;
}
