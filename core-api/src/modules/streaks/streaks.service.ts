import { randomUUID } from 'node:crypto';
import {
  type AccountKey,
  AppError,
  type CheckinRequest,
  type CheckinResponse,
  type ClaimMilestoneRequest,
  type ClaimMilestoneResponse,
  type Clock,
  checkinReward,
  DEFAULT_STREAK_SETTINGS,
  EMPTY_STREAK,
  type EventRequest,
  isAppError,
  milestoneClaimRefusal,
  nextMilestone,
  type RecordActivityRequest,
  type RecordActivityResponse,
  recordStreakActivity,
  type StreakActivityResult,
  type StreakSettings,
  type StreakState,
  type StreakStatusResponse,
  type StreakSummary,
  streakMultiplier,
  streakSettingsSchema,
  type UpdateStreakSettingsRequest,
  unclaimedMilestones,
  utcDay,
  viewStreak,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { advanceAchievements } from '../achievements/achievements.service.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { brandNotFound } from '../brands/brands.service.ts';
import { displayNameOf, saveDisplayNames } from '../display-names/display-names.ts';
import type { CachedBrand } from '../events/brand-cache.ts';
import type { RuleRecord } from '../events/events.repository.ts';
import { type AcceptedEvent, type EventService, restateAward, type ServerAward } from '../events/events.service.ts';
import { enqueueWebhook } from '../webhooks/webhooks.outbox.ts';
import {
  DAILY_STREAK,
  deleteMilestoneClaim,
  eventExists,
  findCheckin,
  findMilestoneClaim,
  findStreak,
  findStreakSettings,
  findUserId,
  insertCheckin,
  insertMilestoneClaim,
  listClaimedMilestones,
  lockBrandSettings,
  lockStreak,
  readDailyStreakRows,
  type StreakKey,
  saveStreak,
  saveStreakSettings,
} from './streaks.repository.ts';

/** Event type of the daily check-in reward: the rule's amount × the streak multiplier. */
export const CHECKIN_EVENT_TYPE = 'daily_checkin';
/** Event type of a milestone bonus: the amount is the brand's milestone bonus. */
export const MILESTONE_EVENT_TYPE = 'streak_milestone';

/** What the streak services use: the database, the clock, and the event pipeline that pays rewards. */
export interface StreakDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  events: EventService;
  /** Who the audit log names for settings changes (default `admin`: the admin token, the CLI). */
  actor?: string;
}

/** The brand's settings (defaults where it stored none) and whether it stored its own. */
export async function loadStreakSettings(
  deps: Pick<StreakDeps, 'db' | 'logger'>,
  brandId: string,
): Promise<{ settings: StreakSettings; custom: boolean }> {
  return settingsFrom(deps, brandId, await findStreakSettings(deps.db, brandId));
}

/** The stored settings document over the defaults; the defaults (logged) when it is missing or invalid. */
function settingsFrom(
  deps: Pick<StreakDeps, 'logger'>,
  brandId: string,
  stored: Record<string, unknown> | undefined,
): { settings: StreakSettings; custom: boolean } {
  if (!stored) return { settings: structuredClone(DEFAULT_STREAK_SETTINGS) as StreakSettings, custom: false };
  const parsed = streakSettingsSchema.safeParse({ ...DEFAULT_STREAK_SETTINGS, ...stored });
  if (parsed.success) return { settings: parsed.data, custom: true };
  deps.logger.warn({ brandId, issues: parsed.error.issues }, 'stored streak settings are invalid; using the defaults');
  return { settings: structuredClone(DEFAULT_STREAK_SETTINGS) as StreakSettings, custom: false };
}

/** A member's daily streak at one brand, as readDailyStreaks gives it (getStreakStatus's daily fields). */
export interface DailyStreakView {
  currentStreak: number;
  longestStreak: number;
  multiplier: number;
  checkedInToday: boolean;
  lapsed: boolean;
  lastActivityAt: string | null;
  streakExpiresAt: string | null;
}

/**
 * The account's daily streak at each of `brandIds` (existing brands; `accountKey` already resolved) in one
 * database round trip, with getStreakStatus's rules: what the agent tools show of a member across brands.
 */
