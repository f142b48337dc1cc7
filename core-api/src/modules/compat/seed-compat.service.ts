import {
  AppError,
  type Clock,
  checkinReward,
  EMPTY_STREAK,
  type EventResponse,
  type IdentityKey,
  identityKeyOf,
  type logActivityRequestSchema,
  type processIntegrationRequestSchema,
  viewStreak,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Database } from '../../db/database.ts';
import { resolveAccountKey, resolveMember } from '../accounts/accounts.service.ts';
import { readAchievements } from '../achievements/achievements.service.ts';
import { brandNotFound } from '../brands/brands.service.ts';
import { displayNameOf, saveDisplayNames } from '../display-names/display-names.ts';
import type { BrandCache, CachedBrand } from '../events/brand-cache.ts';
import type { RuleRecord } from '../events/events.repository.ts';
import type { EventService } from '../events/events.service.ts';
import { recordActivities } from '../leaderboards/activity.repository.ts';
import { readLeaderboard } from '../leaderboards/leaderboards.service.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';
import { DAILY_STREAK, findStreak } from '../streaks/streaks.repository.ts';
import { loadStreakSettings } from '../streaks/streaks.service.ts';

export interface SeedCompatDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  brands: BrandCache;
}

/**
 * The event type a seed client meant: the value itself when the brand has a rule of that type, else the type
 * of the brand's rule whose id it is (the seed Telegram bot sends a rule's `eventId`, `custom_…`).
 */
export function eventTypeForReference(cached: CachedBrand | undefined, reference: string): string {
  if (!cached || cached.rulesByType.has(reference)) return reference;
  for (const rule of cached.rulesByType.values()) if (rule.id === reference) return rule.event_type;
  return reference;
}

export async function requireBrand(deps: Pick<SeedCompatDeps, 'brands'>, brandId: string): Promise<CachedBrand> {
  const cached = await deps.brands.get(brandId);
  if (!cached) throw brandNotFound(brandId);
  return cached;
}

function requireActiveRule(cached: CachedBrand, eventType: string): RuleRecord {
  const rule = cached.rulesByType.get(eventType);
  if (!rule?.active) {
    const available = [...cached.rulesByType.values()].filter((r) => r.active).map((r) => r.event_type);
    throw new AppError(
      'UNKNOWN_EVENT_TYPE',
      `Event type ${eventType} is not configured (or not active) for this brand`,
      { field: 'eventType', value: eventType, availableEventTypes: available },
    );
  }
  return rule;
}

/** What a member can spend, as the balance service answers it (`modules/balances` readBalance). */
export type ReadBalance = (identityKey: IdentityKey) => Promise<{ balance: number; pending: number }>;

/**
 * `GET /services/user-stats/:brandId/:userIdentifier`: earned and redeemed (the member ledger), streaks,
 * achievements and rank, and the seed's `balance`, `lifetime`, `streak` (the daily one) read from the same
 * figures and the balance service.
 */
export async function readUserStats(
  deps: SeedCompatDeps & { readBalance: ReadBalance },
  brandId: string,
  identityKey: string,
) {
  await requireBrand(deps, brandId);
  const now = deps.clock.now();
  const accountKey = await resolveAccountKey(deps.db, identityKey);
  const board = await readLeaderboard(
    deps.db,
    {
      brandId,
      metric: 'pts_earned',
      period: 'all_time',
      limit: 1,
      user: identityKey,
      revealIdentifiers: true,
      logger: deps.logger,
    },
    now,
  );
  const ledger = await readMemberLedger(deps.db, brandId, await resolveMember(deps.db, accountKey));
  const { settings } = await loadStreakSettings(deps, brandId);
  const types = await deps.db
    .selectFrom('streaks')
    .select('streak_type')
    .where('brand_id', '=', brandId)
    .where('user_key', '=', accountKey)
    .orderBy('streak_type')
    .execute();
  const streaks = await Promise.all(
    types.map(async ({ streak_type: streakType }) => {
      const state = (await findStreak(deps.db, { brandId, accountKey, streakType })) ?? EMPTY_STREAK;
      const view = viewStreak(state, now, settings);
      return { streakType, currentStreak: view.current, longestStreak: state.longest, multiplier: view.multiplier };
    }),
  );
  const achievements = await readAchievements(deps.db, brandId, accountKey);
  const { balance } = await deps.readBalance(identityKeyOf(identityKey));
  // The member ledger's figures (docs/ledger.md): `earned` is its `confirmed` (what the pts_earned board ranks,
  // so earned and rank agree), `redeemed` its confirmed redemptions at the brand.
  const earned = Number(ledger.confirmed);
  const spent = Number(ledger.redeemed);
  const daily = streaks.find((streak) => streak.streakType === DAILY_STREAK);
  return {
    success: true as const,
    brandId,
    userIdentifier: identityKey,
    balance,
    lifetime: { earned, spent, claims: ledger.redemptions },
    streak: { current: daily?.currentStreak ?? 0, longest: daily?.longestStreak ?? 0 },
    earned,
    redeemed: spent,
    redemptions: ledger.redemptions,
    streaks,
    achievements: {
      unlocked: achievements.filter((a) => a.unlocked).length,
      total: achievements.length,
    },
    rank: board.me?.rank ?? null,
  };
}

