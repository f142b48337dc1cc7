import { rateReward, rateTermsOf, type StoredRateTerms } from '@pts/shared';
import { PTS_PER_CENT, tokensForCents } from '../../modules/payments/payment-amounts.ts';

/**
 * Pure formulas of the analytics, comparison and trend tools (docs/agent-api/analytics.md). The repository
 * gathers counts; these turn counts into rates, growth, health and momentum, and are table-tested against
 * hand-computed values. Every ratio has a defined answer on empty data (null or 0, never NaN).
 */

export {
  PERIODS,
  type Period,
  periodWindows,
  type TimeWindow,
} from '../../modules/analytics/periods.ts';

/** Rounds to `digits` decimals (half away from zero for the positive values used here). */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** `part ÷ whole` in percent, 1 decimal; null when `whole` is 0 (nothing to divide). */
export function percentOf(part: number, whole: number): number | null {
  return whole > 0 ? round((part / whole) * 100) : null;
}

/** `numerator ÷ denominator`, 2 decimals; 0 when the denominator is 0. */
export function ratio(numerator: number, denominator: number): number {
  return denominator > 0 ? round(numerator / denominator, 2) : 0;
}

/** Growth from `previous` to `current` in percent, 1 decimal; null when `previous` is 0 (no base). */
export function growthPercent(current: number, previous: number): number | null {
  return previous > 0 ? round(((current - previous) / previous) * 100) : null;
}

/**
 * Trend momentum: `(current − previous) ÷ (previous + 1)`, 2 decimals. The +1 (add-one smoothing) gives a new
 * item a finite score and keeps "1 → 2" from outranking "100 → 180" by raw growth alone.
 */
export function momentum(current: number, previous: number): number {
  return round((current - previous) / (previous + 1), 2);
}

/** What the health score reads about one brand over the last 30 days (and the 30 before). */
export interface HealthInput {
  /** Distinct members with an accepted event in the window. */
  members: number;
  /** Distinct members with an accepted event in the previous window. */
  previousMembers: number;
  /** Members of the previous window also active in this one. */
  retainedMembers: number;
  /** Accepted events in the window. */
  events: number;
  /** Distinct members with a redemption (pending or confirmed) in the window. */
  redeemers: number;
  /** Members whose streak is ≥ 2 and was last extended in the window. */
  streakMembers: number;
  /** Active event rules. */
  activeRules: number;
  /** Active perks with supply left. */
  availablePerks: number;
}

export type HealthComponentName = 'engagement' | 'retention' | 'growth' | 'redemption' | 'program';

export interface HealthComponent {
  name: HealthComponentName;
  /** Null when the component cannot be measured yet (`note` says why); the score leaves it out. */
  score: number | null;
  max: 20;
  /** The value the score was computed from, as the docs define it. */
  value: number | null;
  note?: string;
}

/** Why retention is not scored for a brand with nobody active in the previous window. */
export const NOT_ENOUGH_HISTORY = 'Not enough history: no member was active in the previous 30 days';

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** Full engagement at this many accepted events per active member in 30 days. */
export const ENGAGEMENT_FULL_EVENTS_PER_MEMBER = 4;
/** Full redemption score when this share of active members redeemed in 30 days. */
export const REDEMPTION_FULL_SHARE = 0.2;
/** Full streak points when this share of active members holds a streak of 2+. */
export const STREAK_FULL_SHARE = 0.25;

/**
 * Five components of 20 points each (docs/agent-api/analytics.md, "Health score"):
 * - engagement = 20 × min(1, events per member ÷ 4);
 * - retention = 20 × retained ÷ previous members; without previous members it is not scored (not enough
 *   history: a new brand's members cannot have "not come back");
 * - growth = clamp(10 + 10 × growth, 0, 20) with growth = (members − previous) ÷ previous; without previous
 *   members: 20 when there are members now, else 0;
 * - redemption = 20 × min(1, redeemers ÷ members ÷ 0.2);
 * - program = 5 (an active rule) + 5 (an available perk) + 10 × min(1, streak members ÷ members ÷ 0.25).
 * Each component is rounded to 1 decimal; the score is the rounded sum over the scored components, scaled
 * to 100 when one is not scored (sum ÷ their maxima × 100).
 */
