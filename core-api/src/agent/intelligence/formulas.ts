/**
 * Pure formulas of the intelligence tools (docs/agent-api/intelligence.md). Kept apart from SQL so each one
 * is table-tested against hand-computed values; the repository only gathers the counts they take.
 */

export type Archetype = 'dormant' | 'newcomer' | 'redeemer' | 'streaker' | 'explorer' | 'collector';

/** What the archetype rule reads about one member of one brand (or of the network). */
export interface ActivityProfile {
  /** Accepted events in the window. */
  events: number;
  /** Distinct event types among them. */
  distinctEventTypes: number;
  /** Distinct UTC days with at least one accepted event. */
  activeDays: number;
  /** Days since the last accepted event (null: never active). */
  daysSinceLastEvent: number | null;
  /** Redemptions (pending or confirmed) in the window. */
  redemptions: number;
  /** pts earned in the window. */
  earned: bigint;
  /** pts spent on redemptions in the window. */
  spent: bigint;
}

/** Days without activity after which a member is dormant. */
export const DORMANT_AFTER_DAYS = 30;

/**
 * Rule-based archetype, first match wins:
 * dormant (no event for 30 days or never) · newcomer (< 3 events) · redeemer (spent ≥ 50 % of earned and
 * ≥ 1 redemption) · streaker (active on ≥ 50 % of the days of the window, ≥ 5 days) · explorer (≥ 3
 * distinct event types) · collector (the rest: earns and keeps).
 */
export function classifyArchetype(p: ActivityProfile, windowDays: number): Archetype {
  if (p.daysSinceLastEvent === null || p.daysSinceLastEvent > DORMANT_AFTER_DAYS) return 'dormant';
  if (p.events < 3) return 'newcomer';
  if (p.redemptions >= 1 && p.earned > 0n && p.spent * 2n >= p.earned) return 'redeemer';
  if (p.activeDays >= 5 && p.activeDays * 2 >= windowDays) return 'streaker';
  if (p.distinctEventTypes >= 3) return 'explorer';
  return 'collector';
}

/** Share of a population strictly below `value`, in percent (0–100, 1 decimal); null on an empty population. */
export function percentileRank(below: number, population: number): number | null {
  if (population <= 0) return null;
  return Math.round((below / population) * 1000) / 10;
}

/**
 * Heat of a perk: redemptions in the last 7 days weighted 2×, in the 8–30 days before 1×, divided by 30
 * days' equivalent → "weighted redemptions per day". 0 when none.
 */
export function heatScore(last7: number, last30: number): number {
  const older = Math.max(0, last30 - last7);
  return round2((2 * last7 + older) / 30);
}

/** Redemptions per day over the last 30 days. */
export function redemptionVelocity(last30: number): number {
  return round2(last30 / 30);
}

/** Days until the supply runs out at `perDay` (null: unlimited supply or no recent redemption). */
export function daysToSellOut(remaining: bigint | null, last30: number): number | null {
  if (remaining === null || last30 <= 0) return null;
  if (remaining <= 0n) return 0;
  return Math.ceil((Number(remaining) * 30) / last30);
}

/** Conversion rate of a funnel step in percent (1 decimal), null when nobody entered it. */
export function conversionRate(converted: number, entered: number): number | null {
  if (entered <= 0) return null;
  return Math.round((converted / entered) * 1000) / 10;
}

/**
 * Goal estimate: pts missing and days at the member's own earning rate (earned over the window /
 * window days). null days when the member earned nothing in the window (no rate to extrapolate).
 */
export function goalEstimate(
  cost: bigint,
  balance: bigint,
  earnedInWindow: bigint,
  windowDays: number,
): { missing: bigint; progressPercent: number; dailyRate: number; estimatedDays: number | null } {
  const missing = cost > balance ? cost - balance : 0n;
  const progressPercent = cost <= 0n ? 100 : Math.min(100, Math.floor(Number((balance * 1000n) / cost)) / 10);
  const dailyRate = round2(Number(earnedInWindow) / windowDays);
  let estimatedDays: number | null;
  if (missing === 0n) estimatedDays = 0;
  else if (earnedInWindow <= 0n) estimatedDays = null;
  else estimatedDays = Math.ceil((Number(missing) * windowDays) / Number(earnedInWindow));
  return { missing, progressPercent, dailyRate, estimatedDays };
}

/**
 * Recommendation score of a perk for a member (0–100):
 * 50 × affordability (balance / cost, capped at 1) + 30 × popularity (the perk's 30-day redemptions / the
 * brand's most redeemed perk's) + 20 × novelty (1 if the member never redeemed it, else 0).
 */
export function perkRecommendationScore(input: {
  balance: bigint;
  cost: bigint;
  redemptions30: number;
  maxRedemptions30: number;
  alreadyRedeemed: boolean;
}): number {
  const affordability = input.cost <= 0n ? 1 : Math.min(1, Number((input.balance * 10000n) / input.cost) / 10000);
  const popularity = input.maxRedemptions30 > 0 ? input.redemptions30 / input.maxRedemptions30 : 0;
  const novelty = input.alreadyRedeemed ? 0 : 1;
  return round2(50 * affordability + 30 * popularity + 20 * novelty);
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Every archetype, in the order distributions list them. */
export const ARCHETYPES: readonly Archetype[] = [
  'dormant',
  'newcomer',
  'redeemer',
  'streaker',
  'explorer',
  'collector',
];

/** `n` of `of` in percent, 1 decimal; 0 when `of` is 0. */
export function sharePercent(n: number, of: number): number {
  return of > 0 ? Math.round((n / of) * 1000) / 10 : 0;
}

/** How many members have each archetype and their share (%), every archetype listed (0 when none). */
export function archetypeDistribution(
  archetypes: Archetype[],
): { archetype: Archetype; members: number; share: number }[] {
  const counts = new Map<Archetype, number>();
  for (const a of archetypes) counts.set(a, (counts.get(a) ?? 0) + 1);
  return ARCHETYPES.map((archetype) => {
    const members = counts.get(archetype) ?? 0;
    return { archetype, members, share: sharePercent(members, archetypes.length) };
  });
}

/** Lower median of integers (the middle value, or the lower of the two middle ones); null when empty. */
export function lowerMedian(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
}

/** The most frequent value (ties: the smallest); null when empty. */
export function mostCommon(values: number[]): number | null {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: number | null = null;
  for (const [value, n] of counts) {
    const bestN = best === null ? 0 : (counts.get(best) ?? 0);
    if (n > bestN || (n === bestN && best !== null && value < best)) best = value;
  }
  return best;
}

/** `n / of` rounded to 2 decimals; 0 when `of` is 0. */
export function ratio(n: number, of: number): number {
  return of > 0 ? round2(n / of) : 0;
}
