import { describe, expect, it } from 'vitest';
import { competitionRanks, nextPeriodStart, normalizePeriod, periodKey } from './periods.ts';

describe('normalizePeriod', () => {
  it.each([
    ['week', 'weekly'],
    ['WEEKLY', 'weekly'],
    ['month', 'monthly'],
    ['monthly', 'monthly'],
    ['all', 'all_time'],
    ['all_time', 'all_time'],
    ['daily', 'daily'],
    [' day ', 'daily'],
  ])('%s → %s', (input, expected) => {
    expect(normalizePeriod(input)).toBe(expected);
  });

  it('refuses unknown spellings', () => {
    expect(normalizePeriod('year')).toBeUndefined();
    expect(normalizePeriod('')).toBeUndefined();
  });
});

describe('periodKey (UTC calendar periods)', () => {
  it.each([
    // [period, instant, key]
    ['daily', '2026-11-22T23:59:59.999Z', '2026-11-22'],
    ['daily', '2026-11-23T00:00:00.000Z', '2026-11-23'],
    // 2026-11-22 is a Sunday: its ISO week began on Monday 16th; Monday 23rd starts the next.
    ['weekly', '2026-11-22T23:59:59.999Z', '2026-11-16'],
    ['weekly', '2026-11-23T00:00:00.000Z', '2026-11-23'],
    ['weekly', '2026-11-16T00:00:00.000Z', '2026-11-16'],
    // A week that spans a year boundary starts in the old year.
    ['weekly', '2027-01-01T12:00:00.000Z', '2026-12-28'],
    ['monthly', '2026-11-30T23:59:59.999Z', '2026-11-01'],
    ['monthly', '2026-12-01T00:00:00.000Z', '2026-12-01'],
    ['monthly', '2028-02-29T10:00:00.000Z', '2028-02-01'],
    ['all_time', '2026-11-22T10:00:00.000Z', '1970-01-01'],
  ] as const)('%s at %s starts %s', (period, at, key) => {
    expect(periodKey(period, new Date(at))).toBe(key);
  });
});

describe('competitionRanks', () => {
  it('ties share a rank and skip the places they fill', () => {
    expect(competitionRanks([50, 40, 40, 30, 30, 30, 10])).toEqual([1, 2, 2, 4, 4, 4, 7]);
  });
  it('continues from the page start', () => {
    expect(competitionRanks([30n, 30n, 20n], 4)).toEqual([4, 4, 6]);
  });
  it('handles empty and single lists', () => {
    expect(competitionRanks([])).toEqual([]);
    expect(competitionRanks([0])).toEqual([1]);
  });
});

describe('nextPeriodStart', () => {
  const at = new Date('2026-12-31T23:59:59.999Z'); // a Thursday
  it.each([
    ['daily', '2027-01-01T00:00:00.000Z'],
    ['weekly', '2027-01-04T00:00:00.000Z'],
    ['monthly', '2027-01-01T00:00:00.000Z'],
  ] as const)('%s turns over at %s', (period, expected) => {
    expect(nextPeriodStart(period, at)?.toISOString()).toBe(expected);
  });
  it('all_time never turns over', () => {
    expect(nextPeriodStart('all_time', at)).toBeUndefined();
  });
});
