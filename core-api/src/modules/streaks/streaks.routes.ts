import {
  AppError,
  checkinRequestSchema,
  checkinResponseSchema,
  claimMilestoneRequestSchema,
  claimMilestoneResponseSchema,
  errorEnvelopeSchema,
  recordActivityRequestSchema,
  recordActivityResponseSchema,
  streakSettingsParamsSchema,
  streakSettingsResponseSchema,
  streakStatusParamsSchema,
  streakStatusQuerySchema,
  streakStatusResponseSchema,
  updateStreakSettingsRequestSchema,
} from '@pts/shared';
import { type Request, type Response, Router } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import {
  checkIn,
  claimMilestone,
  getStreakStatus,
  loadStreakSettings,
  recordActivity,
  type StreakDeps,
  updateStreakSettings,
} from './streaks.service.ts';

export interface StreakRoutesDeps extends StreakDeps {
  verifyBrandSignature: BrandSignatureVerifier;
  /** Per-brand request limit for signed traffic (the event handler's). */
  brandLimit?: RateLimit | undefined;
}

const BODY_LIMIT_BYTES = 8 * 1024;

/**
 * Streak and daily check-in services, mounted under `/services` (spec 4.3, 2.3): `POST /streak/record-activity`,
 * `GET /streak/status/:brandId/:userIdentifier`, `POST /streak/claim-milestone`, `POST /checkin`, and the
 * brand's settings at `/streak/settings/:brandId` (GET public, PUT signed). Everything but the settings read
 * needs a brand signature.
 */
export function createStreaksRouter(deps: StreakRoutesDeps): Router {
  const router = Router();

  /** A valid signature of the brand is required; the signature is recorded as used. */
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };

  router.post('/streak/record-activity', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(recordActivityRequestSchema, req.body);
    await requireSigned(req, res, input.brandId, 'Recording activity');
    res.json(await recordActivity(deps, input));
  });

  router.get('/streak/status/:brandId/:userIdentifier', async (req, res) => {
    const { brandId, userIdentifier } = parseInput(streakStatusParamsSchema, req.params, 'path');
    const { streakType } = parseInput(streakStatusQuerySchema, req.query, 'query');
    await requireSigned(req, res, brandId, "A user's streak");
    res.setHeader('Cache-Control', 'no-store');
    res.json(await getStreakStatus(deps, brandId, userIdentifier, streakType));
  });

  router.post('/streak/claim-milestone', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(claimMilestoneRequestSchema, req.body);
    await requireSigned(req, res, input.brandId, 'Claiming a milestone');
    res.json(await claimMilestone(deps, input));
  });

  router.post('/checkin', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(checkinRequestSchema, req.body);
    await requireSigned(req, res, input.brandId, 'Checking in');
    res.json(await checkIn(deps, input));
  });

  router.get('/streak/settings/:brandId', async (req, res) => {
    const { brandId } = parseInput(streakSettingsParamsSchema, req.params, 'path');
    if (!(await deps.events.brands.get(brandId))) {
      throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, {
        field: 'brandId',
        value: brandId,
      });
    }
    const { settings, custom } = await loadStreakSettings(deps, brandId);
    res.json({ success: true, brandId, settings, custom });
  });

  router.put('/streak/settings/:brandId', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const { brandId } = parseInput(streakSettingsParamsSchema, req.params, 'path');
    const patch = parseInput(updateStreakSettingsRequestSchema, req.body);
    await requireSigned(req, res, brandId, 'Changing streak settings');
    const settings = await updateStreakSettings(deps, brandId, patch);
    res.json({ success: true, brandId, settings, custom: true });
  });

  return router;
}

/** Documents the streak services in the OpenAPI document. */
export function registerStreakDocs(docs: ApiDocs, prefix = '/services'): void {
  const failure = (description: string) => ({ description, schema: errorEnvelopeSchema });
  const signed = ['brandSignature' as const];
  docs.register({
    method: 'post',
    path: `${prefix}/streak/record-activity`,
    summary: "Count a day of activity for a user's streak (spec 4.3)",
    description:
      'Counts at most one day per UTC day. The streak continues when the activity comes within the grace period ' +
      '(default 36 h) after the last; past it, held freezes bridge missed days (one each), else it restarts at 1. ' +
      'Pays nothing by itself: `isNew` says whether a new day was counted. `streakType` other than `daily` ' +
      '(e.g. `engagement`) is a streak of its own; only the daily streak has claimable milestones.',
    tags: ['streaks'],
    security: signed,
    request: { body: recordActivityRequestSchema },
    responses: {
      200: { description: 'Recorded', schema: recordActivityResponseSchema },
      400: failure('Invalid body'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'get',
    path: `${prefix}/streak/status/:brandId/:userIdentifier`,
    summary: "A user's streak: current, longest, multiplier, milestones, freezes, checked in today",
    tags: ['streaks'],
    security: signed,
    request: { params: streakStatusParamsSchema, query: streakStatusQuerySchema },
    responses: {
      200: { description: 'Streak status', schema: streakStatusResponseSchema },
      400: failure('Invalid brandId or userIdentifier'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefix}/streak/claim-milestone`,
    summary: 'Claim a reached streak milestone once; the bonus is minted through the event pipeline',
    description:
      'Needs an active `streak_milestone` rule (its amount is ignored: the bonus comes from the streak settings; ' +
      'its per-user and total limits apply). A milestone counts as reached when the longest streak reached it.',
    tags: ['streaks'],
    security: signed,
    request: { body: claimMilestoneRequestSchema },
    responses: {
      200: { description: 'Claimed', schema: claimMilestoneResponseSchema },
      400: failure(
        '`CLAIM_FAILED` with details.reason not_a_milestone, not_reached, already_claimed or reward_refused; or no rule',
      ),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefix}/checkin`,
    summary: 'Daily check-in: once per user and UTC day, reward = daily_checkin rule amount × streak multiplier',
    description:
      'A repeat on the same UTC day answers `alreadyClaimed: true` and `reward: 0`. Needs an active ' +
      '`daily_checkin` rule; its cooldown is replaced by the UTC day, its per-user and total limits apply ' +
      '(a refused reward answers `reward: 0` with `rewardRefused`; the check-in still counts for the streak).',
    tags: ['streaks'],
    security: signed,
    request: { body: checkinRequestSchema },
    responses: {
      200: { description: 'Checked in (or already checked in today)', schema: checkinResponseSchema },
      400: failure('Invalid body, or no active daily_checkin rule'),
      401: failure('Missing, wrong or replayed brand signature'),
      403: failure('Automation disabled for the brand'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'get',
    path: `${prefix}/streak/settings/:brandId`,
    summary: "The brand's streak settings (grace, multipliers, milestones, freezes); public",
    tags: ['streaks'],
    request: { params: streakSettingsParamsSchema },
    responses: {
      200: { description: 'Settings', schema: streakSettingsResponseSchema },
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'put',
    path: `${prefix}/streak/settings/:brandId`,
    summary: "Change some of the brand's streak settings",
    tags: ['streaks'],
    security: signed,
    request: { params: streakSettingsParamsSchema, body: updateStreakSettingsRequestSchema },
    responses: {
      200: { description: 'Saved', schema: streakSettingsResponseSchema },
      400: failure('Invalid settings'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown brand'),
    },
  });
}
