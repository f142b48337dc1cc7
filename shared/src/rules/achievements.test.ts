import { describe, expect, it } from 'vitest';
import {
  achievementAccumulates,
  achievementProgress,
  DEFAULT_ACHIEVEMENTS,
  isReportableAchievementType,
} from './achievements.ts';

describe('achievement rules', () => {
  it.each([
    ['message_count', true],
    ['voice_hours', true],
    ['level_reached', true],
    ['custom_quiz_master', true],
    ['tokens_earned', false],
    ['events_claimed', false],
    ['streak_days', false],
    ['good_morning_count', false],
    ['custom_', false],
    ['CUSTOM_x', false],
    ['anything', false],
  ])('%s reportable by clients: %s', (type, expected) => {
    expect(isReportableAchievementType(type)).toBe(expected);
  });

  it('levels and streaks are high-water marks, the rest running totals', () => {
    expect(achievementAccumulates('level_reached')).toBe(false);
    expect(achievementAccumulates('streak_days')).toBe(false);
    expect(achievementAccumulates('message_count')).toBe(true);
    expect(achievementAccumulates('custom_x')).toBe(true);
  });

  it.each([
    [0, { progress: 0, fraction: 0, reached: false }],
    [99, { progress: 99, fraction: 0.99, reached: false }],
    [100, { progress: 100, fraction: 1, reached: true }],
    [250, { progress: 100, fraction: 1, reached: true }],
  ])('progress at %d of 100', (value, expected) => {
    const definition = DEFAULT_ACHIEVEMENTS.find((d) => d.id === 'tokens_earned_100');
    if (!definition) throw new Error('missing default');
    expect(achievementProgress(definition, value)).toEqual(expected);
  });

  it('default ids are unique', () => {
    const ids = DEFAULT_ACHIEVEMENTS.map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
