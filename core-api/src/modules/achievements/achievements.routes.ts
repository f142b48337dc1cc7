import {
  achievementDefinitionsResponseSchema,
  achievementsParamsSchema,
  achievementsResponseSchema,
  brandIdParamsSchema,
  reportAchievementProgressRequestSchema,
  reportAchievementProgressResponseSchema,
  setAchievementDefinitionsRequestSchema,
} from '@pts/shared';
import type { Request } from 'express';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { parseInput } from '../../http/validate.ts';
import type { AchievementService } from './achievements.service.ts';

export interface AchievementsRouterDeps {
  achievements: AchievementService;
  verifyBrandSignature: BrandSignatureVerifier;
}

const BODY_LIMIT_BYTES = 16 * 1024;

async function requireSigned(deps: AchievementsRouterDeps, req: Request, brandId: string): Promise<void> {
  await requireBrandSignature(deps.verifyBrandSignature, req, brandId, 'Achievements');
}

const badSignature = failure('Unsigned or badly signed');

/**
 * `GET /achievements/:brandId/:userIdentifier` and `POST /achievements/progress`, both brand-signed, mounted
 * under `/services`.
 */
export function achievementRoutes(deps: AchievementsRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/achievements/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A user's achievements with progress and unlocks",
      security: ['brandSignature'],
      request: { params: achievementsParamsSchema },
      responses: {
        200: { description: 'Every achievement of the brand', schema: achievementsResponseSchema },
        401: badSignature,
      },
      handle: async ({ params: { brandId, userIdentifier: identityKey }, req, res }) => {
        await requireSigned(deps, req, brandId);
        // Linked identities share the account's achievements (docs/identity-linking.md).
        const achievements = await deps.achievements.read(brandId, identityKey);
        res.setHeader('Cache-Control', 'no-store');
        return {
          success: true,
          brandId,
          userIdentifier: identityKey,
          achievements,
          unlockedCount: achievements.filter((a) => a.unlocked).length,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/achievements/progress',
      tags: ['engagement'],
      summary: 'Report progress of an observed achievement type (messages, voice hours, level, custom)',
      description:
        'Tokens earned, rewards, streak days and good-morning counts are computed by the platform and cannot be ' +
        'reported. Each unlock is recorded once and announced as the `achievement.unlocked` webhook.',
      security: ['brandSignature'],
      // The signature is checked before the body is validated.
      request: {
        body: reportAchievementProgressRequestSchema,
        bodyLimitBytes: BODY_LIMIT_BYTES,
        bodyReader: 'json-any-type',
        validateBody: false,
      },
      responses: {
        200: { description: 'Progress recorded', schema: reportAchievementProgressResponseSchema },
        400: failure('Unknown or computed type; neither or both of increment and value'),
        401: badSignature,
      },
      handle: async ({ req }) => {
        const brandId = typeof req.body?.brandId === 'string' ? req.body.brandId.trim().toLowerCase() : '';
        await requireSigned(deps, req, brandId);
        const input = parseInput(reportAchievementProgressRequestSchema, req.body);
        const { value, unlocked } = await deps.achievements.reportProgress({
          brandId: input.brandId,
          userIdentifier: input.userIdentifier,
          type: input.type,
          ...(input.increment !== undefined ? { increment: BigInt(input.increment) } : {}),
          ...(input.value !== undefined ? { value: BigInt(input.value) } : {}),
        });
        return {
          success: true,
          type: input.type,
          value: Number(value),
          unlocked: unlocked.map((u) => ({ id: u.id, name: u.name, threshold: u.threshold })),
        };
      },
    }),
  ];
}

/**
 * `GET|PUT /brands/:brandId/achievements` (mounted at `/admin`, whose router reads the body; admin token):
 * the brand's definitions.
 */
export function achievementAdminRoutes(deps: { achievements: AchievementService; adminToken: string }): Route[] {
  const admin = requireAdminToken(deps.adminToken);
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/achievements',
      tags: ['engagement'],
      summary: "The brand's achievement definitions (`defaults: true` while it has none of its own)",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema },
      responses: {
        200: { description: 'The definitions', schema: achievementDefinitionsResponseSchema },
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => {
        return { success: true, brandId, ...(await deps.achievements.definitions(brandId)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/achievements',
      tags: ['engagement'],
      summary: "Replace the brand's achievement definitions (an empty list restores the defaults)",
      security: ['adminToken'],
      before: [admin],
      request: { params: brandIdParamsSchema, body: setAchievementDefinitionsRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'The definitions now in force', schema: achievementDefinitionsResponseSchema },
        400: failure('Invalid definitions'),
        401: failure('No or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body }) => {
        const inForce = await deps.achievements.setDefinitions(brandId, body.definitions, 'admin');
        return { success: true, brandId, ...inForce };
      },
    }),
  ];
}
