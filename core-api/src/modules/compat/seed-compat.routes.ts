import {
  AppError,
  type Clock,
  calculateRewardRequestSchema,
  identityKeyOf,
  logActivityRequestSchema,
  type PerkCatalogueItem,
  processIntegrationRequestSchema,
  seedEventEligibilityRequestSchema,
  UNLIMITED_CLAIMS,
  userBalanceRequestSchema,
} from '@pts/shared';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { parseInput } from '../../http/validate.ts';
import type { BalanceService } from '../balances/balances.service.ts';
import type { SeedCompatService } from './compat.service.ts';
import { asyncHandler, decorate, isObject, isSeedRequest, type Json, markSeedRequest, rewriteQuery } from './edge.ts';
import { seedClientServices } from './seed-client.routes.ts';

// The seed system's vocabulary, accepted at the route edge (docs/compatibility.md). Each adapter below either
// maps a seed request onto pts's own (body fields, query values, an alias path) before the real router runs,
// or adds the seed's field names to pts's answer. pts's own shapes are never changed: adapters only add. The
// one exception is a request only a seed client sends (recognised by its vocabulary, `markSeedRequest`): its
// answer may give a field the seed's type where pts's differs (the catalogue's `available`).
// Every path stays brand-signed where pts signs: an adapter never verifies less than the route it feeds.

const signed: ['brandSignature'] = ['brandSignature'];
const signedFailures = {
  400: failure('Invalid body'),
  401: failure('Missing, wrong or replayed brand signature'),
  404: failure('Unknown brand'),
};

// ---------------------------------------------------------------------------------------------- /pts-api

export interface SeedEventCompatDeps {
  seed: SeedCompatService;
  /** A member's balance, as `/services/balance` answers it. */
  balances: BalanceService;
  verifyBrandSignature: BrandSignatureVerifier;
  bodyLimitBytes: number;
  bulkBodyLimitBytes: number;
  /** The `/services` eligibility router: `/pts-api/check-eligibility` is answered by it. */
  eligibility: Router;
}

/**
 * Seed adapters and endpoints of the event host (`/pts-api`), both mounted before the events router: the
 * adapters map the seed's rule references onto pts's event requests; the routes are the seed's own endpoints.
 */
