import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { payDebtFirst, type ReversibleEvent, reversalShare, splitReversal } from './reversals.ts';

/** Applies refunds in order; returns what each took and the event's state after them. */
function applyRefunds(event: ReversibleEvent, refunds: (bigint | undefined)[]) {
  let state = event;
  const taken: number[] = [];
  for (const refund of refunds) {
    const share = reversalShare(state, refund);
    if (!share.ok) continue;
    taken.push(share.pts);
    state = { ...state, refundedMinor: share.refundedMinor, reversedPts: state.reversedPts + share.pts };
  }
  return { taken, state };
}

const eventArb = fc.record({
  reward: fc.integer({ min: 0, max: 1_000_000 }),
  valueMinor: fc.bigInt({ min: 1n, max: 10n ** 12n }),
});

describe('reversalShare', () => {
  it('30 % of the value takes back 30 % of the reward, rounded down; the rest takes the remainder', () => {
    const event = { reward: 25, valueMinor: 12_50n, refundedMinor: 0n, reversedPts: 0 };
    expect(reversalShare(event, 3_75n)).toEqual({ ok: true, pts: 7, refundedMinor: 3_75n });
    const { taken, state } = applyRefunds(event, [3_75n, 8_75n]);
    expect(taken).toEqual([7, 18]);
    expect(state.reversedPts).toBe(25);
  });

  it('a refund beyond the value left, of nothing, or by value on an event without one is refused with a reason', () => {
    const event = { reward: 10, valueMinor: 10_00n, refundedMinor: 6_00n, reversedPts: 6 };
    expect(reversalShare(event, 4_01n)).toMatchObject({ ok: false, reason: 'EXCEEDS_VALUE' });
    expect(reversalShare(event, 0n)).toMatchObject({ ok: false, reason: 'EXCEEDS_VALUE' });
    expect(reversalShare({ reward: 10, refundedMinor: 0n, reversedPts: 0 }, 1n)).toMatchObject({ reason: 'NO_VALUE' });
    expect(reversalShare({ ...event, reversedPts: 10 })).toMatchObject({ ok: false, reason: 'NOTHING_LEFT' });
  });

  it('whatever the refunds, together they never take back more than the reward, and all of it once all is refunded', () => {
    fc.assert(
      fc.property(
        eventArb,
        fc.array(fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: undefined }), { maxLength: 12 }),
        ({ reward, valueMinor }, refunds) => {
          const event = { reward, valueMinor, refundedMinor: 0n, reversedPts: 0 };
          const { taken, state } = applyRefunds(event, refunds);
          const sum = taken.reduce((a, b) => a + b, 0);
          expect(taken.every((pts) => Number.isInteger(pts) && pts >= 0)).toBe(true);
          expect(sum).toBe(state.reversedPts);
          expect(sum).toBeLessThanOrEqual(reward);
          // At every point the reversals took the rounded-down share of what was refunded, no more, no less.
          expect(sum).toBe(Number((BigInt(reward) * state.refundedMinor) / valueMinor));
          // Refunding what is left takes the rest.
          const rest = applyRefunds(state, [valueMinor - state.refundedMinor || undefined]);
          expect(state.reversedPts + rest.taken.reduce((a, b) => a + b, 0)).toBe(reward);
        },
      ),
    );
  });
});

describe('splitReversal and payDebtFirst', () => {
  it('take back at most what is held, owe the rest, and pay the debt before minting', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.bigInt({ min: 0n, max: 2_000_000n }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (pts, held, reward) => {
          const { taken, debt } = splitReversal(pts, held);
          expect(taken + debt).toBe(pts);
          expect(BigInt(taken) <= held && taken >= 0 && debt >= 0).toBe(true);
          expect(debt === 0 || BigInt(taken) === held).toBe(true);
          const paid = payDebtFirst(reward, debt);
          expect(paid.mint + paid.paysDebt).toBe(reward);
          expect(paid.debtLeft).toBe(debt - paid.paysDebt);
          expect(paid.mint === 0 || paid.debtLeft === 0).toBe(true);
        },
      ),
    );
  });
});
