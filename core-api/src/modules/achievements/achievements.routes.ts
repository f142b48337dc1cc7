import {
  achievementsParamsSchema,
  achievementsResponseSchema,
  brandIdParamsSchema,
  type Clock,
  errorEnvelopeSchema,
  reportAchievementProgressRequestSchema,
  reportAchievementProgressResponseSchema,
  setAchievementDefinitionsRequestSchema,
} from '@pts/shared';
import { type Request, Router } from 'express';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody } from '../../http/json-body.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { advanceAchievements, definitionsFor, readAchievements, setDefinitions } from './achievements.service.ts';

export interface AchievementsRouterDeps {
  db: Database;
  clock: Clock;
  verifyBrandSignature: BrandSignatureVerifier;
}

const BODY_LIMIT_BYTES = 16 * 1024;

async function requireSigned(deps: AchievementsRouterDeps, req: Request, brandId: string): Promise<void> {
  await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Achievements');
}

/**
 * `GET /achievements/:brandId/:userIdentifier` and `POST /achievements/progress`, both brand-signed, mounted
 * under `/services`.
 */
export function createAchievementsRouter(deps: AchievementsRouterDeps): Router {
  const router = Router();

  router.get('/achievements/:brandId/:userIdentifier', async (req, res) => {
    const { brandId, userIdentifier } = parseInput(achievementsParamsSchema, req.params, 'path');
    await requireSigned(deps, req, brandId);
    // Linked identities share the account's achievements (docs/identity-linking.md).
    const achievements = await readAchievements(deps.db, brandId, await resolveAccountKey(deps.db, userIdentifier));
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      success: true,
      brandId,
      userIdentifier,
      achievements,
      unlockedCount: achievements.filter((a) => a.unlocked).length,
    });
  });

  router.post('/achievements/progress', jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const brandId = typeof req.body?.brandId === 'string' ? req.body.brandId.trim().toLowerCase() : '';
    await requireSigned(deps, req, brandId);
    const input = parseInput(reportAchievementProgressRequestSchema, req.body);
    await requireBrandExists(deps.db, input.brandId);
    const now = deps.clock.now();
    const userKey = await resolveAccountKey(deps.db, input.userIdentifier);
    const unlocked = await deps.db.transaction().execute((trx) =>
      advanceAchievements(
        trx,
        [
          {
            brandId: input.brandId,
            userKey,
            type: input.type,
            ...(input.increment !== undefined ? { increment: BigInt(input.increment) } : {}),
            ...(input.value !== undefined ? { value: BigInt(input.value) } : {}),
          },
        ],
        now,
      ),
    );
    const row = await deps.db
      .selectFrom('achievement_progress')
      .select('value')
      .where('brand_id', '=', input.brandId)
      .where('user_key', '=', userKey)
      .where('type', '=', input.type)
      .executeTakeFirst();
    res.json({
      success: true,
      type: input.type,
      value: Number(row?.value ?? 0),
      unlocked: unlocked.map((u) => ({ id: u.id, name: u.name, threshold: u.threshold })),
    });
  });

  return router;
}

/** `GET|PUT /brands/:brandId/achievements` (mounted at `/admin`, admin token): the brand's definitions. */
export function createAchievementsAdminRouter(deps: { db: Database; adminToken: string }): Router {
  const router = Router();
  router.get('/brands/:brandId/achievements', requireAdminToken(deps.adminToken), async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    await requireBrandExists(deps.db, brandId);
    const custom = await deps.db
      .selectFrom('achievement_definitions')
      .select('id')
      .where('brand_id', '=', brandId)
      .executeTakeFirst();
    res.json({ success: true, brandId, defaults: !custom, definitions: await definitionsFor(deps.db, brandId) });
  });
  router.put('/brands/:brandId/achievements', requireAdminToken(deps.adminToken), async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const input = parseInput(setAchievementDefinitionsRequestSchema, req.body ?? {});
    await requireBrandExists(deps.db, brandId);
    await setDefinitions(deps.db, brandId, input.definitions);
    res.json({
      success: true,
      brandId,
      defaults: input.definitions.length === 0,
      definitions: await definitionsFor(deps.db, brandId),
    });
  });
  return router;
}

/** OpenAPI entries of the achievement routes. */
export function registerAchievementDocs(docs: ApiDocs): void {
  docs.register({
    method: 'get',
    path: '/services/achievements/:brandId/:userIdentifier',
    tags: ['engagement'],
    summary: "A user's achievements with progress and unlocks",
    request: { params: achievementsParamsSchema },
    responses: {
      200: { description: 'Every achievement of the brand', schema: achievementsResponseSchema },
      401: { description: 'Unsigned or badly signed', schema: errorEnvelopeSchema },
    },
    security: ['brandSignature'],
  });
  docs.register({
    method: 'post',
    path: '/services/achievements/progress',
    tags: ['engagement'],
    summary: 'Report progress of an observed achievement type (messages, voice hours, level, custom)',
    description:
      'Tokens earned, rewards, streak days and good-morning counts are computed by the platform and cannot be ' +
      'reported. Each unlock is recorded once and announced as the `achievement.unlocked` webhook.',
    request: { body: reportAchievementProgressRequestSchema },
    responses: {
      200: { description: 'Progress recorded', schema: reportAchievementProgressResponseSchema },
      400: {
        description: 'Unknown or computed type; neither or both of increment and value',
        schema: errorEnvelopeSchema,
      },
      401: { description: 'Unsigned or badly signed', schema: errorEnvelopeSchema },
    },
    security: ['brandSignature'],
  });
}