export function seedEventCompat(deps: SeedEventCompatDeps): { adapters: Router; routes: Route[] } {
  const adapters = Router();

  /** A rule's `eventId` where `eventType` is expected (as the field, or as the value of `eventType`). */
  const mapEventReference = async (brandId: unknown, item: unknown) => {
    if (!isObject(item) || typeof brandId !== 'string') return;
    const reference =
      typeof item.eventType === 'string' ? item.eventType : typeof item.eventId === 'string' ? item.eventId : undefined;
    if (reference === undefined) return;
    item.eventType = await deps.seed.eventTypeFor(brandId, reference);
    delete item.eventId;
  };

  adapters.post(
    '/manual-event',
    jsonBody(deps.bodyLimitBytes),
    asyncHandler(async (req, _res, next) => {
      if (isObject(req.body)) await mapEventReference(req.body.brandId, req.body);
      next();
    }),
  );
  adapters.post(
    '/bulk-events',
    jsonBody(deps.bulkBodyLimitBytes),
    asyncHandler(async (req, _res, next) => {
      const body = req.body;
      if (isObject(body) && Array.isArray(body.events)) {
        for (const item of body.events) await mapEventReference(isObject(item) ? item.brandId : undefined, item);
      }
      next();
    }),
  );

  const userBalance = async (
    req: Request,
    res: Response,
    { brandId, userEmail: identityKey }: z.output<typeof userBalanceRequestSchema>,
  ) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, "Reading a user's balance");
    const { walletAddress, balance, pending } = await deps.balances.read(identityKeyOf(identityKey));
    res.setHeader('Cache-Control', 'no-store');
    return { success: true, brandId, userEmail: identityKey, walletAddress, balance, pending };
  };
  const balanceResponses = {
    200: { description: '`{success, brandId, userEmail, walletAddress, balance, pending}`' },
    ...signedFailures,
  };
  const routes = [
    defineRoute({
      method: 'get',
      path: '/user-balance',
      tags: ['seed compatibility'],
      summary: "A user's balance by `userEmail`; as /services/balance",
      security: signed,
      request: { query: userBalanceRequestSchema },
      responses: balanceResponses,
      handle: ({ query, req, res }) => userBalance(req, res, query),
    }),
    defineRoute({
      method: 'post',
      path: '/user-balance',
      tags: ['seed compatibility'],
      summary: "A user's balance by `userEmail` (also `GET ?brandId=&userEmail=`); as /services/balance",
      security: signed,
      request: { body: userBalanceRequestSchema, bodyLimitBytes: 8 * 1024 },
      responses: balanceResponses,
      handle: ({ body, req, res }) => userBalance(req, res, body),
    }),
    defineRoute({
      method: 'post',
      path: '/check-eligibility',
      tags: ['seed compatibility'],
      summary:
        'Perk eligibility, as /services/perks/check-eligibility (seed body accepted there too); or event eligibility',
      description:
        '`{brandId, perkId, userAddress}` is public; the seed body `{brandId, perkId: <perk uuid>, userIdentifier, ' +
        'platform}` names a user and needs the brand signature. The seed MCP body `{brandId, eventType, userEmail}` ' +
        '(brand-signed) asks whether that event would earn now: `{eligible, reason?, cooldownEndsAt?, claimCount, ' +
        'maxClaims, rewardAmount}`, the event path’s own verdict.',
      // Read whatever the declared type, mapped from the seed's form, then checked by the eligibility route.
      before: [jsonBody(16 * 1024), eligibilityAlias(deps)],
      request: {
        body: z.object({ brandId: z.string(), perkId: z.union([z.number(), z.string()]) }).loose(),
        bodyReader: 'own',
        validateBody: false,
      },
      responses: { 200: { description: 'The verdict per constraint' }, ...signedFailures },
      handle: async ({ req, res }) => {
        const body = req.body;
        if (isObject(body) && body.perkId === undefined && body.eventType !== undefined) {
          const input = parseInput(seedEventEligibilityRequestSchema, body);
          await requireBrandSignature(
            deps.verifyBrandSignature,
            req,
            input.brandId,
            "Checking a user's event eligibility",
          );
          res.setHeader('Cache-Control', 'no-store');
          return deps.seed.eventEligibility(input);
        }
        return forward(deps.eligibility, '/perks/check-eligibility', req, res);
      },
    }),
  ];
  return { adapters, routes };
}

/**
 * Lets `router` answer the request as if it had been sent to `url`; settles when the answer is sent, and
 * rejects with the router's error (or NOT_FOUND when no route of it matched).
 */
function forward(router: Router, url: string, req: Request, res: Response): Promise<undefined> {
  req.url = url;
  return new Promise((resolve, reject) => {
    res.once('finish', () => resolve(undefined));
    res.once('close', () => resolve(undefined));
    router(req, res, (error?: unknown) => {
      reject(error ?? new AppError('NOT_FOUND', `No route answers ${req.method} ${url}`));
    });
  });
}

/**
 * The seed body of the eligibility check, `{brandId, perkId: <uuid>, userIdentifier, platform}`, becomes pts's
 * `{brandId, perkId, userAddress}`. Naming a user by identifier reveals whether they hold a wallet here, so that
 * form needs the brand signature (pts's own form, by wallet address, stays public as it is).
 */
