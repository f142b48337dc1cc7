/**
 * Streak rules (spec agent-plugin-integrations 3, 4.5): pure functions of a stored state, a time and the
 * brand's settings. Nothing here reads a clock or a database; callers pass `at`/`now` from their clock.
 *
 * A streak counts UTC days with activity. The next activity continues it when it comes within the grace
 * period after the last activity; past the grace, each started 24 hours of lateness needs one freeze (a
 * freeze stands in for one missed day and is used automatically), otherwise the streak starts again at 1.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A multiplier that applies from a streak length on. */
export interface StreakMultiplierTier {
  days: number;
  multiplier: number;
}

/** A one-time bonus for reaching a streak length. */
export interface StreakMilestone {
  days: number;
  bonus: number;
}

/** A brand's streak settings. */
export interface StreakSettings {
  /** Hours after the last activity within which the next one continues the streak (at least 24). */
  graceHours: number;
  /** Multipliers by streak length, ascending by `days`; below the first tier the multiplier is 1. */
  multipliers: StreakMultiplierTier[];
  /** Milestone bonuses, ascending by `days`. */
  milestones: StreakMilestone[];
  /** A freeze is earned each time the streak reaches a multiple of this many days; 0 turns freezes off. */
  freezeEveryDays: number;
  /** Most freezes a user can hold. */
  maxFreezes: number;
}

/** Spec 4.5 defaults; freezes: one per 7 days of streak, at most 2 held. */
export const DEFAULT_STREAK_SETTINGS: Readonly<StreakSettings> = Object.freeze({
  graceHours: 36,
  multipliers: [
    { days: 3, multiplier: 1.25 },
    { days: 7, multiplier: 1.5 },
    { days: 14, multiplier: 1.75 },
    { days: 30, multiplier: 2.0 },
  ],
  milestones: [
    { days: 7, bonus: 100 },
    { days: 30, bonus: 500 },
    { days: 100, bonus: 2000 },
    { days: 365, bonus: 10000 },
  ],
  freezeEveryDays: 7,
  maxFreezes: 2,
});

/** What is stored per brand and user. */
export interface StreakState {
  current: number;
  longest: number;
  lastActivityAt: Date | null;
  /** UTC day (`YYYY-MM-DD`) of the last activity that counted a day. */
  lastCountedDay: string | null;
  /** Freezes held. */
  freezes: number;
  /** Freezes used over the streak's life. */
  freezesUsed: number;
  lastFreezeUsedAt: Date | null;
}

/** A user without activity yet. */
export const EMPTY_STREAK: Readonly<StreakState> = Object.freeze({
  current: 0,
  longest: 0,
  lastActivityAt: null,
  lastCountedDay: null,
  freezes: 0,
  freezesUsed: 0,
  lastFreezeUsedAt: null,
});

/** The UTC calendar day of a time, `YYYY-MM-DD` (daily check-ins reset at midnight UTC). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The multiplier of a streak length: the highest tier reached, else 1. */
export function streakMultiplier(current: number, settings: StreakSettings): number {
  let multiplier = 1;
  for (const tier of settings.multipliers) if (current >= tier.days) multiplier = Math.max(multiplier, tier.multiplier);
  return multiplier;
}

/** Freezes needed to bridge a gap since the last activity: one per started day past the grace period. */
function freezesNeeded(gapMs: number, settings: StreakSettings): number {
  const late = gapMs - settings.graceHours * HOUR_MS;
  return late <= 0 ? 0 : Math.ceil(late / DAY_MS);
}

/** The outcome of one activity. */
export interface StreakActivityResult {
  state: StreakState;
  /** The activity counted a new UTC day (false for a second activity on the same day). */
  isNew: boolean;
  /** The previous streak was broken (and this activity started a new one at 1). */
  broken: boolean;
  /** Freezes used to bridge missed days. */
  freezesConsumed: number;
  /** A freeze was earned by this activity. */
  freezeEarned: boolean;
  /** Milestones whose length was reached for the first time by this activity. */
  milestonesReached: StreakMilestone[];
}

/**
 * Applies an activity at `at` to a state. Same UTC day: nothing counts again, only the last-activity time
 * moves on (the grace runs from the latest activity). Within grace: +1 day. Past grace: uses the freezes
 * needed, or restarts at 1 when there are not enough (held freezes are then kept).
 */