/** `POST /services/reward/calculate`: what the event would pay the user now (rule amount × daily streak multiplier). */
export async function calculateReward(
  deps: SeedCompatDeps,
  input: { brandId: string; userIdentifier: string; eventType: string },
) {
  const cached = await requireBrand(deps, input.brandId);
  const eventType = eventTypeForReference(cached, input.eventType);
  const rule = requireActiveRule(cached, eventType);
  const { settings } = await loadStreakSettings(deps, input.brandId);
  const accountKey = await resolveAccountKey(deps.db, input.userIdentifier);
  const state =
    (await findStreak(deps.db, { brandId: input.brandId, accountKey, streakType: DAILY_STREAK })) ?? EMPTY_STREAK;
  const view = viewStreak(state, deps.clock.now(), settings);
  const baseReward = Number(rule.reward_amount);
  return {
    success: true as const,
    brandId: input.brandId,
    userIdentifier: input.userIdentifier,
    eventType,
    eventId: rule.id,
    baseReward,
    currentStreak: view.current,
    multiplier: view.multiplier,
    reward: checkinReward(baseReward, view.multiplier),
  };
}

/** `POST /services/activity/log`: an activity on the activity board, logged once per `activityId`. */
export async function logActivity(deps: SeedCompatDeps, input: z.output<typeof logActivityRequestSchema>) {
  await requireBrand(deps, input.brandId);
  const now = deps.clock.now();
  const accountKey = await resolveAccountKey(deps.db, input.userIdentifier);
  const counted = await deps.db.transaction().execute(async (trx) => {
    const displayName = displayNameOf(input.metadata);
    if (displayName) await saveDisplayNames(trx, [{ brandId: input.brandId, accountKey, displayName }], now);
    return recordActivities(
      trx,
      [
        {
          brandId: input.brandId,
          accountKey,
          platform: input.platform,
          kind: input.activityType,
          amount: 0n,
          // (kind, ref) is unique across brands: the brand is part of the ref.
          ref: input.activityId ? `${input.brandId}:${input.activityId}` : null,
          detail: input.metadata ?? {},
          occurredAt: now,
        },
      ],
      now,
    );
  });
  return {
    success: true as const,
    brandId: input.brandId,
    userIdentifier: input.userIdentifier,
    activityType: input.activityType,
    logged: counted.length > 0,
  };
}

/**
 * `POST /services/integrations/process`: records the brand event a third-party event maps to — `eventType`
 * when given, else the brand's rule `<integration>_<event>`, else `<event>` — through the event pipeline.
 * The request's brand signature was verified and recorded by the caller.
 */
export async function processIntegration(
  deps: SeedCompatDeps & { events: EventService },
  input: z.output<typeof processIntegrationRequestSchema>,
): Promise<EventResponse & { integration: string; integrationEvent: string }> {
  const cached = await requireBrand(deps, input.brandId);
  const normalize = (value: string) => value.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
  const tried = input.eventType
    ? [eventTypeForReference(cached, input.eventType)]
    : [normalize(`${input.integration}_${input.event}`), normalize(input.event)];
  const eventType = tried.find((type) => cached.rulesByType.get(type)?.active);
  if (!eventType) {
    throw new AppError(
      'UNKNOWN_EVENT_TYPE',
      `No active rule of this brand matches ${input.integration} event ${input.event}: create a rule for ${tried.join(' or ')}, or send eventType`,
      { field: 'eventType', tried },
    );
  }
  const response = await deps.events.recordEvent(
    {
      brandId: input.brandId,
      eventType,
      userEmail: input.userEmail,
      metadata: { ...input.metadata, integration: input.integration, integration_event: input.event },
      ...(input.value ? { value: input.value } : {}),
    },
    { signed: true },
  );
  return { ...response, integration: input.integration, integrationEvent: input.event };
}
