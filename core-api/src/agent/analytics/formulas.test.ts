import { describe, expect, it } from 'vitest';
import {
  cashbackPercent,
  compareBrandActivity,
  growthPercent,
  type HealthInput,
  healthComponents,
  healthGrade,
  healthReport,
  momentum,
  NOT_ENOUGH_HISTORY,
  percentOf,
  periodWindows,
  ptsToUsd,
  ratio,
} from './formulas.ts';

const DAY = 86_400_000;

describe('periodWindows', () => {
  it('current = [now − days, now), previous = the same length before it', () => {
    const now = new Date('2026-11-25T12:00:00.000Z');
    const { current, previous } = periodWindows(now, '7d');
    expect(current).toEqual({ from: new Date(now.getTime() - 7 * DAY), to: now, days: 7 });
    expect(previous).toEqual({
      from: new Date(now.getTime() - 14 * DAY),
      to: new Date(now.getTime() - 7 * DAY),
      days: 7,
    });
    expect(periodWindows(now, '90d').previous.from).toEqual(new Date(now.getTime() - 180 * DAY));
  });
});

describe('ratios never answer NaN', () => {
  it.each([
    [1, 3, 33.3],
    [2, 3, 66.7],
    [0, 5, 0],
    [3, 0, null],
    [0, 0, null],
  ])('percentOf(%i, %i) = %s', (part, whole, expected) => {
    expect(percentOf(part, whole)).toBe(expected);
  });

  it.each([
    [7, 2, 3.5],
    [10, 3, 3.33],
    [5, 0, 0],
  ])('ratio(%i, %i) = %s', (a, b, expected) => {
    expect(ratio(a, b)).toBe(expected);
  });

  it.each([
    [3, 2, 50],
    [1, 3, -66.7],
    [0, 4, -100],
    [5, 0, null],
    [0, 0, null],
  ])('growthPercent(%i, %i) = %s', (cur, prev, expected) => {
    expect(growthPercent(cur, prev)).toBe(expected);
  });

  it.each([
    [3, 0, 3], // (3 − 0) ÷ 1
    [2, 1, 0.5], // (2 − 1) ÷ 2
    [180, 100, 0.79], // 80 ÷ 101 = 0.792…
    [1, 4, -0.6], // −3 ÷ 5
    [0, 0, 0],
  ])('momentum(%i, %i) = %s', (cur, prev, expected) => {
    expect(momentum(cur, prev)).toBe(expected);
  });
});

describe('cashback at 1 USD = 1000 pts', () => {
  it.each([
    [100n, 2500n, 0.4], // 100 pts on 25.00 USD = 25 000 pts → 0.4 %
    [100n, 1000n, 1], // 10.00 USD = 10 000 pts → 1 %
    [1000n, 1999n, 5], // 1000 ÷ 19 990 = 5.0025 % → 5
    [5n, 1n, 50], // 0.01 USD = 10 pts → 50 %
    [0n, 0n, null],
  ])('cashbackPercent(%s pts, %s cents) = %s', (pts, cents, expected) => {
    expect(cashbackPercent(pts, cents)).toBe(expected);
  });

  it.each([
    [100n, '0.100'],
    [1000n, '1.000'],
    [5n, '0.005'],
    [123456n, '123.456'],
    [0n, '0.000'],
  ])('ptsToUsd(%s) = %s', (pts, expected) => {
    expect(ptsToUsd(pts)).toBe(expected);
  });
});

const none: HealthInput = {
  members: 0,
  previousMembers: 0,
  retainedMembers: 0,
  events: 0,
  redeemers: 0,
  streakMembers: 0,
  activeRules: 0,
  availablePerks: 0,
};