export function healthComponents(h: HealthInput): HealthComponent[] {
  const perMember = h.members > 0 ? h.events / h.members : 0;
  const retention = h.previousMembers > 0 ? h.retainedMembers / h.previousMembers : null;
  const growth = h.previousMembers > 0 ? (h.members - h.previousMembers) / h.previousMembers : null;
  const redeemShare = h.members > 0 ? h.redeemers / h.members : 0;
  const streakShare = h.members > 0 ? h.streakMembers / h.members : 0;
  const growthScore = growth === null ? (h.members > 0 ? 20 : 0) : clamp(10 + 10 * growth, 0, 20);
  const program =
    (h.activeRules > 0 ? 5 : 0) + (h.availablePerks > 0 ? 5 : 0) + 10 * Math.min(1, streakShare / STREAK_FULL_SHARE);
  return [
    {
      name: 'engagement',
      score: round(20 * Math.min(1, perMember / ENGAGEMENT_FULL_EVENTS_PER_MEMBER)),
      max: 20,
      value: round(perMember, 2),
    },
    retention === null
      ? { name: 'retention', score: null, max: 20, value: null, note: NOT_ENOUGH_HISTORY }
      : { name: 'retention', score: round(20 * retention), max: 20, value: round(retention * 100) },
    { name: 'growth', score: round(growthScore), max: 20, value: growth === null ? null : round(growth * 100) },
    {
      name: 'redemption',
      score: round(20 * Math.min(1, redeemShare / REDEMPTION_FULL_SHARE)),
      max: 20,
      value: round(redeemShare * 100),
    },
    { name: 'program', score: round(program), max: 20, value: round(streakShare * 100) },
  ];
}

/** The letter of a 0–100 score: A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, F below. */
export function healthGrade(score: number): 'A' | 'B' | 'C' | 'D' | 'F' {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}

const STRENGTH: Record<HealthComponentName, string> = {
  engagement: 'Members come back often (many events per active member)',
  retention: 'Most members of the previous 30 days are still active',
  growth: 'Active members are growing',
  redemption: 'Members redeem their pts for perks',
  program: 'A complete program: active rules, available perks and members on streaks',
};
const WEAKNESS: Record<HealthComponentName, string> = {
  engagement: 'Few events per active member',
  retention: 'Members of the previous 30 days are not coming back',
  growth: 'Active members are not growing',
  redemption: 'Few members redeem pts',
  program: 'The program lacks active rules, available perks or members on streaks',
};
const RECOMMENDATION: Record<HealthComponentName, string> = {
  engagement: 'Add a repeatable low-effort event (a daily check-in or visit) so members earn between purchases',
  retention: 'Reward returning members: a streak milestone or a comeback bonus',
  growth: 'Reach new members: a welcome bonus event or a listing on partner sites',
  redemption: 'Add a perk priced near what a typical member earns in a month',
  program: 'Keep at least one active rule and one perk with supply, and enable streak rewards',
};

/**
 * The health answer: score (rounded sum of the scored components, scaled to 100 over their maxima), grade,
 * and per scored component a strength (≥ 75 % of its max), a weakness (< 40 %) with its recommendation; a
 * component that cannot be measured yet is neither, and `notEnoughHistory` names it.
 */
export function healthReport(h: HealthInput) {
  const components = healthComponents(h);
  const scored = components.flatMap((c) => (c.score === null ? [] : [{ ...c, score: c.score }]));
  const maxima = scored.reduce((s, c) => s + c.max, 0);
  const sum = scored.reduce((s, c) => s + c.score, 0);
  const score = maxima > 0 ? Math.round((sum * 100) / maxima) : 0;
  return {
    score,
    grade: healthGrade(score),
    components,
    strengths: scored.filter((c) => c.score >= 0.75 * c.max).map((c) => STRENGTH[c.name]),
    weaknesses: scored.filter((c) => c.score < 0.4 * c.max).map((c) => WEAKNESS[c.name]),
    recommendations: scored.filter((c) => c.score < 0.4 * c.max).map((c) => RECOMMENDATION[c.name]),
    notEnoughHistory: components.filter((c) => c.score === null).map((c) => c.name),
  };
}

/** Percent of a purchase returned as pts: 100 × reward pts ÷ the pts that many USD cents buy; 2 decimals. */
export function cashbackPercent(rewardPts: bigint, purchaseCents: bigint): number | null {
  const bought = tokensForCents(purchaseCents);
  return bought > 0n ? round((Number(rewardPts) * 100) / Number(bought), 2) : null;
}

