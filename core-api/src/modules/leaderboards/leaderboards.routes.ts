import {
  activityParamsSchema,
  activityQuerySchema,
  activityResponseSchema,
  leaderboardParamsSchema,
  leaderboardQuerySchema,
  leaderboardResponseSchema,
} from '@pts/shared';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { LeaderboardService } from './leaderboards.service.ts';

export interface LeaderboardsRouterDeps {
  leaderboards: LeaderboardService;
  verifyBrandSignature: BrandSignatureVerifier;
}

/**
 * `GET /leaderboard/:brandId` (public; a brand-signed request also sees full identifiers) and
 * `GET /activity/:brandId/:userIdentifier` (brand-signed), mounted under `/services`.
 */
export function leaderboardRoutes(deps: LeaderboardsRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/leaderboard/:brandId',
      tags: ['engagement'],
      summary: 'Leaderboard: tokens earned (confirmed on chain), streak, activity or claims, by period',
      description:
        "`pts_earned` ranks rewards whose mint is confirmed (the member ledger's `confirmedEarned`, " +
        'docs/ledger.md): a reward still minting counts once its mint is confirmed. Public. Periods are UTC calendar periods (weeks start on Monday); `week|month|all` and ' +
        '`daily|weekly|monthly|all_time` are both accepted. Ties share a rank. Public answers mask emails; a ' +
        "brand-signed request sees full identifiers. `user` adds the caller's own entry as `me`.",
      request: { params: leaderboardParamsSchema, query: leaderboardQuerySchema },
      responses: {
        200: { description: 'The board', schema: leaderboardResponseSchema },
        400: failure('Unknown metric or period, limit out of 1–100'),
        404: failure('No such brand'),
      },
      handle: async ({ params: { brandId }, query, req, res }) => {
        const signed = (await deps.verifyBrandSignature(req, brandId)) !== undefined;
        const result = await deps.leaderboards.read({
          brandId,
          metric: query.metric,
          period: query.period,
          limit: query.limit,
          platform: query.platform,
          user: query.user,
          revealIdentifiers: signed,
        });
        res.setHeader('Cache-Control', signed ? 'no-store' : 'public, max-age=15');
        return {
          success: true,
          leaderboard: result.leaderboard,
          metric: query.metric,
          period: query.period,
          total: result.total,
          platform: query.platform ?? null,
          periodStart: result.periodStart,
          ...(query.user !== undefined ? { me: result.me } : {}),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/activity/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A user's activity with a brand, newest first",
      description: 'Earned rewards, perk claims and spending; page with `before=<nextCursor>`.',
      security: ['brandSignature'],
      request: { params: activityParamsSchema, query: activityQuerySchema },
      responses: {
        200: { description: 'One page of activity', schema: activityResponseSchema },
        400: failure('Bad identifier or paging'),
        401: failure('Unsigned or badly signed'),
      },
      handle: async ({ params: { brandId, userIdentifier: identityKey }, query, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Reading a user’s activity');
        const page = await deps.leaderboards.activity({
          brandId,
          accountKey: identityKey.toLowerCase(),
          limit: query.limit,
          before: query.before,
        });
        res.setHeader('Cache-Control', 'no-store');
        return { success: true, brandId, userIdentifier: identityKey.toLowerCase(), ...page };
      },
    }),
  ];
}