export function recordStreakActivity(state: StreakState, at: Date, settings: StreakSettings): StreakActivityResult {
  const day = utcDay(at);
  const unchanged = { broken: false, freezesConsumed: 0, freezeEarned: false, milestonesReached: [] };
  if (state.lastActivityAt && state.lastCountedDay !== null && day <= state.lastCountedDay) {
    // The same day (or a clock that went back): keep the count; never move the last activity backwards.
    const lastActivityAt = at > state.lastActivityAt ? at : state.lastActivityAt;
    return { state: { ...state, lastActivityAt }, isNew: false, ...unchanged };
  }
  let current = 1;
  let broken = false;
  let freezes = state.freezes;
  let freezesConsumed = 0;
  if (state.lastActivityAt && state.current > 0) {
    const needed = freezesNeeded(at.getTime() - state.lastActivityAt.getTime(), settings);
    if (needed === 0) current = state.current + 1;
    else if (needed <= freezes) {
      current = state.current + 1;
      freezes -= needed;
      freezesConsumed = needed;
    } else broken = true;
  }
  let freezeEarned = false;
  if (settings.freezeEveryDays > 0 && current % settings.freezeEveryDays === 0 && freezes < settings.maxFreezes) {
    freezes += 1;
    freezeEarned = true;
  }
  const longest = Math.max(state.longest, current);
  const milestonesReached = settings.milestones.filter((m) => m.days > state.longest && m.days <= longest);
  return {
    state: {
      current,
      longest,
      lastActivityAt: at,
      lastCountedDay: day,
      freezes,
      freezesUsed: state.freezesUsed + freezesConsumed,
      lastFreezeUsedAt: freezesConsumed > 0 ? at : state.lastFreezeUsedAt,
    },
    isNew: true,
    broken,
    freezesConsumed,
    freezeEarned,
    milestonesReached,
  };
}

/** A streak as seen at a moment, without recording anything. */
export interface StreakView {
  /** The streak length that still counts at `now` (0 when it has lapsed). */
  current: number;
  longest: number;
  multiplier: number;
  /** The streak lapsed: the next activity starts again at 1. */
  lapsed: boolean;
  /** Freezes the next activity will use for missed days (the streak is being held by freezes). */
  freezesPending: number;
  /** Freezes held after the pending ones are used. */
  freezesAvailable: number;
  /** The last moment an activity still continues the streak (held freezes included), or null. */
  expiresAt: Date | null;
  /** Whether the last counted day is `now`'s UTC day. */
  activeToday: boolean;
}

/** Evaluates a stored state at `now`: whether the streak still stands, and what the next activity would use. */
export function viewStreak(state: StreakState, now: Date, settings: StreakSettings): StreakView {
  const activeToday = state.lastCountedDay === utcDay(now);
  if (!state.lastActivityAt || state.current === 0) {
    return {
      current: 0,
      longest: state.longest,
      multiplier: 1,
      lapsed: false,
      freezesPending: 0,
      freezesAvailable: state.freezes,
      expiresAt: null,
      activeToday,
    };
  }
  const needed = freezesNeeded(now.getTime() - state.lastActivityAt.getTime(), settings);
  const lapsed = needed > state.freezes;
  const current = lapsed ? 0 : state.current;
  return {
    current,
    longest: state.longest,
    multiplier: streakMultiplier(current, settings),
    lapsed,
    freezesPending: lapsed ? 0 : needed,
    freezesAvailable: lapsed ? state.freezes : state.freezes - needed,
    expiresAt: new Date(state.lastActivityAt.getTime() + settings.graceHours * HOUR_MS + state.freezes * DAY_MS),
    activeToday,
  };
}

/** Milestones reached (longest streak at or past their length) that were not claimed yet, ascending. */
export function unclaimedMilestones(
  longest: number,
  claimed: readonly number[],
  settings: StreakSettings,
): StreakMilestone[] {
  const done = new Set(claimed);
  return settings.milestones.filter((m) => m.days <= longest && !done.has(m.days)).sort((a, b) => a.days - b.days);
}

/** The next milestone never reached, and the streak days still needed to reach it from `current`. */
export function nextMilestone(
  current: number,
  longest: number,
  settings: StreakSettings,
): (StreakMilestone & { daysRemaining: number }) | null {
  const next = [...settings.milestones].sort((a, b) => a.days - b.days).find((m) => m.days > longest);
  return next ? { ...next, daysRemaining: next.days - current } : null;
}

/** Why a milestone cannot be claimed, or undefined when it can. */
export function milestoneClaimRefusal(
  milestoneDays: number,
  longest: number,
  claimed: readonly number[],
  settings: StreakSettings,
): 'not_a_milestone' | 'not_reached' | 'already_claimed' | undefined {
  if (!settings.milestones.some((m) => m.days === milestoneDays)) return 'not_a_milestone';
  if (claimed.includes(milestoneDays)) return 'already_claimed';
  if (longest < milestoneDays) return 'not_reached';
  return undefined;
}

/** The daily check-in reward: the rule's amount times the streak multiplier, rounded down (0-decimal token). */
export function checkinReward(dailyReward: number, multiplier: number): number {
  return Math.floor(dailyReward * multiplier + 1e-9);
}
