import {
  activityParamsSchema,
  activityQuerySchema,
  activityResponseSchema,
  type Clock,
  errorEnvelopeSchema,
  leaderboardParamsSchema,
  leaderboardQuerySchema,
  leaderboardResponseSchema,
} from '@pts/shared';
import { Router } from 'express';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { readActivity, readLeaderboard } from './leaderboards.service.ts';

export interface LeaderboardsRouterDeps {
  db: Database;
  logger: Logger;
  clock: Clock;
  verifyBrandSignature: BrandSignatureVerifier;
}

/**
 * `GET /leaderboard/:brandId` (public; a brand-signed request also sees full identifiers) and
 * `GET /activity/:brandId/:userIdentifier` (brand-signed), mounted under `/services`.
 */
export function createLeaderboardsRouter(deps: LeaderboardsRouterDeps): Router {
  const router = Router();

  router.get('/leaderboard/:brandId', async (req, res) => {
    const { brandId } = parseInput(leaderboardParamsSchema, req.params, 'path');
    const query = parseInput(leaderboardQuerySchema, req.query, 'query');
    const signed = (await deps.verifyBrandSignature(req, brandId)) !== undefined;
    await requireBrandExists(deps.db, brandId);
    const result = await readLeaderboard(
      deps.db,
      {
        brandId,
        metric: query.metric,
        period: query.period,
        limit: query.limit,
        platform: query.platform,
        user: query.user,
        revealIdentifiers: signed,
        logger: deps.logger,
      },
      deps.clock.now(),
    );
    res.setHeader('Cache-Control', signed ? 'no-store' : 'public, max-age=15');
    res.json({
      success: true,
      leaderboard: result.leaderboard,
      metric: query.metric,
      period: query.period,
      total: result.total,
      platform: query.platform ?? null,
      periodStart: result.periodStart,
      ...(query.user !== undefined ? { me: result.me } : {}),
    });
  });

  router.get('/activity/:brandId/:userIdentifier', async (req, res) => {
    const { brandId, userIdentifier } = parseInput(activityParamsSchema, req.params, 'path');
    const query = parseInput(activityQuerySchema, req.query, 'query');
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Reading a user’s activity');
    const page = await readActivity(deps.db, {
      brandId,
      userKey: userIdentifier.toLowerCase(),
      limit: query.limit,
      before: query.before,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.json({ success: true, brandId, userIdentifier: userIdentifier.toLowerCase(), ...page });
  });

  return router;
}

/** OpenAPI entries of the leaderboard and activity routes. */
export function registerLeaderboardDocs(docs: ApiDocs): void {
  docs.register({
    method: 'get',
    path: '/services/leaderboard/:brandId',
    tags: ['engagement'],
    summary: 'Leaderboard: tokens earned, streak, activity or claims, by period',
    description:
      'Public. Periods are UTC calendar periods (weeks start on Monday); `week|month|all` and ' +
      '`daily|weekly|monthly|all_time` are both accepted. Ties share a rank. Public answers mask emails; a ' +
      "brand-signed request sees full identifiers. `user` adds the caller's own entry as `me`.",
    request: { params: leaderboardParamsSchema, query: leaderboardQuerySchema },
    responses: {
      200: { description: 'The board', schema: leaderboardResponseSchema },
      400: { description: 'Unknown metric or period, limit out of 1–100', schema: errorEnvelopeSchema },
      404: { description: 'No such brand', schema: errorEnvelopeSchema },
    },
  });
  docs.register({
    method: 'get',
    path: '/services/activity/:brandId/:userIdentifier',
    tags: ['engagement'],
    summary: "A user's activity with a brand, newest first",
    description: 'Earned rewards, perk claims and spending; page with `before=<nextCursor>`.',
    request: { params: activityParamsSchema, query: activityQuerySchema },
    responses: {
      200: { description: 'One page of activity', schema: activityResponseSchema },
      400: { description: 'Bad identifier or paging', schema: errorEnvelopeSchema },
      401: { description: 'Unsigned or badly signed', schema: errorEnvelopeSchema },
    },
    security: ['brandSignature'],
  });
}
