import { describe, expect, it } from 'vitest';
import {
  checkinReward,
  DEFAULT_STREAK_SETTINGS,
  EMPTY_STREAK,
  milestoneClaimRefusal,
  nextMilestone,
  recordStreakActivity,
  type StreakSettings,
  type StreakState,
  streakMultiplier,
  unclaimedMilestones,
  utcDay,
  viewStreak,
} from './streaks.ts';

const settings = DEFAULT_STREAK_SETTINGS;
const noFreezes: StreakSettings = { ...settings, freezeEveryDays: 0 };
const at = (iso: string) => new Date(iso);

function state(overrides: Partial<StreakState>): StreakState {
  return { ...EMPTY_STREAK, ...overrides };
}

/** Replays activities from an empty streak; returns the last result. */
function replay(times: string[], s: StreakSettings = settings) {
  let current: StreakState = { ...EMPTY_STREAK };
  let result = recordStreakActivity(current, at(times[0]!), s);
  current = result.state;
  for (const time of times.slice(1)) {
    result = recordStreakActivity(current, at(time), s);
    current = result.state;
  }
  return result;
}

describe('utcDay', () => {
  it.each([
    ['2026-03-01T00:00:00.000Z', '2026-03-01'],
    ['2026-03-01T23:59:59.999Z', '2026-03-01'],
    ['2026-03-02T00:00:00.000Z', '2026-03-02'],
    ['2026-03-01T23:30:00-05:00', '2026-03-02'],
  ])('%s is UTC day %s', (time, day) => {
    expect(utcDay(at(time))).toBe(day);
  });
});

describe('recordStreakActivity across the grace period (36 h)', () => {
  const last = '2026-03-01T12:00:00.000Z';
  const base = state({ current: 5, longest: 5, lastActivityAt: at(last), lastCountedDay: '2026-03-01' });
  it.each([
    ['same UTC day, later', '2026-03-01T23:59:59.999Z', 5, false, false],
    ['next day, 12 h later', '2026-03-02T00:00:00.000Z', 6, true, false],
    ['36 h later exactly (edge, inclusive)', '2026-03-03T00:00:00.000Z', 6, true, false],
    ['36 h and 1 ms later', '2026-03-03T00:00:00.001Z', 1, true, true],
    ['three days later', '2026-03-04T12:00:00.000Z', 1, true, true],
  ])('%s → current %i', (_label, time, current, isNew, broken) => {
    const result = recordStreakActivity(base, at(time), noFreezes);
    expect(result.state.current).toBe(current);
    expect(result.isNew).toBe(isNew);
    expect(result.broken).toBe(broken);
    expect(result.state.longest).toBe(5 + (current === 6 ? 1 : 0));
  });

  it('measures the grace from the latest activity, also a same-day one', () => {
    const first = recordStreakActivity(base, at('2026-03-01T23:00:00Z'), noFreezes);
    expect(first.isNew).toBe(false);
    expect(first.state.lastActivityAt).toEqual(at('2026-03-01T23:00:00Z'));
    // 12:00 + 36 h would be 03-03 00:00; 23:00 + 36 h is 03-03 11:00.
    expect(recordStreakActivity(first.state, at('2026-03-03T10:59:00Z'), noFreezes).state.current).toBe(6);
  });

  it('counts a new day right after midnight UTC, one minute after the previous activity', () => {
    const s = state({
      current: 2,
      longest: 2,
      lastActivityAt: at('2026-03-01T23:59:00Z'),
      lastCountedDay: '2026-03-01',
    });
    const result = recordStreakActivity(s, at('2026-03-02T00:00:00Z'), settings);
    expect(result).toMatchObject({ isNew: true, state: { current: 3, lastCountedDay: '2026-03-02' } });
  });

  it('never moves the last activity backwards (a clock that went back)', () => {
    const result = recordStreakActivity(base, at('2026-03-01T01:00:00Z'), settings);
    expect(result.isNew).toBe(false);
    expect(result.state.lastActivityAt).toEqual(at(last));
  });

  it('honours a brand grace period', () => {
    const wide = { ...noFreezes, graceHours: 72 };
    expect(recordStreakActivity(base, at('2026-03-04T12:00:00Z'), wide).state.current).toBe(6);
    expect(recordStreakActivity(base, at('2026-03-04T12:00:01Z'), wide).state.current).toBe(1);
  });
});

describe('multipliers', () => {
  it.each([
    [0, 1],
    [1, 1],
    [2, 1],
    [3, 1.25],
    [6, 1.25],
    [7, 1.5],
    [13, 1.5],
    [14, 1.75],
    [29, 1.75],
    [30, 2],
    [400, 2],
  ])('streak %i → ×%d', (days, multiplier) => {
    expect(streakMultiplier(days, settings)).toBe(multiplier);
  });

  it('uses the brand tiers', () => {
    const custom = { ...settings, multipliers: [{ days: 2, multiplier: 3 }] };
    expect(streakMultiplier(1, custom)).toBe(1);
    expect(streakMultiplier(2, custom)).toBe(3);
  });

  it.each([
    [10, 1, 10],
    [10, 1.25, 12],
    [10, 1.5, 15],
    [10, 1.75, 17],
    [10, 2, 20],
    [3, 1.25, 3],
    [0, 2, 0],
  ])('check-in reward %i × %d = %i (rounded down)', (reward, multiplier, expected) => {
    expect(checkinReward(reward, multiplier)).toBe(expected);
  });
});

