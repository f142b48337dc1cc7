/**
 * How much of a reward a refund takes back, and how a member's debt is paid (issue 35 §2; docs/chain.md,
 * "Taking rewards back"). Pure: the reversal service, the simulator and the tests all use these.
 *
 * A partial refund takes back the same share of the event's reward as of its value. The share is computed on the
 * running total of refunds, rounded down (in the member's favour), and each reversal takes the difference from
 * what the earlier ones took: however an order is refunded (30 % then 70 %, or ten 10 % refunds), the reversals
 * together take back exactly the whole reward when the whole value is refunded, and never more.
 */

/** What the event being reversed paid, and what reversals of it have taken so far. */
export interface ReversibleEvent {
  /** The reward the event paid, in pts (a whole number ≥ 0). */
  reward: number;
  /** The event's value in minor units (cents), when it carried one. */
  valueMinor?: bigint | undefined;
  /** The value refunded by earlier reversals, in minor units (0n when none, or when the event had no value). */
  refundedMinor: bigint;
  /** The pts earlier reversals took back (on chain and as debt together). */
  reversedPts: number;
}

export type ReversalShare =
  | { ok: true; pts: number; refundedMinor: bigint }
  | { ok: false; reason: 'NOTHING_LEFT' | 'NO_VALUE' | 'EXCEEDS_VALUE'; message: string };

/**
 * The pts a reversal takes back. `refundMinor` absent reverses everything still standing (a full refund, a
 * correction). With a refund value the event must have carried a value and the refunds may not exceed it.
 */
export function reversalShare(event: ReversibleEvent, refundMinor?: bigint): ReversalShare {
  const left = event.reward - event.reversedPts;
  if (left <= 0) {
    return { ok: false, reason: 'NOTHING_LEFT', message: 'Every pt this event paid was already taken back' };
  }
  if (refundMinor === undefined) {
    return { ok: true, pts: left, refundedMinor: event.valueMinor ?? event.refundedMinor };
  }
  const value = event.valueMinor;
  if (value === undefined || value <= 0n) {
    return {
      ok: false,
      reason: 'NO_VALUE',
      message:
        'The event carried no value, so a part of it cannot be refunded by value: leave `value` out to reverse it all',
    };
  }
  const refunded = event.refundedMinor + refundMinor;
  if (refundMinor <= 0n || refunded > value) {
    return {
      ok: false,
      reason: 'EXCEEDS_VALUE',
      message: `A refund must be more than 0 and at most what is left of the event's value (${value - event.refundedMinor} minor units)`,
    };
  }
  const dueInAll = Number((BigInt(event.reward) * refunded) / value);
  return { ok: true, pts: Math.max(0, Math.min(left, dueInAll - event.reversedPts)), refundedMinor: refunded };
}

/** How a reversal of `pts` splits when the wallet holds `held`: taken back on chain, the rest owed. */
export function splitReversal(pts: number, held: bigint): { taken: number; debt: number } {
  const taken = BigInt(pts) < held ? pts : Number(held);
  return { taken, debt: pts - taken };
}

/** A new reward pays the member's debt first: what is minted and what the debt becomes. */
export function payDebtFirst(reward: number, debt: number): { mint: number; paysDebt: number; debtLeft: number } {
  const paysDebt = Math.min(reward, debt);
  return { mint: reward - paysDebt, paysDebt, debtLeft: debt - paysDebt };
}