export async function readDailyStreaks(
  deps: Pick<StreakDeps, 'db' | 'clock' | 'logger'>,
  brandIds: string[],
  accountKey: AccountKey,
): Promise<Map<string, DailyStreakView>> {
  const now = deps.clock.now();
  const rows = await readDailyStreakRows(deps.db, brandIds, accountKey, utcDay(now));
  const views = new Map<string, DailyStreakView>();
  for (const row of rows) {
    const { settings } = settingsFrom(deps, row.brandId, row.settings);
    const current = row.state ?? EMPTY_STREAK;
    const view = viewStreak(current, now, settings);
    const summary = summarize(current, row.claimed, settings, now);
    views.set(row.brandId, {
      currentStreak: summary.currentStreak,
      longestStreak: current.longest,
      multiplier: summary.multiplier,
      checkedInToday: row.checkedInOn,
      lapsed: view.lapsed,
      lastActivityAt: current.lastActivityAt?.toISOString() ?? null,
      streakExpiresAt: view.expiresAt?.toISOString() ?? null,
    });
  }
  return views;
}

/**
 * Changes some of the brand's settings; the result must still be valid as a whole. The read, merge and
 * write happen under the brand's row lock, so two concurrent changes of different fields both hold. The
 * audit entry (actor `deps.actor`) names the fields sent and, under `previous`, their values before.
 * Every reader loads the settings from the database, so the change holds at once on every replica.
 */
export async function updateStreakSettings(
  deps: StreakDeps,
  brandId: string,
  patch: UpdateStreakSettingsRequest,
): Promise<StreakSettings> {
  await requireBrand(deps, brandId);
  return deps.db.transaction().execute(async (trx) => {
    await lockBrandSettings(trx, brandId);
    const { settings } = settingsFrom(deps, brandId, await findStreakSettings(trx, brandId));
    const merged = streakSettingsSchema.safeParse({ ...settings, ...patch });
    if (!merged.success) {
      const errors = merged.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
      throw new AppError('VALIDATION_ERROR', `Invalid streak settings: ${errors.join('; ')}`, { errors });
    }
    const previous = Object.fromEntries(Object.keys(patch).map((key) => [key, settings[key as keyof StreakSettings]]));
    await saveStreakSettings(trx, brandId, merged.data, deps.clock.now());
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'streak.settings',
      subject: brandId.toLowerCase(),
      details: { ...patch, previous },
      at: deps.clock.now(),
    });
    return merged.data;
  });
}

async function requireBrand(deps: StreakDeps, brandId: string): Promise<CachedBrand> {
  const cached = await deps.events.brands.get(brandId);
  if (!cached) throw brandNotFound(brandId);
  return cached;
}

function summarize(state: StreakState, claimed: number[], settings: StreakSettings, now: Date): StreakSummary {
  const view = viewStreak(state, now, settings);
  return {
    currentStreak: view.current,
    multiplier: view.multiplier,
    nextMilestone: nextMilestone(view.current, state.longest, settings),
    unclaimedMilestones: unclaimedMilestones(state.longest, claimed, settings),
  };
}

/**
 * Applies one activity under the streak row lock and writes it. Milestones reached for the first time are
 * announced with a `streak.milestone` webhook in the same transaction.
 */
async function applyActivity(
  trx: Kysely<DB>,
  key: StreakKey,
  platform: string,
  settings: StreakSettings,
  now: Date,
): Promise<StreakActivityResult> {
  const locked = await lockStreak(trx, key, now);
  const result = recordStreakActivity(locked, now, settings);
  await saveStreak(trx, key, result.state, platform, now);
  // Streak achievements follow the longest daily streak (a high-water mark), in the same transaction.
  if ((key.streakType ?? DAILY_STREAK) === DAILY_STREAK) {
    await advanceAchievements(
      trx,
      [{ brandId: key.brandId, accountKey: key.accountKey, type: 'streak_days', value: BigInt(result.state.longest) }],
      now,
    );
  }
  if (result.milestonesReached.length > 0) {
    const userId = (await findUserId(trx, key.accountKey)) ?? key.accountKey;
    for (const milestone of result.milestonesReached) {
      await enqueueWebhook(trx, {
        brandId: key.brandId,
        type: 'streak.milestone',
        data: {
          brandId: key.brandId,
          userId,
          email: key.accountKey,
          streakType: key.streakType ?? DAILY_STREAK,
          streakLength: result.state.current,
          milestone: milestone.days,
          timestamp: now.getTime(),
        },
        at: now,
      });
    }
  }
  return result;
}