describe('milestones', () => {
  it('reports a milestone reached for the first time, once', () => {
    const days = Array.from({ length: 7 }, (_, i) => `2026-03-0${i + 1}T10:00:00Z`);
    const seventh = replay(days);
    expect(seventh.state.current).toBe(7);
    expect(seventh.milestonesReached).toEqual([{ days: 7, bonus: 100 }]);
    const eighth = recordStreakActivity(seventh.state, at('2026-03-08T10:00:00Z'), settings);
    expect(eighth.milestonesReached).toEqual([]);
  });

  it.each([
    // longest, claimed, unclaimed
    [6, [], []],
    [7, [], [7]],
    [30, [], [7, 30]],
    [30, [7], [30]],
    [365, [7, 30, 100], [365]],
    [400, [7, 30, 100, 365], []],
  ])('longest %i, claimed %j → unclaimed %j', (longest, claimed, expected) => {
    expect(unclaimedMilestones(longest, claimed, settings).map((m) => m.days)).toEqual(expected);
  });

  it.each([
    // current, longest → next, daysRemaining
    [0, 0, 7, 7],
    [5, 5, 7, 2],
    [7, 7, 30, 23],
    [2, 12, 30, 28],
    [100, 100, 365, 265],
  ])('current %i, longest %i → next %i in %i days', (current, longest, days, remaining) => {
    expect(nextMilestone(current, longest, settings)).toMatchObject({ days, daysRemaining: remaining });
  });

  it('has no next milestone past the last one', () => {
    expect(nextMilestone(365, 365, settings)).toBeNull();
  });

  it.each([
    [7, 7, [], undefined],
    [7, 6, [], 'not_reached'],
    [7, 40, [7], 'already_claimed'],
    [8, 40, [], 'not_a_milestone'],
    [30, 12, [7], 'not_reached'],
  ] as const)('claim %i with longest %i and claimed %j → %s', (days, longest, claimed, refusal) => {
    expect(milestoneClaimRefusal(days, longest, claimed, settings)).toBe(refusal);
  });
});

describe('freezes', () => {
  const every3: StreakSettings = { ...settings, freezeEveryDays: 3, maxFreezes: 2 };

  it.each([
    // streak days on consecutive days → freezes held
    [2, 0],
    [3, 1],
    [5, 1],
    [6, 2],
    [9, 2], // capped at 2
  ])('after %i consecutive days a user holds %i freeze(s)', (days, freezes) => {
    const times = Array.from({ length: days }, (_, i) => new Date(Date.UTC(2026, 2, 1 + i, 9)).toISOString());
    expect(replay(times, every3).state.freezes).toBe(freezes);
  });

  const held = state({
    current: 6,
    longest: 6,
    lastActivityAt: at('2026-03-06T09:00:00Z'),
    lastCountedDay: '2026-03-06',
    freezes: 2,
  });
  it.each([
    // next activity, current after, freezes used, freezes left, broken
    ['next day', '2026-03-07T09:00:00Z', 7, 0, 2, false],
    ['one missed day', '2026-03-08T09:00:00Z', 7, 1, 1, false],
    ['one missed day, at the edge of grace + 24 h', '2026-03-08T21:00:00Z', 7, 1, 1, false],
    ['two missed days', '2026-03-09T09:00:00Z', 7, 2, 0, false],
    ['three missed days (not enough freezes)', '2026-03-10T09:00:00Z', 1, 0, 2, true],
  ])('%s', (_label, time, current, used, left, broken) => {
    const result = recordStreakActivity(held, at(time), { ...every3, freezeEveryDays: 0 });
    expect(result.state.current).toBe(current);
    expect(result.freezesConsumed).toBe(used);
    expect(result.state.freezes).toBe(left);
    expect(result.broken).toBe(broken);
    expect(result.state.freezesUsed).toBe(used);
    if (used > 0) expect(result.state.lastFreezeUsedAt).toEqual(at(time));
  });

  it('shows a streak held by freezes in the view, and a lapsed one as 0', () => {
    const s = { ...every3, freezeEveryDays: 0 };
    expect(viewStreak(held, at('2026-03-07T09:00:00Z'), s)).toMatchObject({
      current: 6,
      lapsed: false,
      freezesPending: 0,
      freezesAvailable: 2,
      multiplier: 1.25,
    });
    expect(viewStreak(held, at('2026-03-08T09:00:00Z'), s)).toMatchObject({
      current: 6,
      lapsed: false,
      freezesPending: 1,
      freezesAvailable: 1,
    });
    expect(viewStreak(held, at('2026-03-10T09:00:00Z'), s)).toMatchObject({
      current: 0,
      lapsed: true,
      multiplier: 1,
      freezesAvailable: 2,
    });
    // 09:00 + 36 h grace + 2 freezes × 24 h
    expect(viewStreak(held, at('2026-03-07T09:00:00Z'), s).expiresAt).toEqual(at('2026-03-09T21:00:00Z'));
  });

  it('turns freezes off with freezeEveryDays 0', () => {
    const times = Array.from({ length: 14 }, (_, i) => new Date(Date.UTC(2026, 2, 1 + i, 9)).toISOString());
    expect(replay(times, noFreezes).state.freezes).toBe(0);
  });
});

describe('viewStreak', () => {
  it('says whether the user was active today (UTC)', () => {
    const s = state({
      current: 1,
      longest: 1,
      lastActivityAt: at('2026-03-01T23:59:59Z'),
      lastCountedDay: '2026-03-01',
    });
    expect(viewStreak(s, at('2026-03-01T23:59:59.500Z'), settings).activeToday).toBe(true);
    expect(viewStreak(s, at('2026-03-02T00:00:00Z'), settings).activeToday).toBe(false);
  });

  it('shows an empty streak', () => {
    expect(viewStreak(EMPTY_STREAK, at('2026-03-01T00:00:00Z'), settings)).toMatchObject({
      current: 0,
      multiplier: 1,
      expiresAt: null,
      activeToday: false,
    });
  });
});