function eligibilityAlias(deps: { seed: SeedCompatService; verifyBrandSignature: BrandSignatureVerifier }) {
  return asyncHandler(async (req, _res, next) => {
    const body = req.body;
    if (!isObject(body)) return next();
    const brandId = typeof body.brandId === 'string' ? body.brandId.trim().toLowerCase() : '';
    if (typeof body.perkId === 'string' && z.uuid().safeParse(body.perkId).success) {
      const perkId = await deps.seed.perkIdByUuid(brandId, body.perkId);
      if (perkId === undefined)
        throw new AppError('PERK_NOT_FOUND', `Perk ${body.perkId} does not exist for this brand`);
      body.perkId = Number(perkId);
    }
    if (body.userIdentifier !== undefined && body.userAddress === undefined) {
      const { userIdentifier: identityKey } = parseInput(
        z.object({ userIdentifier: userBalanceRequestSchema.shape.userEmail }),
        body,
      );
      await requireBrandSignature(
        deps.verifyBrandSignature,
        req,
        brandId,
        'Checking eligibility by user identifier (rather than wallet address)',
      );
      const walletAddress = await deps.seed.walletOf(identityKey);
      if (!walletAddress) {
        throw new AppError('NO_WALLET', `${identityKey} has no wallet yet: they earn one with their first reward`, {
          field: 'userIdentifier',
        });
      }
      body.userAddress = walletAddress;
    }
    delete body.userIdentifier;
    delete body.platform;
    next();
  });
}

// --------------------------------------------------------------------------------------------- /services

export interface SeedServicesCompatDeps {
  seed: SeedCompatService;
  clock: Clock;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit?: RateLimit | undefined;
  /** Domain of synthetic member identities (PTS_SERVICE_DOMAIN), as the bots name members. */
  serviceDomain: string;
}

const METRIC_UNITS: Record<string, [string, string]> = {
  pts_earned: ['pts', 'pts'],
  streak: ['day', 'days'],
  activity: ['activity', 'activities'],
  claims: ['claim', 'claims'],
};

/** `1250` → `1,250 pts` (the unit follows the board's metric). */
export function formatBoardValue(metric: string, value: number): string {
  const [one, many] = METRIC_UNITS[metric] ?? ['', ''];
  const unit = value === 1 ? one : many;
  return `${value.toLocaleString('en-US')}${unit ? ` ${unit}` : ''}`;
}

const SEED_PLATFORMS: Record<string, string | undefined> = { all: undefined, twitter: 'x' };

/** The seed's "unlimited" count (spec 2.3: -1 or 999999); the seed catalogue's `available` is a count, never -1. */
const SEED_UNLIMITED = UNLIMITED_CLAIMS[1];

/**
 * A catalogue perk as the seed demo reads it: `available` is the units left — 0 when the perk is inactive,
 * outside its redemption window or sold out, 999999 when its supply is unlimited. Every other field is pts's.
 */
export function seedCataloguePerk(perk: PerkCatalogueItem): Omit<PerkCatalogueItem, 'available'> & {
  available: number;
} {
  const left = perk.remainingSupply ?? SEED_UNLIMITED;
  return { ...perk, available: perk.available ? left : 0 };
}

const userStatsParamsSchema = z.object({
  brandId: userBalanceRequestSchema.shape.brandId,
  userIdentifier: userBalanceRequestSchema.shape.userEmail,
});

/**
 * Seed adapters of the shared services (`/services`), mounted before the feature routers (they add the seed's
 * field names to pts's answers), and the endpoints the seed clients call that pts had no route for.
 */