/**
 * Milestones claimed on the streak of `key`. Only the daily streak's milestones are claimable
 * (`/streak/claim-milestone`); other streak types count as having every milestone claimed, so they never
 * announce bonuses nobody can claim.
 */
function claimedMilestones(db: Kysely<DB>, key: StreakKey, settings: StreakSettings): Promise<number[]> {
  if ((key.streakType ?? DAILY_STREAK) !== DAILY_STREAK) return Promise.resolve(settings.milestones.map((m) => m.days));
  return listClaimedMilestones(db, key);
}

/** Keeps the name the client sent (`metadata.displayName`) for the brand's leaderboards. */
async function saveDisplayName(
  trx: Kysely<DB>,
  key: StreakKey,
  metadata: Record<string, unknown> | undefined,
  now: Date,
): Promise<void> {
  const displayName = displayNameOf(metadata);
  if (displayName) await saveDisplayNames(trx, [{ ...key, displayName }], now);
}

/** `POST /streak/record-activity`: counts the day for the user's streak (no reward of its own). */
export async function recordActivity(deps: StreakDeps, input: RecordActivityRequest): Promise<RecordActivityResponse> {
  await requireBrand(deps, input.brandId);
  const { settings } = await loadStreakSettings(deps, input.brandId);
  // Linked identities share one streak: the account's (docs/identity-linking.md).
  const key = {
    brandId: input.brandId,
    accountKey: await resolveAccountKey(deps.db, input.userIdentifier),
    streakType: input.streakType,
  };
  const now = deps.clock.now();
  const { result, claimed } = await deps.db.transaction().execute(async (trx) => {
    await saveDisplayName(trx, key, input.metadata, now);
    const result = await applyActivity(trx, key, input.platform, settings, now);
    return { result, claimed: await claimedMilestones(trx, key, settings) };
  });
  return {
    success: true,
    brandId: input.brandId,
    userIdentifier: input.userIdentifier,
    streakType: input.streakType,
    isNew: result.isNew,
    streakBroken: result.broken,
    freezesConsumed: result.freezesConsumed,
    freezeEarned: result.freezeEarned,
    longestStreak: result.state.longest,
    streak: summarize(result.state, claimed, settings, now),
  };
}

/** `GET /streak/status/:brandId/:userIdentifier`: the streak as it stands now; records nothing. */
export async function getStreakStatus(
  deps: StreakDeps,
  brandId: string,
  identityKey: string,
  streakType: string = DAILY_STREAK,
): Promise<StreakStatusResponse> {
  await requireBrand(deps, brandId);
  const { settings } = await loadStreakSettings(deps, brandId);
  const key = { brandId, accountKey: await resolveAccountKey(deps.db, identityKey), streakType };
  const now = deps.clock.now();
  const [state, claimed, checkin] = await Promise.all([
    findStreak(deps.db, key),
    claimedMilestones(deps.db, key, settings),
    findCheckin(deps.db, key, utcDay(now)),
  ]);
  const current = state ?? EMPTY_STREAK;
  const view = viewStreak(current, now, settings);
  const summary = summarize(current, claimed, settings, now);
  return {
    success: true,
    brandId,
    userIdentifier: identityKey,
    currentStreak: summary.currentStreak,
    longestStreak: current.longest,
    multiplier: summary.multiplier,
    nextMilestone: summary.nextMilestone,
    unclaimedMilestones: summary.unclaimedMilestones,
    claimedMilestones: streakType === DAILY_STREAK ? claimed : [],
    checkedInToday: checkin !== undefined,
    lapsed: view.lapsed,
    lastActivityAt: current.lastActivityAt?.toISOString() ?? null,
    streakExpiresAt: view.expiresAt?.toISOString() ?? null,
    freezes: {
      available: view.freezesAvailable,
      pending: view.freezesPending,
      usedTotal: current.freezesUsed,
      lastUsedAt: current.lastFreezeUsedAt?.toISOString() ?? null,
      earnEveryDays: settings.freezeEveryDays,
      max: settings.maxFreezes,
    },
  };
}

