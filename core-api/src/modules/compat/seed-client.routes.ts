import {
  AppError,
  type Clock,
  seedClaimDropRequestSchema,
  seedCreateDropRequestSchema,
  seedLeaderboardStatsRequestSchema,
  seedThirdPartyEventRequestSchema,
} from '@pts/shared';
import type { Request, Response, Router } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { parseInput } from '../../http/validate.ts';
import type { SeedCompatService } from './compat.service.ts';
import { asyncHandler, decorate, isObject, isSeedRequest, markSeedRequest } from './edge.ts';
import { seedMemberIdentity } from './seed-client.service.ts';

// The seed MCP server's bodies on pts's own service paths (issue 25, docs/compatibility.md): recognised by
// their field names, mapped onto pts's request for the same route (which verifies the brand signature over
// the bytes the client sent, and applies every rule and limit), and answered with the seed's fields added.

export interface SeedClientServicesDeps {
  seed: SeedCompatService;
  clock: Clock;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit?: RateLimit | undefined;
  /** Domain of synthetic member identities (PTS_SERVICE_DOMAIN). */
  serviceDomain: string;
}

const SEED_BODY_LIMIT_BYTES = 8 * 1024;

/** Registers the adapters on the `/services` adapter router and returns the route pts lacked. */
export function seedClientServices(adapters: Router, deps: SeedClientServicesDeps): Route[] {
  // create_drop: `reward`, `maxClaims`, `expiresInSeconds` are the drop's amount, supply and window; the
  // seed's event type names the drop (claims are recorded as pts's drop_claim, like every drop).
  adapters.post(
    '/drops/create',
    jsonBody(SEED_BODY_LIMIT_BYTES),
    decorate((body) => {
      const drop = body.drop as { dropId: string; endsAt: string };
      return { dropId: drop.dropId, expiresAt: drop.endsAt };
    }),
    (req, _res, next) => {
      const body = req.body;
      if (isObject(body) && body.amount === undefined && body.reward !== undefined) {
        const seed = parseInput(seedCreateDropRequestSchema, body);
        req.body = {
          brandId: seed.brandId,
          name: seed.eventType,
          amount: seed.reward,
          totalSupply: seed.maxClaims,
          perUserLimit: 1,
          endsAt: new Date(deps.clock.now().getTime() + seed.expiresInSeconds * 1000).toISOString(),
        };
      }
      next();
    },
  );

  // claim_drop: the drop id names the brand (whose key must sign), the platform user names the member.
  adapters.post(
    '/drops/claim',
    jsonBody(SEED_BODY_LIMIT_BYTES),
    decorate((body) => ({ reward: body.amount, remainingClaims: body.remaining, alreadyClaimed: false })),
    asyncHandler(async (req, _res, next) => {
      const body = req.body;
      if (isObject(body) && body.platformUserId !== undefined && body.userIdentifier === undefined) {
        const seed = parseInput(seedClaimDropRequestSchema, body);
        const brandId = await deps.seed.dropBrand(seed.dropId);
        if (!brandId) throw new AppError('NOT_FOUND', `Drop ${seed.dropId} does not exist`, { field: 'dropId' });
        req.body = {
          brandId,
          dropId: seed.dropId,
          userIdentifier: seedMemberIdentity(seed.platform, seed.platformUserId, deps.serviceDomain, 'platformUserId'),
          metadata: { platform: seed.platform },
        };
      }
      next();
    }),
  );

  // process_third_party_event: `sourceBot` is the integration, `eventType` its event, `targetUserId` the
  // member on `platform`. The answer's `reward` is the seed's number (pts's own body keeps its object).
  adapters.post(
    '/integrations/process',
    jsonBody(SEED_BODY_LIMIT_BYTES),
    decorate((body, _req, res) =>
      isSeedRequest(res) ? { processed: true, reward: body.rewardAmount, eventTriggered: body.eventType } : {},
    ),
    (req, res, next) => {
      const body = req.body;
      if (isObject(body) && body.sourceBot !== undefined && body.integration === undefined) {
        const seed = parseInput(seedThirdPartyEventRequestSchema, body);
        req.body = {
          brandId: seed.brandId,
          integration: seed.sourceBot,
          event: seed.eventType,
          userEmail: seedMemberIdentity(seed.platform, seed.targetUserId, deps.serviceDomain, 'targetUserId'),
          metadata: {
            ...seed.metadata,
            platform: seed.platform,
            ...(seed.level !== undefined ? { level: seed.level } : {}),
            ...(seed.achievement !== undefined ? { achievement: seed.achievement } : {}),
            ...(seed.rawMessage !== undefined ? { raw_message: seed.rawMessage } : {}),
          },
        };
        markSeedRequest(res);
      }
      next();
    },
  );

  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };
  return [
    defineRoute({
      method: 'post',
      path: '/leaderboard/update-stats',
      tags: ['seed compatibility'],
      summary: 'A claim the seed client reports: keeps the display name, never counts or pays the amount',
      description:
        'pts ranks members by the rewards it recorded: `ptsAmount` is not added (record rewards through the ' +
        'event API). Answers `{success, updated, counted: false, message}`; `updated` is true when the display ' +
        'name changed.',
      security: ['brandSignature'],
      request: { body: seedLeaderboardStatsRequestSchema, bodyLimitBytes: SEED_BODY_LIMIT_BYTES },
      responses: {
        200: { description: '`{success, updated, counted, message}`' },
        400: failure('Invalid body'),
        401: failure('Missing, wrong or replayed brand signature'),
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Reporting leaderboard stats');
        return deps.seed.reportStats(body);
      },
    }),
  ];
}
