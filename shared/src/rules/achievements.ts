/**
 * Achievements: progress towards thresholds, per brand and user. Server-computed types are fed by the
 * platform itself (never by a client); reported types come from bots or the brand's back-end.
 */
export const COMPUTED_ACHIEVEMENT_TYPES = [
  /** Tokens earned (confirmed rewards). */
  'tokens_earned',
  /** Rewarded events. */
  'events_claimed',
  /** Longest daily streak, in days. */
  'streak_days',
  /** Rewarded good-morning messages (event type `good_morning`). */
  'good_morning_count',
] as const;

export const REPORTED_ACHIEVEMENT_TYPES = [
  /** Chat messages sent (bots report increments). */
  'message_count',
  /** Hours spent in voice channels (bots report increments). */
  'voice_hours',
  /** Level reached in a chat levelling system (bots report the level). */
  'level_reached',
] as const;

export type ComputedAchievementType = (typeof COMPUTED_ACHIEVEMENT_TYPES)[number];
export type ReportedAchievementType = (typeof REPORTED_ACHIEVEMENT_TYPES)[number];
/** Built-in types, or a brand's own `custom_<name>` type. */
export type AchievementType = ComputedAchievementType | ReportedAchievementType | `custom_${string}`;

export const CUSTOM_ACHIEVEMENT_TYPE = /^custom_[a-z0-9_]{1,40}$/;

/** Whether a type may be reported by a client (everything except what the platform computes itself). */
export function isReportableAchievementType(type: string): boolean {
  return (REPORTED_ACHIEVEMENT_TYPES as readonly string[]).includes(type) || CUSTOM_ACHIEVEMENT_TYPE.test(type);
}

/** Whether progress of this type is a running total (increments) or a high-water mark (levels, streaks). */
export function achievementAccumulates(type: string): boolean {
  return type !== 'level_reached' && type !== 'streak_days';
}

export interface AchievementDefinition {
  /** Stable id within the brand, e.g. `tokens_earned_1000`. */
  id: string;
  type: AchievementType;
  threshold: number;
  name: string;
  description: string;
}

const define = (
  type: AchievementType,
  threshold: number,
  name: string,
  description: string,
): AchievementDefinition => ({
  id: `${type}_${threshold}`,
  type,
  threshold,
  name,
  description,
});

/** What every brand has until it defines its own (a brand's definitions replace these entirely). */
export const DEFAULT_ACHIEVEMENTS: readonly AchievementDefinition[] = [
  define('events_claimed', 1, 'First steps', 'Earn your first reward'),
  define('events_claimed', 10, 'Regular', 'Earn 10 rewards'),
  define('events_claimed', 100, 'Devoted', 'Earn 100 rewards'),
  define('tokens_earned', 100, 'Collector', 'Earn 100 tokens'),
  define('tokens_earned', 1000, 'Hoarder', 'Earn 1,000 tokens'),
  define('tokens_earned', 10000, 'Treasure keeper', 'Earn 10,000 tokens'),
  define('streak_days', 7, 'One week strong', 'Keep a 7-day streak'),
  define('streak_days', 30, 'Monthly habit', 'Keep a 30-day streak'),
  define('streak_days', 100, 'Centurion', 'Keep a 100-day streak'),
  define('good_morning_count', 10, 'Early bird', 'Say good morning 10 times'),
  define('good_morning_count', 50, 'Sunrise regular', 'Say good morning 50 times'),
  define('message_count', 100, 'Chatty', 'Send 100 messages'),
  define('message_count', 1000, 'Voice of the community', 'Send 1,000 messages'),
  define('voice_hours', 1, 'Heard', 'Spend an hour in voice'),
  define('voice_hours', 10, 'On air', 'Spend 10 hours in voice'),
  define('level_reached', 5, 'Rising', 'Reach level 5'),
  define('level_reached', 10, 'Veteran', 'Reach level 10'),
];

/** Progress of one definition: value so far (capped at the threshold for display), fraction, unlocked. */
export function achievementProgress(
  definition: AchievementDefinition,
  value: number,
): { progress: number; fraction: number; reached: boolean } {
  const reached = value >= definition.threshold;
  const fraction = definition.threshold <= 0 ? 1 : Math.min(1, value / definition.threshold);
  return { progress: Math.min(value, definition.threshold), fraction: Math.round(fraction * 1000) / 1000, reached };
}