/** pts per USD at the purchase rate (1000). */
export const PTS_PER_USD = Number(tokensForCents(100n));

/** The USD value of `pts` at the purchase rate (1 cent = PTS_PER_CENT pts), exact, as `"0.100"` (3 decimals). */
export function ptsToUsd(pts: bigint): string {
  const perUsd = PTS_PER_CENT * 100n;
  return `${pts / perUsd}.${(pts % perUsd).toString().padStart(3, '0')}`;
}

/** Event types read as purchases (docs/agent-api/analytics.md, "compare_cashback"): `earn` or any type containing purchase, order or checkout. */
export const PURCHASE_EVENT = /(^earn$|purchase|order|checkout)/;

/** What a purchase rule needs to be compared. */
export interface PurchaseRuleLike {
  eventType: string;
  /** The fixed reward (0 for a rate rule). */
  rewardAmount: bigint;
  /** A rate rule's terms: it pays by the purchase's value. */
  rate?: StoredRateTerms | null | undefined;
  active: boolean;
}

/**
 * What the rule pays for a purchase of `purchaseCents` USD: its fixed amount, or its rate applied to the purchase
 * exactly as the rule judge does (rounding, cap; 0 below its minimum value). Undefined for a rate in another
 * currency than USD: no exchange rate is assumed, so such a rule cannot be priced for a USD purchase.
 */
export function purchaseRewardPts(rule: PurchaseRuleLike, purchaseCents: bigint): bigint | undefined {
  if (!rule.rate) return rule.rewardAmount;
  if (rule.rate.currency !== 'USD') return undefined;
  const terms = rateTermsOf(rule.rate);
  if (terms.minValueMinor !== null && purchaseCents < terms.minValueMinor) return 0n;
  return rateReward(terms, purchaseCents);
}

/**
 * The brand's best active purchase rule for a purchase of `purchaseCents` USD: the highest reward it pays (a rate
 * rule by the purchase's value), ties by event type; undefined when it has none that can be priced.
 */
export function bestPurchaseRule<R extends PurchaseRuleLike>(
  rules: readonly R[],
  purchaseCents: bigint,
): R | undefined {
  return rules
    .filter((r) => r.active && PURCHASE_EVENT.test(r.eventType))
    .flatMap((rule) => {
      const pts = purchaseRewardPts(rule, purchaseCents);
      return pts === undefined ? [] : [{ rule, pts }];
    })
    .sort((a, b) => (b.pts > a.pts ? 1 : b.pts < a.pts ? -1 : a.rule.eventType.localeCompare(b.rule.eventType)))[0]
    ?.rule;
}

/**
 * The best purchase rule priced for this purchase: its `rewardAmount` is what it pays for `purchaseCents` USD
 * (a rate rule's reward by the purchase's value), so every figure built on it (a member's total, the ranking)
 * uses the real rate rather than the rule's fixed 0.
 */
export function pricedPurchaseRule<R extends PurchaseRuleLike>(
  rules: readonly R[],
  purchaseCents: bigint,
): R | undefined {
  const rule = bestPurchaseRule(rules, purchaseCents);
  if (!rule?.rate) return rule;
  return { ...rule, rewardAmount: purchaseRewardPts(rule, purchaseCents) ?? 0n, rate: null };
}

/** What a purchase of `purchaseCents` USD earns under `rule` (fixed or by rate): pts, their USD value, cashback %. */
export function purchaseReward(rule: PurchaseRuleLike, purchaseCents: bigint) {
  const rewardPts = purchaseRewardPts(rule, purchaseCents) ?? 0n;
  return {
    rewardPts: rewardPts.toString(),
    rewardUsd: ptsToUsd(rewardPts),
    cashbackPercent: cashbackPercent(rewardPts, purchaseCents),
  };
}

/** What the brand ranking compares. */
export interface RankedActivity {
  brandId: string;
  members: number;
  events: number;
  ptsIssued: bigint;
}

/** Ranking order: more active members first, then more accepted events, then more pts issued, then Brand ID. */
export function compareBrandActivity(x: RankedActivity, y: RankedActivity): number {
  if (x.members !== y.members) return y.members - x.members;
  if (x.events !== y.events) return y.events - x.events;
  if (x.ptsIssued !== y.ptsIssued) return y.ptsIssued > x.ptsIssued ? 1 : -1;
  return x.brandId.localeCompare(y.brandId);
}
