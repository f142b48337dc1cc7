import {
  checkinRequestSchema,
  checkinResponseSchema,
  claimMilestoneRequestSchema,
  claimMilestoneResponseSchema,
  recordActivityRequestSchema,
  recordActivityResponseSchema,
  streakSettingsParamsSchema,
  streakSettingsResponseSchema,
  streakStatusParamsSchema,
  streakStatusQuerySchema,
  streakStatusResponseSchema,
  updateStreakSettingsRequestSchema,
} from '@pts/shared';
import type { Request, Response } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { StreakService } from './streaks.service.ts';

export interface StreakRoutesDeps {
  streaks: StreakService;
  verifyBrandSignature: BrandSignatureVerifier;
  /** Per-brand request limit for signed traffic (the event handler's). */
  brandLimit?: RateLimit | undefined;
}

const BODY_LIMIT_BYTES = 8 * 1024;

const signed: ['brandSignature'] = ['brandSignature'];
const badSignature = failure('Missing, wrong or replayed brand signature');

/**
 * Streak and daily check-in services, mounted under `/services` (spec 4.3, 2.3): `POST /streak/record-activity`,
 * `GET /streak/status/:brandId/:userIdentifier`, `POST /streak/claim-milestone`, `POST /checkin`, and the
 * brand's settings at `/streak/settings/:brandId` (GET public, PUT signed). Everything but the settings read
 * needs a brand signature.
 */
export function streakRoutes(deps: StreakRoutesDeps): Route[] {
  /** A valid signature of the brand is required; the signature is recorded as used. */
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };

  return [
    defineRoute({
      method: 'post',
      path: '/streak/record-activity',
      summary: "Count a day of activity for a user's streak (spec 4.3)",
      description:
        'Counts at most one day per UTC day. The streak continues when the activity comes within the grace period ' +
        '(default 36 h) after the last; past it, held freezes bridge missed days (one each), else it restarts at 1. ' +
        'Pays nothing by itself: `isNew` says whether a new day was counted. `streakType` other than `daily` ' +
        '(e.g. `engagement`) is a streak of its own; only the daily streak has claimable milestones.',
      tags: ['streaks'],
      security: signed,
      request: { body: recordActivityRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Recorded', schema: recordActivityResponseSchema },
        400: failure('Invalid body'),
        401: badSignature,
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Recording activity');
        return deps.streaks.recordActivity(body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/streak/status/:brandId/:userIdentifier',
      summary: "A user's streak: current, longest, multiplier, milestones, freezes, checked in today",
      tags: ['streaks'],
      security: signed,
      request: { params: streakStatusParamsSchema, query: streakStatusQuerySchema },
      responses: {
        200: { description: 'Streak status', schema: streakStatusResponseSchema },
        400: failure('Invalid brandId or userIdentifier'),
        401: badSignature,
        404: failure('Unknown brand'),
      },
      handle: async ({ params, query, req, res }) => {
        await requireSigned(req, res, params.brandId, "A user's streak");
        res.setHeader('Cache-Control', 'no-store');
        return deps.streaks.status(params.brandId, params.userIdentifier, query.streakType);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/streak/claim-milestone',
      summary: 'Claim a reached streak milestone once; the bonus is minted through the event pipeline',
      description:
        'Needs an active `streak_milestone` rule (its amount is ignored: the bonus comes from the streak settings; ' +
        'its per-user and total limits apply). A milestone counts as reached when the longest streak reached it.',
      tags: ['streaks'],
      security: signed,
      request: { body: claimMilestoneRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Claimed', schema: claimMilestoneResponseSchema },
        400: failure(
          '`CLAIM_FAILED` with details.reason not_a_milestone, not_reached, already_claimed or reward_refused; or no rule',
        ),
        401: badSignature,
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Claiming a milestone');
        return deps.streaks.claimMilestone(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/checkin',
      summary: 'Daily check-in: once per user and UTC day, reward = daily_checkin rule amount × streak multiplier',
      description:
        'A repeat on the same UTC day answers `alreadyClaimed: true` and `reward: 0`. Needs an active ' +
        '`daily_checkin` rule; its cooldown is replaced by the UTC day, its per-user and total limits apply ' +
        '(a refused reward answers `reward: 0` with `rewardRefused`; the check-in still counts for the streak).',
      tags: ['streaks'],
      security: signed,
      request: { body: checkinRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Checked in (or already checked in today)', schema: checkinResponseSchema },
        400: failure('Invalid body, or no active daily_checkin rule'),
        401: badSignature,
        403: failure('Automation disabled for the brand'),
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(req, res, body.brandId, 'Checking in');
        return deps.streaks.checkIn(body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/streak/settings/:brandId',
      summary: "The brand's streak settings (grace, multipliers, milestones, freezes); public",
      tags: ['streaks'],
      request: { params: streakSettingsParamsSchema },
      responses: {
        200: { description: 'Settings', schema: streakSettingsResponseSchema },
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId } }) => {
        const { settings, custom } = await deps.streaks.settings(brandId);
        return { success: true, brandId, settings, custom };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/streak/settings/:brandId',
      summary: "Change some of the brand's streak settings",
      tags: ['streaks'],
      security: signed,
      request: {
        params: streakSettingsParamsSchema,
        body: updateStreakSettingsRequestSchema,
        bodyLimitBytes: BODY_LIMIT_BYTES,
      },
      responses: {
        200: { description: 'Saved', schema: streakSettingsResponseSchema },
        400: failure('Invalid settings'),
        401: badSignature,
        404: failure('Unknown brand'),
      },
      handle: async ({ params: { brandId }, body, req, res }) => {
        await requireSigned(req, res, brandId, 'Changing streak settings');
        const settings = await deps.streaks.updateSettings(brandId, body, 'brand-key');
        return { success: true, brandId, settings, custom: true };
      },
    }),
  ];
}
