import {
  AppError,
  calculateRewardRequestSchema,
  errorEnvelopeSchema,
  logActivityRequestSchema,
  processIntegrationRequestSchema,
  userBalanceRequestSchema,
} from '@pts/shared';
import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import { z } from 'zod';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import type { EventDeps } from '../events/events.service.ts';
import {
  calculateReward,
  eventTypeForReference,
  logActivity,
  processIntegration,
  readUserStats,
  type SeedCompatDeps,
} from './seed-compat.service.ts';

// The seed system's vocabulary, accepted at the route edge (docs/compatibility.md). Each adapter below either
// maps a seed request onto pts's own (body fields, query values, an alias path) before the real router runs,
// or adds the seed's field names to pts's answer. pts's own shapes are never changed: adapters only add.
// Every path stays brand-signed where pts signs: an adapter never verifies less than the route it feeds.

type Json = Record<string, unknown>;

/** Adds fields to a successful JSON answer of the route that runs next (errors pass untouched). */
function decorate(add: (body: Json, req: Request) => Json): RequestHandler {
  return (req, res, next) => {
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode < 400 && body && typeof body === 'object' && (body as Json).success === true) {
        return send({ ...(body as Json), ...add(body as Json, req) });
      }
      return send(body);
    };
    next();
  };
}

/** Rewrites the query string the next router sees (the signature covers the original URL, which stays). */
function rewriteQuery(req: Request, change: (params: URLSearchParams) => void): void {
  const [path, query = ''] = req.url.split('?', 2) as [string, string | undefined];
  const params = new URLSearchParams(query);
  change(params);
  const text = params.toString();
  req.url = text ? `${path}?${text}` : path;
}

const asyncHandler =
  (handler: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    handler(req, res, next).catch(next);
  };

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------- /pts-api

export interface SeedEventCompatDeps extends SeedCompatDeps {
  verifyBrandSignature: BrandSignatureVerifier;
  bodyLimitBytes: number;
  bulkBodyLimitBytes: number;
  readBalance(userIdentifier: string): Promise<{ walletAddress: string | null; balance: number; pending: number }>;
  /** The `/services` eligibility router: `/pts-api/check-eligibility` is answered by it. */
  eligibility: Router;
}

/** Seed adapters of the event host (`/pts-api`), mounted before the events router. */
export function createSeedEventCompatRouter(deps: SeedEventCompatDeps): Router {
  const router = Router();

  /** A rule's `eventId` where `eventType` is expected (as the field, or as the value of `eventType`). */
  const mapEventReference = async (brandId: unknown, item: unknown) => {
    if (!isObject(item) || typeof brandId !== 'string') return;
    const reference =
      typeof item.eventType === 'string' ? item.eventType : typeof item.eventId === 'string' ? item.eventId : undefined;
    if (reference === undefined) return;
    const cached = await deps.brands.get(brandId.trim());
    item.eventType = eventTypeForReference(cached, reference);
    delete item.eventId;
  };

  router.post(
    '/manual-event',
    jsonBody(deps.bodyLimitBytes),
    asyncHandler(async (req, _res, next) => {
      if (isObject(req.body)) await mapEventReference(req.body.brandId, req.body);
      next();
    }),
  );
  router.post(
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

  const userBalance = async (req: Request, res: Response, input: unknown) => {
    const { brandId, userEmail } = parseInput(userBalanceRequestSchema, input);
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, "Reading a user's balance");
    const balance = await deps.readBalance(userEmail);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, brandId, userEmail, ...balance });
  };
  router.get(
    '/user-balance',
    asyncHandler(async (req, res) => userBalance(req, res, req.query)),
  );
  router.post(
    '/user-balance',
    requireJson,
    jsonBody(8 * 1024),
    asyncHandler(async (req, res) => userBalance(req, res, req.body)),
  );

  router.post('/check-eligibility', jsonBody(16 * 1024), eligibilityAlias(deps), (req, res, next) => {
    req.url = '/perks/check-eligibility';
    deps.eligibility(req, res, next);
  });
  return router;
}

