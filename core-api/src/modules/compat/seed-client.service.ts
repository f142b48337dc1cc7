import {
  AppError,
  emailSchema,
  IDENTITY_PLATFORMS,
  platformUserEmail,
  type seedEventEligibilityRequestSchema,
  type seedLeaderboardStatsRequestSchema,
} from '@pts/shared';
import type { z } from 'zod';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { findDisplayNames, sanitizeDisplayName, saveDisplayNames } from '../display-names/display-names.ts';
import { judgeEventEligibility } from '../events/events.service.ts';
import { eventTypeForReference, requireBrand, type SeedCompatDeps } from './seed-compat.service.ts';

// The seed MCP server's calls that need more than a renamed field (issue 25, docs/compatibility.md): each is
// answered by the service that owns the decision; nothing here pays, counts or judges on its own.

/**
 * The member a seed client names by platform and platform user id, as the bots name it
 * (`<platform>_<id>@<service domain>`); a user id that is an email is the member itself. The seed's
 * `twitter` is the X bot's `x`.
 */
export function seedMemberIdentity(
  platform: string,
  platformUserId: string,
  serviceDomain: string,
  field: string,
): string {
  const name = platform === 'twitter' ? 'x' : platform;
  if (!platformUserId.includes('@') && !(IDENTITY_PLATFORMS as readonly string[]).includes(name)) {
    throw new AppError(
      'VALIDATION_ERROR',
      `platform ${platform} has no member identities: use one of ${IDENTITY_PLATFORMS.join(', ')}, or send the member's email as ${field}`,
      { field: 'platform', value: platform },
    );
  }
  const identityKey = platformUserId.includes('@')
    ? platformUserId
    : platformUserEmail(name, platformUserId, serviceDomain);
  const parsed = emailSchema.safeParse(identityKey);
  if (!parsed.success) {
    throw new AppError(
      'VALIDATION_ERROR',
      `${field} ${platformUserId} does not name a member: send the platform user id`,
      {
        field,
      },
    );
  }
  return parsed.data;
}

/**
 * `POST /pts-api/check-eligibility` with an event type (the seed's `check_eligibility`): the event path's own
 * verdict (`judgeEventEligibility`: the same rule checks and `judgeEvent`), with the user's claims, the rule's
 * limit and amount, and when a cooldown ends.
 */
export async function checkEventEligibility(
  deps: SeedCompatDeps & { duplicateWindowSeconds: number },
  input: z.output<typeof seedEventEligibilityRequestSchema>,
) {
  const cached = await requireBrand(deps, input.brandId);
  const eventType = eventTypeForReference(cached, input.eventType);
  const { rule, claims, refusal } = await judgeEventEligibility(
    deps,
    { brandId: input.brandId, eventType, userEmail: input.userEmail },
    { duplicateWindowSeconds: deps.duplicateWindowSeconds },
  );
  const details = (refusal?.details ?? {}) as Record<string, unknown>;
  return {
    success: true as const,
    brandId: input.brandId,
    eventType,
    userEmail: input.userEmail,
    eligible: refusal === undefined,
    ...(refusal
      ? {
          reason: typeof details.reason === 'string' ? details.reason : refusal.code.toLowerCase(),
          message: typeof details.message === 'string' ? details.message : refusal.message,
        }
      : {}),
    ...(typeof details.nextEligibleAt === 'string' ? { cooldownEndsAt: details.nextEligibleAt } : {}),
    claimCount: claims,
    maxClaims: rule.max_claims_per_user,
    rewardAmount: Number(rule.reward_amount),
  };
}

export const REPORTED_STATS_NOT_COUNTED =
  'pts ranks members by the rewards it recorded itself, so ptsAmount was not added: record a reward with ' +
  'POST /pts-api/manual-event (or the event API your client uses); only the display name is kept';

/**
 * `POST /services/leaderboard/update-stats` (the seed's `update_leaderboard_stats`) reports a claim the
 * client already made through pts, whose boards count it from the ledger: counting the reported amount again
 * would rank it twice, and nothing here may pay. The display name is the one thing recorded.
 */
export async function recordReportedStats(
  deps: SeedCompatDeps,
  input: z.output<typeof seedLeaderboardStatsRequestSchema>,
) {
  await requireBrand(deps, input.brandId);
  const accountKey = await resolveAccountKey(deps.db, input.userIdentifier);
  const displayName = sanitizeDisplayName(input.displayName);
  let updated = false;
  if (displayName) {
    const stored = (await findDisplayNames(deps.db, input.brandId, [accountKey])).get(accountKey);
    if (stored !== displayName) {
      await saveDisplayNames(deps.db, [{ brandId: input.brandId, accountKey, displayName }], deps.clock.now());
      updated = true;
    }
  }
  return {
    success: true as const,
    brandId: input.brandId,
    userIdentifier: input.userIdentifier,
    updated,
    counted: false,
    message: REPORTED_STATS_NOT_COUNTED,
  };
}