describe('health score', () => {
  it('hand-computed: 10 members (8 before, 6 retained), 30 events, 1 redeemer, 2 on streaks, full program', () => {
    const input: HealthInput = {
      members: 10,
      previousMembers: 8,
      retainedMembers: 6,
      events: 30,
      redeemers: 1,
      streakMembers: 2,
      activeRules: 3,
      availablePerks: 1,
    };
    // engagement 20 × min(1, 3 ÷ 4) = 15; retention 20 × 6/8 = 15; growth 10 + 10 × 0.25 = 12.5;
    // redemption 20 × (0.1 ÷ 0.2) = 10; program 5 + 5 + 10 × (0.2 ÷ 0.25) = 18 → 70.5 → 71, C.
    expect(healthComponents(input)).toEqual([
      { name: 'engagement', score: 15, max: 20, value: 3 },
      { name: 'retention', score: 15, max: 20, value: 75 },
      { name: 'growth', score: 12.5, max: 20, value: 25 },
      { name: 'redemption', score: 10, max: 20, value: 10 },
      { name: 'program', score: 18, max: 20, value: 20 },
    ]);
    const report = healthReport(input);
    expect(report.score).toBe(71);
    expect(report.grade).toBe('C');
    // ≥ 15 of 20 are strengths; none below 8.
    expect(report.strengths).toHaveLength(3);
    expect(report.weaknesses).toEqual([]);
    expect(report.recommendations).toEqual([]);
  });

  it('caps: 8 events per member, everyone redeems, members doubled → growth 20', () => {
    const full: HealthInput = {
      members: 4,
      previousMembers: 2,
      retainedMembers: 2,
      events: 32,
      redeemers: 4,
      streakMembers: 4,
      activeRules: 1,
      availablePerks: 1,
    };
    expect(healthComponents(full).map((x) => x.score)).toEqual([20, 20, 20, 20, 20]);
    expect(healthReport(full)).toMatchObject({ score: 100, grade: 'A' });
  });

  it('members halved → growth 5; none left → growth 0 and retention 0', () => {
    expect(healthComponents({ ...none, members: 2, previousMembers: 4 })[2]).toMatchObject({ score: 5, value: -50 });
    const gone = healthComponents({ ...none, previousMembers: 4 });
    expect(gone[1]).toMatchObject({ score: 0, value: 0 });
    expect(gone[2]).toMatchObject({ score: 0, value: -100 });
  });

  it('a new brand (members, nobody before) gets full growth and retention is not scored (not enough history)', () => {
    const c = healthComponents({ ...none, members: 3, events: 3 });
    expect(c[1]).toEqual({ name: 'retention', score: null, max: 20, value: null, note: NOT_ENOUGH_HISTORY });
    expect(c[2]).toEqual({ name: 'growth', score: 20, max: 20, value: null });
    expect(c[0]).toMatchObject({ score: 5, value: 1 });
  });

  it('empty data: score from the program only (over the 80 points that can be scored), no NaN', () => {
    const report = healthReport({ ...none, activeRules: 2, availablePerks: 0 });
    expect(report.components.map((c) => c.score)).toEqual([0, null, 0, 0, 5]);
    expect(report.components.every((c) => !Number.isNaN(c.score))).toBe(true);
    // 5 of 80 scored points → 6.25 → 6.
    expect(report.score).toBe(6);
    expect(report.grade).toBe('F');
    expect(report.notEnoughHistory).toEqual(['retention']);
    expect(report.weaknesses).toHaveLength(4);
    expect(report.weaknesses).not.toContain('Members of the previous 30 days are not coming back');
    expect(report.recommendations).toHaveLength(4);
    expect(report.strengths).toEqual([]);
  });

  it('a new brand doing well is scored over what can be measured, not held back by its missing history', () => {
    // engagement 20, growth 20 (from nobody), redemption 20 (1 of 5), program 5 + 5 + 10 × (2/5 ÷ 0.25 → 1) = 20.
    const report = healthReport({
      ...none,
      members: 5,
      events: 20,
      redeemers: 1,
      streakMembers: 2,
      activeRules: 1,
      availablePerks: 1,
    });
    expect(report.score).toBe(100);
    expect(report.grade).toBe('A');
    expect(report.strengths).toHaveLength(4);
  });

  it.each([
    [100, 'A'],
    [90, 'A'],
    [89, 'B'],
    [80, 'B'],
    [79, 'C'],
    [70, 'C'],
    [60, 'D'],
    [59, 'F'],
    [0, 'F'],
  ])('grade of %i is %s', (score, grade) => {
    expect(healthGrade(score)).toBe(grade);
  });
});

describe('brand ranking order', () => {
  it('members first, then events, then pts, then Brand ID', () => {
    const brand = (brandId: string, members: number, events: number, ptsIssued: bigint) => ({
      brandId,
      members,
      events,
      ptsIssued,
    });
    const brands = [
      brand('0xd', 0, 0, 0n),
      brand('0xc', 2, 9, 900n), // many events, fewer members
      brand('0xb', 3, 3, 100n),
      brand('0xa', 3, 3, 100n), // a full tie with 0xb: Brand ID decides
      brand('0xe', 3, 3, 150n),
      brand('0xf', 3, 4, 10n),
    ];
    expect(brands.sort(compareBrandActivity).map((b) => b.brandId)).toEqual(['0xf', '0xe', '0xa', '0xb', '0xc', '0xd']);
  });
});