/**
 * The seed body of the eligibility check, `{brandId, perkId: <uuid>, userIdentifier, platform}`, becomes pts's
 * `{brandId, perkId, userAddress}`. Naming a user by identifier reveals whether they hold a wallet here, so that
 * form needs the brand signature (pts's own form, by wallet address, stays public as it is).
 */
function eligibilityAlias(deps: Pick<SeedCompatDeps, 'db'> & { verifyBrandSignature: BrandSignatureVerifier }) {
  return asyncHandler(async (req, _res, next) => {
    const body = req.body;
    if (!isObject(body)) return next();
    const brandId = typeof body.brandId === 'string' ? body.brandId.trim().toLowerCase() : '';
    if (typeof body.perkId === 'string' && z.uuid().safeParse(body.perkId).success) {
      const perk = await deps.db
        .selectFrom('perks')
        .select('id')
        .where('public_id', '=', body.perkId)
        .where('brand_id', '=', brandId)
        .executeTakeFirst();
      if (!perk) throw new AppError('PERK_NOT_FOUND', `Perk ${body.perkId} does not exist for this brand`);
      body.perkId = Number(perk.id);
    }
    if (body.userIdentifier !== undefined && body.userAddress === undefined) {
      const { userIdentifier } = parseInput(
        z.object({ userIdentifier: userBalanceRequestSchema.shape.userEmail }),
        body,
      );
      await requireBrandSignature(
        deps.verifyBrandSignature,
        req,
        brandId,
        'Checking eligibility by user identifier (rather than wallet address)',
      );
      const user = await deps.db
        .selectFrom('users')
        .select('wallet_address')
        .where('email', '=', userIdentifier)
        .executeTakeFirst();
      if (!user?.wallet_address) {
        throw new AppError('NO_WALLET', `${userIdentifier} has no wallet yet: they earn one with their first reward`, {
          field: 'userIdentifier',
        });
      }
      body.userAddress = user.wallet_address;
    }
    delete body.userIdentifier;
    delete body.platform;
    next();
  });
}

// --------------------------------------------------------------------------------------------- /services

export interface SeedServicesCompatDeps extends SeedCompatDeps {
  events: EventDeps;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit?: RateLimit | undefined;
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

/** Seed adapters of the shared services (`/services`), mounted before the feature routers. */
export function createSeedServicesCompatRouter(deps: SeedServicesCompatDeps): Router {
  const router = Router();
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };

  // Streaks: the summary at the top level, as the seed answered.
  router.post(
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
  router.get(
    '/streak/status/:brandId/:userIdentifier',
    decorate((body) => ({
      daysToNextMilestone: (body.nextMilestone as { daysRemaining?: number } | null)?.daysRemaining ?? null,
    })),
  );
  router.post(
    '/streak/claim-milestone',
    decorate((body) => ({ bonus: body.bonusPts })),
  );

  // Leaderboards: seed filter values, display names, formatted values, `rankings` and `userRank`.
  router.get('/leaderboard/:brandId', (req, _res, next) => {
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
  router.get(
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
        ...(body.me !== undefined ? { me, userRank: isObject(body.me) ? body.me.rank : null } : {}),
      };
    }),
  );

  // Perks: `category=all` means every category.
  router.get('/perks/:brandId', (req, _res, next) => {
    rewriteQuery(req, (params) => {
      if (params.get('category')?.trim().toLowerCase() === 'all') params.delete('category');
    });
    next();
  });
  router.post('/perks/check-eligibility', jsonBody(16 * 1024), eligibilityAlias(deps));

