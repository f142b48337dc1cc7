import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  entryRewardsDue,
  lastTierTurn,
  type TierLevel,
  tierIndexFor,
  tierPeriodStart,
  tierReward,
  tierStanding,
  tierTableProblem,
  turnDecision,
} from './tiers.ts';

const levels: TierLevel[] = [
  { name: 'Bronze', threshold: 0n, multiplierHundredths: 100, entryReward: 0 },
  { name: 'Silver', threshold: 1_000n, multiplierHundredths: 125, entryReward: 100 },
  { name: 'Gold', threshold: 5_000n, multiplierHundredths: 150, entryReward: 500 },
];

/** A valid table: 2–6 tiers, rising thresholds from 0, non-decreasing multipliers. */
const tableArb = fc
  .array(
    fc.record({
      gap: fc.bigInt({ min: 1n, max: 10n ** 9n }),
      step: fc.integer({ min: 0, max: 100 }),
      reward: fc.nat(5_000),
    }),
    {
      minLength: 1,
      maxLength: 5,
    },
  )
  .map((steps) => {
    const table: TierLevel[] = [{ name: 'T0', threshold: 0n, multiplierHundredths: 100, entryReward: 0 }];
    for (const [i, step] of steps.entries()) {
      const previous = table[i] as TierLevel;
      table.push({
        name: `T${i + 1}`,
        threshold: previous.threshold + step.gap,
        multiplierHundredths: previous.multiplierHundredths + step.step,
        entryReward: step.reward,
      });
    }
    return table;
  });

describe('tier tables', () => {
  it('refuses what a brand must fix, and accepts every generated table', () => {
    expect(tierTableProblem(levels.slice(0, 1))?.field).toBe('tiers');
    expect(tierTableProblem([{ ...levels[1]!, threshold: 5n }, levels[2]!])?.message).toMatch(/start at 0/);
    expect(tierTableProblem([levels[0]!, levels[2]!, levels[1]!])?.field).toBe('tiers.2.threshold');
    expect(tierTableProblem([levels[0]!, { ...levels[1]!, name: 'bronze' }])?.message).toMatch(/twice/);
    expect(tierTableProblem([levels[0]!, { ...levels[1]!, multiplierHundredths: 90 }])?.field).toBe(
      'tiers.1.multiplier',
    );
    fc.assert(fc.property(tableArb, (table) => tierTableProblem(table) === undefined));
  });
});

describe('a member’s tier', () => {
  it('is the highest tier whose threshold the total reaches, and rises with the total', () => {
    expect(tierIndexFor(levels, 0n)).toBe(0);
    expect(tierIndexFor(levels, 999n)).toBe(0);
    expect(tierIndexFor(levels, 1_000n)).toBe(1);
    expect(tierIndexFor(levels, 10n ** 12n)).toBe(2);
    fc.assert(
      fc.property(
        tableArb,
        fc.bigInt({ min: 0n, max: 10n ** 10n }),
        fc.bigInt({ min: 0n, max: 10n ** 10n }),
        (t, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const i = tierIndexFor(t, lo);
          expect(tierIndexFor(t, hi)).toBeGreaterThanOrEqual(i);
          expect(t[i]!.threshold <= lo).toBe(true);
          if (i + 1 < t.length) expect(t[i + 1]!.threshold > lo).toBe(true);
        },
      ),
    );
  });

  it('tells the next tier and exactly what is left to reach it', () => {
    expect(tierStanding(levels, 1_200n)).toEqual({ index: 1, next: 2, total: 1_200n, remaining: 3_800n });
    expect(tierStanding(levels, 9_000n)).toEqual({ index: 2, next: null, total: 9_000n, remaining: null });
    // Kept in Gold through a grace while the total says Silver: the next is none, nothing left.
    expect(tierStanding(levels, 1_200n, 2)).toEqual({ index: 2, next: null, total: 1_200n, remaining: null });
    fc.assert(
      fc.property(tableArb, fc.bigInt({ min: 0n, max: 10n ** 10n }), (t, total) => {
        const s = tierStanding(t, total);
        if (s.next === null) {
          expect(s.index).toBe(t.length - 1);
        } else {
          expect(total + (s.remaining as bigint)).toBe(t[s.next]!.threshold);
          expect(tierIndexFor(t, total + (s.remaining as bigint))).toBe(s.next);
        }
      }),
    );
  });
});