export function seedServicesCompat(deps: SeedServicesCompatDeps): { adapters: Router; routes: Route[] } {
  const adapters = Router();
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };

  // Streaks: the summary at the top level, as the seed answered.
  adapters.post(
    '/streak/record-activity',
    decorate((body) => {
      const streak = (body.streak ?? {}) as Json;
      return {
        isNewActivity: body.isNew,
        currentStreak: streak.currentStreak,
        multiplier: streak.multiplier,
        nextMilestone: streak.nextMilestone,
        unclaimedMilestones: streak.unclaimedMilestones,
        // Recording activity pays nothing by itself (check-ins and milestone claims do).
        reward: 0,
      };
    }),
  );
  adapters.get(
    '/streak/status/:brandId/:userIdentifier',
    decorate((body) => ({
      daysToNextMilestone: (body.nextMilestone as { daysRemaining?: number } | null)?.daysRemaining ?? null,
    })),
  );
  adapters.post(
    '/streak/claim-milestone',
    decorate((body) => ({ bonus: body.bonusPts })),
  );

  // Leaderboards: seed filter values, display names, formatted values, `rankings` and `userRank`.
  adapters.get('/leaderboard/:brandId', (req, _res, next) => {
    rewriteQuery(req, (params) => {
      const platform = params.get('platform')?.trim().toLowerCase();
      if (platform !== undefined && platform in SEED_PLATFORMS) {
        const mapped = SEED_PLATFORMS[platform];
        if (mapped) params.set('platform', mapped);
        else params.delete('platform');
      }
      if (!params.has('user')) {
        const user = params.get('userIdentifier') ?? params.get('userId') ?? params.get('userEmail');
        if (user) params.set('user', user);
      }
      params.delete('userIdentifier');
      params.delete('userId');
      params.delete('userEmail');
    });
    next();
  });
  adapters.get(
    '/leaderboard/:brandId',
    decorate((body) => {
      const metric = String(body.metric);
      const seedEntry = (entry: Json) => ({
        ...entry,
        displayName: entry.username,
        formattedValue: formatBoardValue(metric, Number(entry.value)),
      });
      const leaderboard = (body.leaderboard as Json[]).map(seedEntry);
      const me = isObject(body.me) ? seedEntry(body.me) : body.me;
      return {
        leaderboard,
        rankings: leaderboard,
        // The seed MCP server reads `userRank` whether or not it asked for a user: null when none was asked.
        userRank: isObject(body.me) ? body.me.rank : null,
        ...(body.me !== undefined ? { me } : {}),
      };
    }),
  );

  // Perks: `category=all` means every category. It is the seed demo's request, whose `available` is the units
  // left (a number) where pts answers a boolean: that request gets the seed's type (docs/compatibility.md).
  adapters.get('/perks/:brandId', (req, res, next) => {
    rewriteQuery(req, (params) => {
      if (params.get('category')?.trim().toLowerCase() === 'all') {
        params.delete('category');
        markSeedRequest(res);
      }
    });
    next();
  });
  adapters.get(
    '/perks/:brandId',
    decorate((body, _req, res) =>
      isSeedRequest(res) ? { perks: (body.perks as PerkCatalogueItem[]).map(seedCataloguePerk) } : {},
    ),
  );
  adapters.post('/perks/check-eligibility', jsonBody(16 * 1024), eligibilityAlias(deps));

  // Achievements: the seed's field names, and its progress path.
  adapters.get(
    '/achievements/:brandId/:userIdentifier',
    decorate((body) => ({
      achievements: (body.achievements as Json[]).map((a) => ({
        ...a,
        achievementType: a.type,
        currentProgress: a.progress,
        isUnlocked: a.unlocked,
      })),
    })),
  );
  adapters.post(
    '/achievements/update-progress',
    jsonBody(8 * 1024),
    decorate((body) => ({ achievementType: body.type, currentProgress: body.value })),
    (req, _res, next) => {
      const body = req.body;
      if (isObject(body)) {
        if (body.type === undefined && body.achievementType !== undefined) body.type = body.achievementType;
        if (body.increment === undefined && body.value === undefined && body.progress !== undefined) {
          body.increment = body.progress;
        }
        // The seed MCP server: `newValue` with `increment: true` adds it; otherwise it is the value reached.
        if (body.newValue !== undefined && (typeof body.increment === 'boolean' || body.increment === undefined)) {
          if (body.increment === true) body.increment = body.newValue;
          else {
            delete body.increment;
            if (body.value === undefined) body.value = body.newValue;
          }
          delete body.newValue;
        }
        delete body.achievementType;
        delete body.progress;
        delete body.platform;
      }
      req.url = '/achievements/progress';
      next();
    },
  );

  const routes = [
    ...seedClientServices(adapters, deps),
    defineRoute({
      method: 'post',
      path: '/achievements/update-progress',
      tags: ['seed compatibility'],
      summary: 'Achievement progress in the seed vocabulary, as /services/achievements/progress',
      description:
        '`achievementType` is accepted for `type` and `progress` for `increment`; the answer adds ' +
        '`achievementType` and `currentProgress`.',
      security: signed,
      request: { body: z.object({ brandId: z.string(), achievementType: z.string() }).loose() },
      responses: { 200: { description: 'Progress recorded' }, ...signedFailures },
      // Served by the adapter above, which hands the mapped request to the achievements route.
      documentOnly: true,
      handle: () => undefined,
    }),
    defineRoute({
      method: 'get',
      path: '/user-stats/:brandId/:userIdentifier',
      tags: ['seed compatibility'],
      summary: 'Earned, redeemed, streaks (per type), achievements and all-time rank of a user',
      security: signed,
      request: { params: userStatsParamsSchema },
      responses: { 200: { description: 'The stats' }, ...signedFailures },
      handle: async ({ params, req, res }) => {
        await requireSigned(req, res, params.brandId, "A user's stats");
        res.setHeader('Cache-Control', 'no-store');
        return deps.seed.userStats(params.brandId, params.userIdentifier);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/activity/log',
      tags: ['seed compatibility'],
      summary: 'Log an activity on the activity board (no reward); once per activityId',
      security: signed,
      request: { body: logActivityRequestSchema, bodyLimitBytes: 8 * 1024 },
      responses: { 200: { description: '`{success, logged}`' }, ...signedFailures },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Logging activity');
        return deps.seed.logActivity(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/reward/calculate',
      tags: ['seed compatibility'],
      summary: 'The reward an event would pay the user now: rule amount × daily streak multiplier',
      description: '`eventId` (a rule id) is accepted for `eventType`.',
      security: signed,
      // Validated after `eventId` is mapped onto `eventType`.
      request: { body: calculateRewardRequestSchema, bodyLimitBytes: 8 * 1024, validateBody: false },
      responses: {
        200: { description: '`{eventType, baseReward, currentStreak, multiplier, reward}`' },
        ...signedFailures,
      },
      handle: async ({ req, res }) => {
        const body =
          isObject(req.body) && req.body.eventType === undefined
            ? { ...req.body, eventType: req.body.eventId }
            : req.body;
        if (isObject(body)) delete body.eventId;
        const input = parseInput(calculateRewardRequestSchema, body);
        await requireSigned(req, res, input.brandId, 'Calculating a reward');
        return deps.seed.calculateReward(input);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/integrations/process',
      tags: ['seed compatibility'],
      summary:
        'Record the brand event a third-party event maps to (eventType, else <integration>_<event>, else <event>)',
      security: signed,
      request: { body: processIntegrationRequestSchema },
      responses: {
        200: { description: 'The manual-event answer plus integration and integrationEvent' },
        ...signedFailures,
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Processing an integration event');
        return deps.seed.processIntegration(body);
      },
    }),
  ];
  return { adapters, routes };
}

// ---------------------------------------------------------------------------------------------- /relayer

/** The seed relayer client sends the permit at the top level; pts reads it from `metadata.permit`. */
export function createSeedRelayerCompatRouter(options: { bodyLimitBytes: number }): Router {
  const router = Router();
  router.post('/relay', jsonBody(options.bodyLimitBytes), (req, _res, next) => {
    const body = req.body;
    if (isObject(body) && body.permit !== undefined) {
      const metadata = isObject(body.metadata) ? body.metadata : {};
      if (metadata.permit !== undefined && JSON.stringify(metadata.permit) !== JSON.stringify(body.permit)) {
        return next(
          new AppError('VALIDATION_ERROR', 'Send the permit once: permit and metadata.permit differ', {
            field: 'permit',
          }),
        );
      }
      body.metadata = { ...metadata, permit: body.permit };
      delete body.permit;
    }
    next();
  });
  return router;
}