  // Achievements: the seed's field names, and its progress path.
  router.get(
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
  router.post(
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
        delete body.achievementType;
        delete body.progress;
      }
      req.url = '/achievements/progress';
      next();
    },
  );

  // Endpoints the seed clients call that pts had no route for.
  router.get(
    '/user-stats/:brandId/:userIdentifier',
    asyncHandler(async (req, res) => {
      const params = parseInput(
        z.object({
          brandId: userBalanceRequestSchema.shape.brandId,
          userIdentifier: userBalanceRequestSchema.shape.userEmail,
        }),
        req.params,
        'path',
      );
      await requireSigned(req, res, params.brandId, "A user's stats");
      res.setHeader('Cache-Control', 'no-store');
      res.json(await readUserStats(deps, params.brandId, params.userIdentifier));
    }),
  );
  router.post(
    '/activity/log',
    requireJson,
    jsonBody(8 * 1024),
    asyncHandler(async (req, res) => {
      const input = parseInput(logActivityRequestSchema, req.body);
      await requireSigned(req, res, input.brandId, 'Logging activity');
      res.json(await logActivity(deps, input));
    }),
  );
  router.post(
    '/reward/calculate',
    requireJson,
    jsonBody(8 * 1024),
    asyncHandler(async (req, res) => {
      const body =
        isObject(req.body) && req.body.eventType === undefined
          ? { ...req.body, eventType: req.body.eventId }
          : req.body;
      if (isObject(body)) delete body.eventId;
      const input = parseInput(calculateRewardRequestSchema, body);
      await requireSigned(req, res, input.brandId, 'Calculating a reward');
      res.json(await calculateReward(deps, input));
    }),
  );
  router.post(
    '/integrations/process',
    requireJson,
    jsonBody(16 * 1024),
    asyncHandler(async (req, res) => {
      const input = parseInput(processIntegrationRequestSchema, req.body);
      await requireSigned(req, res, input.brandId, 'Processing an integration event');
      res.json(await processIntegration(deps, input));
    }),
  );
  return router;
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

/** OpenAPI entries of the endpoints added for seed clients (the adapters of existing routes add fields only). */
export function registerSeedCompatDocs(docs: ApiDocs): void {
  const failure = (description: string) => ({ description, schema: errorEnvelopeSchema });
  const signed = ['brandSignature' as const];
  const common = {
    400: failure('Invalid body'),
    401: failure('Missing, wrong or replayed brand signature'),
    404: failure('Unknown brand'),
  };
  docs.register({
    method: 'post',
    path: '/pts-api/user-balance',
    tags: ['seed compatibility'],
    summary: "A user's balance by `userEmail` (also `GET ?brandId=&userEmail=`); as /services/balance",
    security: signed,
    request: { body: userBalanceRequestSchema },
    responses: { 200: { description: '`{success, brandId, userEmail, walletAddress, balance, pending}`' }, ...common },
  });
  docs.register({
    method: 'post',
    path: '/pts-api/check-eligibility',
    tags: ['seed compatibility'],
    summary: 'Perk eligibility, as /services/perks/check-eligibility (seed body accepted there too)',
    description:
      '`{brandId, perkId, userAddress}` is public; the seed body `{brandId, perkId: <perk uuid>, userIdentifier, ' +
      'platform}` names a user and needs the brand signature.',
    request: { body: z.object({ brandId: z.string(), perkId: z.union([z.number(), z.string()]) }).loose() },
    responses: { 200: { description: 'The verdict per constraint' }, ...common },
  });
  docs.register({
    method: 'get',
    path: '/services/user-stats/:brandId/:userIdentifier',
    tags: ['seed compatibility'],
    summary: 'Earned, redeemed, streaks (per type), achievements and all-time rank of a user',
    security: signed,
    responses: { 200: { description: 'The stats' }, ...common },
  });
  docs.register({
    method: 'post',
    path: '/services/activity/log',
    tags: ['seed compatibility'],
    summary: 'Log an activity on the activity board (no reward); once per activityId',
    security: signed,
    request: { body: logActivityRequestSchema },
    responses: { 200: { description: '`{success, logged}`' }, ...common },
  });
  docs.register({
    method: 'post',
    path: '/services/reward/calculate',
    tags: ['seed compatibility'],
    summary: 'The reward an event would pay the user now: rule amount × daily streak multiplier',
    description: '`eventId` (a rule id) is accepted for `eventType`.',
    security: signed,
    request: { body: calculateRewardRequestSchema },
    responses: { 200: { description: '`{eventType, baseReward, currentStreak, multiplier, reward}`' }, ...common },
  });
  docs.register({
    method: 'post',
    path: '/services/integrations/process',
    tags: ['seed compatibility'],
    summary: 'Record the brand event a third-party event maps to (eventType, else <integration>_<event>, else <event>)',
    security: signed,
    request: { body: processIntegrationRequestSchema },
    responses: { 200: { description: 'The manual-event answer plus integration and integrationEvent' }, ...common },
  });
}
