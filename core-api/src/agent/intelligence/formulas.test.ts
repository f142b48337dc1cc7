import { describe, expect, it } from 'vitest';
import {
  type ActivityProfile,
  archetypeDistribution,
  classifyArchetype,
  conversionRate,
  daysToSellOut,
  goalEstimate,
  heatScore,
  lowerMedian,
  mostCommon,
  percentileRank,
  perkRecommendationScore,
  ratio,
  redemptionVelocity,
} from './formulas.ts';

const base: ActivityProfile = {
  events: 10,
  distinctEventTypes: 1,
  activeDays: 2,
  daysSinceLastEvent: 1,
  redemptions: 0,
  earned: 100n,
  spent: 0n,
};

describe('classifyArchetype', () => {
  it.each([
    ['never active', { daysSinceLastEvent: null }, 'dormant'],
    ['31 days quiet', { daysSinceLastEvent: 31 }, 'dormant'],
    ['30 days quiet is not yet dormant', { daysSinceLastEvent: 30 }, 'collector'],
    ['2 events', { events: 2 }, 'newcomer'],
    ['spent half of earned', { redemptions: 1, spent: 50n }, 'redeemer'],
    ['spent 49 of 100', { redemptions: 1, spent: 49n }, 'collector'],
    ['active 15 of 30 days', { activeDays: 15 }, 'streaker'],
    ['active 14 of 30 days', { activeDays: 14 }, 'collector'],
    ['3 event types', { distinctEventTypes: 3 }, 'explorer'],
    ['redeemer wins over streaker', { redemptions: 2, spent: 80n, activeDays: 20 }, 'redeemer'],
  ] as const)('%s → %s', (_label, change, expected) => {
    expect(classifyArchetype({ ...base, ...change }, 30)).toBe(expected);
  });
});

describe('perk formulas', () => {
  it('heat weighs the last 7 days twice: (2×3 + (9−3)) / 30 = 0.4', () => {
    expect(heatScore(3, 9)).toBe(0.4);
    expect(heatScore(0, 0)).toBe(0);
  });
  it('velocity is 30-day redemptions per day', () => {
    expect(redemptionVelocity(15)).toBe(0.5);
  });
  it('days to sell out: 10 left at 3 per 30 days → ceil(100) = 100; unknown without rate or cap', () => {
    expect(daysToSellOut(10n, 3)).toBe(100);
    expect(daysToSellOut(7n, 60)).toBe(4);
    expect(daysToSellOut(0n, 5)).toBe(0);
    expect(daysToSellOut(null, 5)).toBeNull();
    expect(daysToSellOut(10n, 0)).toBeNull();
  });
  it('conversion and percentile in percent with one decimal, null on empty', () => {
    expect(conversionRate(1, 3)).toBe(33.3);
    expect(conversionRate(0, 0)).toBeNull();
    expect(percentileRank(2, 3)).toBe(66.7);
    expect(percentileRank(0, 0)).toBeNull();
  });
});

describe('goalEstimate', () => {
  it('missing 70 at 90 pts per 30 days → 24 days (ceil 23.3)', () => {
    expect(goalEstimate(100n, 30n, 90n, 30)).toEqual({
      missing: 70n,
      progressPercent: 30,
      dailyRate: 3,
      estimatedDays: 24,
    });
  });
  it('affordable → 0 days; no earnings → null days', () => {
    expect(goalEstimate(100n, 150n, 0n, 30).estimatedDays).toBe(0);
    expect(goalEstimate(100n, 150n, 0n, 30).progressPercent).toBe(100);
    expect(goalEstimate(100n, 10n, 0n, 30).estimatedDays).toBeNull();
  });
});

describe('perkRecommendationScore', () => {
  it('50 × affordability + 30 × popularity + 20 × novelty', () => {
    expect(
      perkRecommendationScore({
        balance: 25n,
        cost: 100n,
        redemptions30: 1,
        maxRedemptions30: 4,
        alreadyRedeemed: false,
      }),
    ).toBe(12.5 + 7.5 + 20);
    expect(
      perkRecommendationScore({
        balance: 500n,
        cost: 100n,
        redemptions30: 0,
        maxRedemptions30: 0,
        alreadyRedeemed: true,
      }),
    ).toBe(50);
  });
});

describe('suggestion and audience formulas', () => {
  it.each([
    [[], null],
    [[7], 7],
    [[100, 50], 50],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2],
  ])('lowerMedian(%j) = %j', (values, expected) => {
    expect(lowerMedian(values)).toBe(expected);
  });

  it.each([
    [[], null],
    [[-1, -1, 1], -1],
    [[5, 1, 5, 1], 1],
    [[24, 0, 24], 24],
  ])('mostCommon(%j) = %j', (values, expected) => {
    expect(mostCommon(values)).toBe(expected);
  });

  it('ratio and archetype distribution (every archetype listed, shares to 1 decimal)', () => {
    expect(ratio(7, 2)).toBe(3.5);
    expect(ratio(1, 3)).toBe(0.33);
    expect(ratio(5, 0)).toBe(0);
    expect(archetypeDistribution(['dormant', 'newcomer', 'newcomer'])).toEqual([
      { archetype: 'dormant', members: 1, share: 33.3 },
      { archetype: 'newcomer', members: 2, share: 66.7 },
      { archetype: 'redeemer', members: 0, share: 0 },
      { archetype: 'streaker', members: 0, share: 0 },
      { archetype: 'explorer', members: 0, share: 0 },
      { archetype: 'collector', members: 0, share: 0 },
    ]);
    expect(archetypeDistribution([]).every((a) => a.members === 0 && a.share === 0)).toBe(true);
  });
});