describe('periods', () => {
  const at = new Date('2026-12-07T21:00:00Z');
  it('start 365 days back, on 1 January, or at the epoch; turn daily or yearly', () => {
    expect(tierPeriodStart('rolling_365', at).toISOString()).toBe('2025-12-07T21:00:00.000Z');
    expect(tierPeriodStart('calendar_year', at).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(tierPeriodStart('lifetime', at).getTime()).toBe(0);
    expect(lastTierTurn('rolling_365', at).toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(lastTierTurn('calendar_year', at).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});

describe('entry rewards', () => {
  it('pay each passed tier once, never again on keeping or regaining it', () => {
    expect(entryRewardsDue(levels, 0, 2, new Set()).map((l) => l.name)).toEqual(['Silver', 'Gold']);
    expect(entryRewardsDue(levels, 1, 1, new Set())).toEqual([]);
    expect(entryRewardsDue(levels, 0, 1, new Set(['Silver']))).toEqual([]);
    // Any path of promotions and downgrades: each tier's reward is paid at most once, and every tier reached
    // with a reward is paid exactly once.
    fc.assert(
      fc.property(tableArb, fc.array(fc.nat(5), { maxLength: 30 }), (t, path) => {
        const paid = new Set<string>();
        const count = new Map<string, number>();
        let held = 0;
        for (const raw of path) {
          const to = raw % t.length;
          if (to > held) {
            for (const level of entryRewardsDue(t, held, to, paid)) {
              paid.add(level.name);
              count.set(level.name, (count.get(level.name) ?? 0) + 1);
            }
          }
          held = to;
        }
        for (const n of count.values()) expect(n).toBe(1);
        const reached = Math.max(0, ...path.map((p) => p % t.length));
        for (const [i, level] of t.entries()) {
          if (i > 0 && i <= reached && level.entryReward > 0) expect(count.get(level.name)).toBe(1);
        }
      }),
    );
  });
});

describe('the tier multiplier', () => {
  it('rounds down once, never pays less than ×1 would, and combines with the streak by multiplying', () => {
    expect(tierReward(100n, 125)).toBe(125n);
    expect(tierReward(7n, 150)).toBe(10n);
    // A 100 pts check-in at streak ×1.5 (150) for a ×1.25 member: floor(150 × 1.25) = 187.
    expect(tierReward(150n, 125)).toBe(187n);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 100, max: 1000 }), (amount, m) => {
        const paid = tierReward(amount, m);
        expect(paid >= amount).toBe(true);
        expect(paid * 100n <= amount * BigInt(m)).toBe(true);
        expect((paid + 1n) * 100n > amount * BigInt(m)).toBe(true);
      }),
    );
  });
});

describe('the period’s turn', () => {
  const turn = new Date('2027-01-01T00:00:00Z');
  it('promotes at once, downgrades after the grace, and a regained tier ends the grace', () => {
    expect(turnDecision({ index: 1, graceUntil: null }, 2, turn, turn, 30)).toEqual({ index: 2, graceUntil: null });
    expect(turnDecision({ index: 2, graceUntil: null }, 0, turn, turn, 0)).toEqual({ index: 0, graceUntil: null });
    const inGrace = turnDecision({ index: 2, graceUntil: null }, 0, turn, turn, 30);
    expect(inGrace).toEqual({ index: 2, graceUntil: new Date('2027-01-31T00:00:00Z') });
    const later = new Date('2027-01-31T00:00:00Z');
    expect(turnDecision(inGrace, 1, turn, later, 30)).toEqual({ index: 1, graceUntil: null });
    expect(turnDecision(inGrace, 2, turn, new Date('2027-01-10T00:00:00Z'), 30)).toEqual({
      index: 2,
      graceUntil: null,
    });
    fc.assert(
      fc.property(fc.nat(5), fc.nat(5), fc.nat(60), fc.nat(90), (held, computed, grace, day) => {
        const now = new Date(turn.getTime() + day * 86_400_000);
        const d = turnDecision({ index: held, graceUntil: null }, computed, turn, now, grace);
        if (computed >= held || day >= grace) expect(d.index).toBe(computed);
        else expect(d.index).toBe(held);
      }),
    );
  });
});