/** The brand's active rule for a streak event type, or a 400 saying how to create it. */
function requireRule(cached: CachedBrand, eventType: string, purpose: string): RuleRecord {
  const rule = cached.rulesByType.get(eventType);
  if (!rule?.active) {
    throw new AppError(
      'UNKNOWN_EVENT_TYPE',
      `${purpose} needs an active "${eventType}" rule for this brand: create it (e.g. maxClaims -1, cooldownHours 0) with the admin API or \`npm run pts -- rule set --brand ID --event-type ${eventType} --reward N --cooldown-hours 0 --max-claims unlimited\``,
      { field: 'eventType', value: eventType, reason: 'rule_missing' },
    );
  }
  return rule;
}

/**
 * Checks the pipeline's lock-free rules (brand, automation, rule) for a streak reward and returns the
 * candidate, before anything is recorded: a check-in or claim never commits when it could not be paid for
 * one of these reasons. The request was brand-signed; the signature is already recorded as used.
 */
async function prepareStreakReward(
  deps: StreakDeps,
  input: EventRequest,
  eventId: string,
  amount: bigint,
): Promise<ServerAward> {
  // The streak tables deduplicate (one check-in per UTC day, one claim per milestone) and the day boundary
  // replaces the rule's cooldown; per-user and total claim limits of the rule still apply.
  const request: ServerAward = { kind: 'server', input, eventId, amount };
  await deps.events.checkAward(request);
  return request;
}

