/**
 * VIP tiers (issue 36 §1; docs/tiers.md): pure functions of a brand's tier table, a member's ledger total over
 * the table's period, and a time. Nothing here reads a clock or a database.
 *
 * - A table has 2–6 tiers ascending by threshold; the first starts at 0 (every member is in a tier).
 * - The basis is `earned` (pts of accepted events) or `spent` (the value of accepted events, in minor units
 *   of the brand's currency), summed over the period: the last 365 days, the calendar year (UTC), or since
 *   joining (`lifetime`).
 * - Multipliers: the tier's multiplier applies LAST, on whatever the rule paid — a fixed amount, a rate over
 *   the event's value, a campaign's amount, a check-in's amount × streak multiplier — and is rounded down
 *   once (`tierReward`). So tier and streak multiply: a 100 pts check-in at streak ×1.5 for a Gold ×1.25
 *   member pays floor(floor(100 × 1.5) × 1.25) = 187. Bonuses the server decides (milestones, drops, manual
 *   awards, entry rewards) are not multiplied.
 * - Entry rewards: paid once per member and tier, ever. A member promoted past several tiers at once gets each
 *   passed tier's entry reward that was never paid; keeping a tier, or regaining it after a downgrade at a
 *   period's turn, pays nothing again (`entryRewardsDue`).
 * - Downgrades happen only at the period's turn (`turnDecision`), after an optional grace of `graceDays`;
 *   promotions happen as soon as the total reaches a threshold.
 */

export const TIER_BASES = ['earned', 'spent'] as const;
export type TierBasis = (typeof TIER_BASES)[number];
export const TIER_PERIODS = ['rolling_365', 'calendar_year', 'lifetime'] as const;
export type TierPeriod = (typeof TIER_PERIODS)[number];

export const MIN_TIERS = 2;
export const MAX_TIERS = 6;
/** Multipliers are kept in hundredths: 1.25 → 125. */
export const MAX_TIER_MULTIPLIER = 10;

/** One tier as the rules read it: its threshold in basis units (pts, or minor units of the currency). */
export interface TierLevel {
  name: string;
  threshold: bigint;
  /** The earning multiplier in hundredths (100 = ×1). */
  multiplierHundredths: number;
  /** Pts paid once when a member first reaches this tier. */
  entryReward: number;
}

/** A brand's table as the rules read it. */
export interface TierTable {
  basis: TierBasis;
  period: TierPeriod;
  /** Days a member keeps a tier after a turn that would lower it (0 = downgraded at the turn). */
  graceDays: number;
  levels: TierLevel[];
}

/** Why a table is not valid, with what to fix; undefined when it is. */
export function tierTableProblem(levels: readonly TierLevel[]): { field: string; message: string } | undefined {
  if (levels.length < MIN_TIERS || levels.length > MAX_TIERS) {
    return { field: 'tiers', message: `must list ${MIN_TIERS} to ${MAX_TIERS} tiers, got ${levels.length}` };
  }
  if (levels[0]?.threshold !== 0n) {
    return { field: 'tiers.0.threshold', message: 'the first tier must start at 0: every member is in a tier' };
  }
  const names = new Set<string>();
  for (const [i, level] of levels.entries()) {
    const key = level.name.trim().toLowerCase();
    if (names.has(key)) return { field: `tiers.${i}.name`, message: `"${level.name}" is listed twice` };
    names.add(key);
    const previous = levels[i - 1];
    if (previous && level.threshold <= previous.threshold) {
      return {
        field: `tiers.${i}.threshold`,
        message: `thresholds must rise: "${level.name}" (${level.threshold}) is not above "${previous.name}" (${previous.threshold})`,
      };
    }
    if (previous && level.multiplierHundredths < previous.multiplierHundredths) {
      return {
        field: `tiers.${i}.multiplier`,
        message: `a higher tier may not earn less: "${level.name}" ×${level.multiplierHundredths / 100} is below "${previous.name}" ×${previous.multiplierHundredths / 100}`,
      };
    }
  }
  return undefined;
}

const DAY_MS = 86_400_000;

/** When the period a member's total is summed over starts, at `at`. */
export function tierPeriodStart(period: TierPeriod, at: Date): Date {
  switch (period) {
    case 'rolling_365':
      return new Date(at.getTime() - 365 * DAY_MS);
    case 'calendar_year':
      return new Date(Date.UTC(at.getUTCFullYear(), 0, 1));
    case 'lifetime':
      return new Date(0);
  }
}

/**
 * The last turn of the period at or before `at`: when downgrades are judged. A rolling window turns every UTC
 * day; a calendar year on 1 January; a lifetime total never turns by itself (only a reversal lowers it), so
 * it is judged on 1 January too.
 */
export function lastTierTurn(period: TierPeriod, at: Date): Date {
  if (period === 'rolling_365') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return new Date(Date.UTC(at.getUTCFullYear(), 0, 1));
}

/** The index of the tier a total reaches (the highest threshold at or below it). */
export function tierIndexFor(levels: readonly TierLevel[], total: bigint): number {
  let index = 0;
  for (const [i, level] of levels.entries()) if (total >= level.threshold) index = i;
  return index;
}

/** A member's standing: their tier, the next one, and what is left to reach it (basis units). */
export interface TierStanding {
  index: number;
  next: number | null;
  total: bigint;
  remaining: bigint | null;
}

/** Where `total` stands, for a member who holds tier `heldIndex` (kept through a grace, or above their total). */
export function tierStanding(levels: readonly TierLevel[], total: bigint, heldIndex?: number): TierStanding {
  const index = Math.max(tierIndexFor(levels, total), heldIndex ?? 0);
  const next = index + 1 < levels.length ? index + 1 : null;
  const nextLevel = next === null ? undefined : levels[next];
  const remaining = nextLevel ? (nextLevel.threshold > total ? nextLevel.threshold - total : 0n) : null;
  return { index, next, total, remaining };
}

/**
 * The entry rewards a promotion from `fromIndex` to `toIndex` pays: each tier passed (above `fromIndex`, up to
 * and including `toIndex`) with a reward and never paid to this member (`paid`: names of tiers already paid).
 */
export function entryRewardsDue(
  levels: readonly TierLevel[],
  fromIndex: number,
  toIndex: number,
  paid: ReadonlySet<string>,
): TierLevel[] {
  return levels.filter((level, i) => i > fromIndex && i <= toIndex && level.entryReward > 0 && !paid.has(level.name));
}

/** The one place a tier's multiplier meets a reward: `amount × multiplier`, rounded down (see the header). */
export function tierReward(amount: bigint, multiplierHundredths: number): bigint {
  return (amount * BigInt(multiplierHundredths)) / 100n;
}

/** What a member's stored tier becomes at a period's turn. */
export interface TurnDecision {
  index: number;
  /** Until when a member below their tier keeps it; null when not in a grace. */
  graceUntil: Date | null;
}

/**
 * The turn of the period for one member holding `held` (with `graceUntil` if a grace already runs) whose total
 * now reaches `computed`. Up: at once (promotions never wait). Down: after the grace that starts at the turn —
 * a member who regains the tier during the grace keeps it and the grace ends.
 */
export function turnDecision(
  held: { index: number; graceUntil: Date | null },
  computed: number,
  turnAt: Date,
  now: Date,
  graceDays: number,
): TurnDecision {
  if (computed >= held.index) return { index: computed, graceUntil: null };
  const graceUntil = held.graceUntil ?? new Date(turnAt.getTime() + graceDays * DAY_MS);
  if (now.getTime() >= graceUntil.getTime()) return { index: computed, graceUntil: null };
  return { index: held.index, graceUntil };
}