/** Queues the reward through the event pipeline; an AppError means a rule of the brand refused it. */
async function payReward(deps: StreakDeps, candidate: ServerAward): Promise<AcceptedEvent | AppError> {
  try {
    return await deps.events.award(candidate);
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
}

/**
 * A check-in or claim row commits before its reward event (two transactions). If the process died in
 * between, the row has no event; a later request for the same day or milestone re-drives it once the row is
 * this old. The event id is reused, so if the original is merely slow the events primary key lets only one
 * of them commit.
 */
export const REDRIVE_AFTER_MS = 30_000;

/** Pays a recorded reward that has no event yet (see REDRIVE_AFTER_MS); a no-op otherwise. */
async function redriveReward(deps: StreakDeps, candidate: ServerAward, recordedAt: Date, now: Date): Promise<void> {
  if (now.getTime() - recordedAt.getTime() < REDRIVE_AFTER_MS) return;
  if (await eventExists(deps.db, candidate.eventId)) return;
  let paid: AcceptedEvent | AppError;
  try {
    paid = await payReward(deps, candidate);
  } catch (error) {
    if (isUniqueViolation(error)) return; // the original committed meanwhile
    throw error;
  }
  deps.logger.warn(
    { brandId: candidate.input.brandId, eventId: candidate.eventId, eventType: candidate.input.eventType },
    isAppError(paid)
      ? `re-driven streak reward refused: ${paid.code}`
      : 're-drove a streak reward left without its event',
  );
  if (!isAppError(paid)) await deps.events.completeEvent(paid);
}

function checkinMetadata(input: CheckinRequest, day: string, streak: number, multiplier: number, baseReward: number) {
  return {
    source: 'streak_checkin',
    platform: input.platform,
    checkin_day: day,
    current_streak: streak,
    streak_multiplier: multiplier,
    base_reward: baseReward,
  };
}

/**
 * `POST /checkin` (spec 2.3, 3): once per user and UTC day. The check-in row (primary key brand, user, day)
 * and the streak update commit in one transaction behind the streak row lock, so concurrent check-ins of
 * one user pay once. The reward (daily rule amount × multiplier) then goes through the event pipeline:
 * ledger, claim counters, webhooks and the mint apply.
 */
export async function checkIn(deps: StreakDeps, input: CheckinRequest): Promise<CheckinResponse> {
  const cached = await requireBrand(deps, input.brandId);
  const rule = requireRule(cached, CHECKIN_EVENT_TYPE, 'Daily check-in');
  const { settings } = await loadStreakSettings(deps, input.brandId);
  // Linked identities share one streak: the account's (docs/identity-linking.md).
  const key = { brandId: input.brandId, accountKey: await resolveAccountKey(deps.db, input.userIdentifier) };
  const now = deps.clock.now();
  const day = utcDay(now);

  // Amount is only known after the streak update; the pipeline's lock-free checks do not depend on it.
  const eventId = randomUUID();
  const eventInput: EventRequest = {
    brandId: input.brandId,
    eventType: CHECKIN_EVENT_TYPE,
    userEmail: input.userIdentifier,
    metadata: { source: 'streak_checkin', platform: input.platform, checkin_day: day },
  };
  // A check-in earns the rule's amount × streak, then × the member's tier (docs/tiers.md): the pipeline applies the tier.
  const candidate = { ...(await prepareStreakReward(deps, eventInput, eventId, 0n)), tierMultiplied: true };

  const outcome = await deps.db.transaction().execute(async (trx) => {
    const locked = await lockStreak(trx, key, now);
    await saveDisplayName(trx, key, input.metadata, now);
    const existing = await findCheckin(trx, key, day);
    if (existing)
      return { already: true as const, state: locked, existing, claimed: await listClaimedMilestones(trx, key) };
    const result = await applyActivity(trx, key, input.platform, settings, now);
    const multiplier = streakMultiplier(result.state.current, settings);
    const reward = BigInt(checkinReward(Number(rule.reward_amount), multiplier));
    const inserted = await insertCheckin(trx, {
      ...key,
      day,
      platform: input.platform,
      eventId,
      streak: result.state.current,
      multiplier,
      reward,
      at: now,
    });
    // Unreachable behind the lock; the primary key is the last line of defence if it ever is not.
    if (!inserted) throw new AppError('CONFLICT', 'A check-in for this user and day was recorded concurrently; retry');
    return {
      already: false as const,
      state: result.state,
      reward,
      multiplier,
      claimed: await listClaimedMilestones(trx, key),
    };
  });

  const streak = summarize(outcome.state, outcome.claimed, settings, now);
  if (outcome.already) {
    const { existing } = outcome;
    await redriveReward(
      deps,
      restateAward(candidate, {
        eventId: existing.eventId,
        amount: existing.reward,
        metadata: checkinMetadata(input, day, existing.streak, existing.multiplier, Number(rule.reward_amount)),
      }),
      existing.createdAt,
      now,
    );
    return {
      success: true,
      streak,
      reward: 0,
      alreadyClaimed: true,
      day,
      eventId: outcome.existing.eventId,
      walletAddress: null,
    };
  }
  const paid = await payReward(
    deps,
    restateAward(candidate, {
      amount: outcome.reward,
      metadata: checkinMetadata(input, day, outcome.state.current, outcome.multiplier, Number(rule.reward_amount)),
    }),
  );
  if (isAppError(paid)) {
    deps.logger.info({ brandId: input.brandId, eventId, code: paid.code }, 'check-in reward refused by the rule');
    return {
      success: true,
      streak,
      reward: 0,
      alreadyClaimed: false,
      day,
      eventId,
      walletAddress: null,
      rewardRefused: { code: paid.code, message: paid.message },
    };
  }
  const completed = await deps.events.completeEvent(paid);
  return {
    success: true,
    streak,
    reward: paid.rewardAmount,
    alreadyClaimed: false,
    day,
    eventId: paid.eventId,
    walletAddress: paid.walletAddress,
    ...(completed.transactionHash ? { transactionHash: completed.transactionHash } : {}),
    mintStatus: completed.mintStatus,
  };
}

function claimFailed(message: string, reason: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('CLAIM_FAILED', message, { reason, ...details });
}

/**
 * `POST /streak/claim-milestone` (spec 3): once per milestone, when the user's longest streak reached it.
 * The claim row (primary key brand, user, milestone) commits behind the streak row lock, so concurrent
 * claims pay once; the bonus then goes through the event pipeline. If a rule of the brand refuses the bonus
 * the claim is released, so it can be claimed again once the rule allows.
 */
export async function claimMilestone(deps: StreakDeps, input: ClaimMilestoneRequest): Promise<ClaimMilestoneResponse> {
  const cached = await requireBrand(deps, input.brandId);
  requireRule(cached, MILESTONE_EVENT_TYPE, 'Claiming a milestone');
  const { settings } = await loadStreakSettings(deps, input.brandId);
  const milestone = settings.milestones.find((m) => m.days === input.milestoneDays);
  if (!milestone) {
    throw claimFailed(
      `${input.milestoneDays} days is not a milestone of this brand; milestones: ${settings.milestones.map((m) => m.days).join(', ') || 'none'}`,
      'not_a_milestone',
      { milestones: settings.milestones.map((m) => m.days) },
    );
  }
  // Linked identities share one streak: the account's (docs/identity-linking.md).
  const key = { brandId: input.brandId, accountKey: await resolveAccountKey(deps.db, input.userIdentifier) };
  const now = deps.clock.now();
  const eventId = randomUUID();
  const bonus = BigInt(milestone.bonus);
  const candidate = await prepareStreakReward(
    deps,
    {
      brandId: input.brandId,
      eventType: MILESTONE_EVENT_TYPE,
      userEmail: input.userIdentifier,
      metadata: { source: 'streak_milestone', milestone: milestone.days },
    },
    eventId,
    bonus,
  );

  const alreadyClaimed = () =>
    claimFailed(`The ${milestone.days}-day milestone was already claimed`, 'already_claimed', {
      milestone: milestone.days,
    });
  const earlier = await deps.db.transaction().execute(async (trx) => {
    const state = await lockStreak(trx, key, now);
    const claimed = await listClaimedMilestones(trx, key);
    const refusal = milestoneClaimRefusal(milestone.days, state.longest, claimed, settings);
    // Claimed before: `claimed` lists it, so the row exists (this transaction holds the streak lock).
    if (refusal === 'already_claimed') return { previous: await findMilestoneClaim(trx, key, milestone.days) };
    if (refusal) {
      throw claimFailed(
        `The ${milestone.days}-day milestone is not reached yet: the longest streak is ${state.longest} day(s)`,
        refusal,
        { milestone: milestone.days, longestStreak: state.longest },
      );
    }
    const inserted = await insertMilestoneClaim(trx, { ...key, milestone: milestone.days, bonus, eventId, at: now });
    if (!inserted) throw alreadyClaimed();
    return undefined;
  });
  if (earlier) {
    const { previous } = earlier;
    if (previous) {
      const redrive = restateAward(candidate, { eventId: previous.eventId, amount: previous.bonus });
      await redriveReward(deps, redrive, previous.claimedAt, now);
    }
    throw alreadyClaimed();
  }

  const paid = await payReward(deps, candidate);
  if (isAppError(paid)) {
    await deleteMilestoneClaim(deps.db, eventId);
    throw claimFailed(`The milestone bonus was refused by the brand's rule: ${paid.message}`, 'reward_refused', {
      milestone: milestone.days,
      rewardCode: paid.code,
      ...(paid.details ? { rewardDetails: paid.details } : {}),
    });
  }
  const completed = await deps.events.completeEvent(paid);
  return {
    success: true,
    bonusPts: paid.rewardAmount,
    milestone: milestone.days,
    eventId: paid.eventId,
    walletAddress: paid.walletAddress,
    ...(completed.transactionHash ? { transactionHash: completed.transactionHash } : {}),
    mintStatus: completed.mintStatus,
  };
}

/** Streaks, daily check-in and the brand's streak settings (`/services/streak`, `/services/checkin`). */
export interface StreakService {
  recordActivity(input: RecordActivityRequest): Promise<RecordActivityResponse>;
  status(brandId: string, identityKey: string, streakType?: string): Promise<StreakStatusResponse>;
  claimMilestone(input: ClaimMilestoneRequest): Promise<ClaimMilestoneResponse>;
  checkIn(input: CheckinRequest): Promise<CheckinResponse>;
  /** The brand's settings and whether it stored its own; BRAND_NOT_FOUND when the brand cache has no such brand. */
  settings(brandId: string): Promise<{ settings: StreakSettings; custom: boolean }>;
  /** Changes some of the brand's settings, audited as `actor`. */
  updateSettings(brandId: string, patch: UpdateStreakSettingsRequest, actor: string): Promise<StreakSettings>;
}

export function createStreakService(deps: StreakDeps): StreakService {
  return {
    recordActivity: (input) => recordActivity(deps, input),
    status: (brandId, identityKey, streakType) => getStreakStatus(deps, brandId, identityKey, streakType),
    claimMilestone: (input) => claimMilestone(deps, input),
    checkIn: (input) => checkIn(deps, input),
    settings: async (brandId) => {
      if (!(await deps.events.brands.get(brandId))) {
        throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, {
          field: 'brandId',
          value: brandId,
        });
      }
      return loadStreakSettings(deps, brandId);
    },
    updateSettings: (brandId, patch, actor) => updateStreakSettings({ ...deps, actor }, brandId, patch),
  };
}
