import { AppError, isWithinWindow, type TierLevel, tierIndexFor, type Value } from '@pts/shared';
import { DROP_CLAIM_EVENT_TYPE } from '../drops/drops.service.ts';
import {
  campaignPostedAt,
  campaignRewardOf,
  heldTierReward,
  type JudgeSettings,
  judgeCampaignLimit,
  judgeEvent,
  ruleRewardOf,
  skipsCooldown,
} from '../events/event-rules.ts';
import type { ClaimCounter, RuleRecord } from '../events/events.repository.ts';
import { MANUAL_AWARD_EVENT_TYPE } from '../events/events.service.ts';
import { CHECKIN_EVENT_TYPE, MILESTONE_EVENT_TYPE } from '../streaks/streaks.service.ts';
import { TIER_ENTRY_EVENT_TYPE } from '../tiers/tiers.repository.ts';

/**
 * The simulator's replay (docs/simulator.md): the window's events, in the order they were judged, through the
 * event path's own pure steps — `ruleRewardOf` (fixed or rate), `campaignRewardOf`, `heldTierReward`, then
 * `judgeEvent` and `judgeCampaignLimit` against claim counters, rule totals and campaign counters kept here in
 * memory, moved exactly as the batcher moves them on accept. No rule is decided in this file: it only keeps the
 * state the judge reads. Pure: the service feeds it pages of rows and reads the result.
 */

/** One row of the window as the replay reads it (events, with its externalId when it had one). */
export interface ReplayEvent {
  id: string;
  eventType: string;
  member: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  source: string | null;
  sentBy: string | null;
  metadata: Record<string, unknown>;
  rewardAmount: bigint;
  value: Value | undefined;
  valueMinor: bigint | null;
  externalId: string | undefined;
  createdAt: Date;
}

/** A campaign's terms as the replay pays them. */
export interface ReplayCampaign {
  id: string;
  reward: number | null;
  rewardMultiplier: number | null;
  maxClaimsPerUser: number;
  startDate: Date;
  endDate: Date;
}

/** A tier table as the replay reads it (tiers.repository's BrandTierTable, or a proposed one). */
export interface ReplayTiers {
  basis: 'earned' | 'spent';
  levels: TierLevel[];
}

/** Everything fixed for one replay: the rules and terms it judges under, and the state at the window's start. */
export interface ReplaySetup {
  /** The rules by event type: the current ones with the proposal applied. */
  rules: Map<string, RuleRecord>;
  campaigns: Map<string, ReplayCampaign>;
  currency: string;
  settings: JudgeSettings;
  /** The table the simulated column pays under (the proposed one, else the current one). */
  tiers: ReplayTiers | undefined;
  /** The table in force, for the actual column's tier distribution. */
  currentTiers: ReplayTiers | undefined;
  /** Claim counters at the window's start, by counterKey (member, event type or `campaign:<id>`). */
  counters: Map<string, Pick<ClaimCounter, 'claims' | 'last_claim_at'>>;
  /** Each capped rule's claims at the window's start, by event type. */
  ruleTotals: Map<string, number>;
  /** Each member's tier basis (pts earned, value spent) over the simulated table's period at the window's start. */
  tierBasis: Map<string, { earned: bigint; spent: bigint }>;
  /** The same over the current table's period (the actual column's tiers). */
  currentTierBasis: Map<string, { earned: bigint; spent: bigint }>;
}

/**
 * The event types recorded by paths that decide their own amount (server awards, the brand's manual awards, tier
 * entry rewards): kept as recorded in both columns. Their accepted rows still move the claim counters of their
 * type, as in the live path.
 */
export const PASS_THROUGH_EVENT_TYPES: ReadonlySet<string> = new Set([
  MANUAL_AWARD_EVENT_TYPE,
  TIER_ENTRY_EVENT_TYPE,
  CHECKIN_EVENT_TYPE,
  MILESTONE_EVENT_TYPE,
  DROP_CLAIM_EVENT_TYPE,
]);

/**
 * Refusals the judge (or the rule's reward) gave, which another rule may decide otherwise: these events are
 * judged again. Every other refusal (unknown brand or domain, signature, blocked member, a repeated externalId,
 * a bad value) happened before the rules and stays a refusal in both columns.
 */
export const REPLAYED_REFUSALS: ReadonlySet<string> = new Set([
  'DUPLICATE_EVENT',
  'COOLDOWN_ACTIVE',
  'MAX_CLAIMS_REACHED',
  'MAX_TOTAL_CLAIMS_REACHED',
  'VALUE_BELOW_MINIMUM',
]);

/** A member's pts in both columns. */
export interface MemberOutcome {
  actual: bigint;
  simulated: bigint;
  /** Tier index reached under the current table (actual) and the simulated one. */
  actualTier: number;
  simulatedTier: number;
}

export interface ReplayResult {
  members: Map<string, MemberOutcome>;
  replayed: number;
  passedThrough: number;
}

/** The key of a claim counter (member, event type), as the batcher keys `claim_counters`. */
export function counterKey(member: string, eventType: string): string {
  return `${member}\u0000${eventType}`;
}

/** Whether the replay judges this row again (else it passes through as recorded). */
export function isReplayed(event: Pick<ReplayEvent, 'eventType' | 'status' | 'reason'>): boolean {
  if (PASS_THROUGH_EVENT_TYPES.has(event.eventType)) return false;
  return event.status === 'accepted' || (event.reason !== null && REPLAYED_REFUSALS.has(event.reason));
}

/** A replay: `step` each row of the window in order, then `result`. */
export function createReplay(setup: ReplaySetup) {
  const counters = new Map<string, Pick<ClaimCounter, 'claims' | 'last_claim_at' | 'last_event_id'>>();
  const ruleTotals = new Map(setup.ruleTotals);
  const members = new Map<string, MemberOutcome & { basis: { earned: bigint; spent: bigint }; simBasis: bigint }>();
  let replayed = 0;
  let passedThrough = 0;

  const counterOf = (key: string) => {
    let counter = counters.get(key);
    if (!counter) {
      const start = setup.counters.get(key);
      counter = { claims: start?.claims ?? 0, last_claim_at: start?.last_claim_at ?? null, last_event_id: null };
      counters.set(key, counter);
    }
    return counter;
  };

  const basisOf = (tiers: ReplayTiers, basis: { earned: bigint; spent: bigint }) =>
    tiers.basis === 'earned' ? basis.earned : basis.spent;

  const memberOf = (member: string) => {
    let outcome = members.get(member);
    if (!outcome) {
      const none = { earned: 0n, spent: 0n };
      const basis = { ...(setup.currentTierBasis.get(member) ?? none) };
      const simBasis = setup.tiers ? basisOf(setup.tiers, setup.tierBasis.get(member) ?? none) : 0n;
      outcome = {
        actual: 0n,
        simulated: 0n,
        actualTier: setup.currentTiers
          ? tierIndexFor(setup.currentTiers.levels, basisOf(setup.currentTiers, basis))
          : 0,
        simulatedTier: setup.tiers ? tierIndexFor(setup.tiers.levels, simBasis) : 0,
        basis,
        simBasis,
      };
      members.set(member, outcome);
    }
    return outcome;
  };

  /** The batcher's moves on accept: the counters claimed, the capped rule's total, the tier basis. */
  const claim = (event: ReplayEvent, keys: string[], rule: RuleRecord | undefined) => {
    for (const key of keys) {
      const counter = counterOf(key);
      counter.claims += 1;
      counter.last_claim_at = event.createdAt;
      counter.last_event_id = event.id;
    }
    if (rule && rule.max_total_claims !== null) {
      ruleTotals.set(rule.event_type, (ruleTotals.get(rule.event_type) ?? 0) + 1);
    }
  };

  /** What the event earns under the setup's rules, or undefined when it is refused. */
  const judge = (
    event: ReplayEvent,
    held: number,
  ): { amount: bigint; keys: string[]; rule: RuleRecord } | undefined => {
    const rule = setup.rules.get(event.eventType);
    if (!rule?.active || rule.archived_at) return undefined;
    const input = { eventType: event.eventType, externalId: event.externalId, value: event.value };
    let amount: bigint;
    try {
      amount = ruleRewardOf(rule, input, setup.currency);
    } catch (error) {
      if (error instanceof AppError) return undefined;
      throw error;
    }
    const signed = event.sentBy !== null;
    const campaignId = signed ? event.metadata.campaign_id : undefined;
    let campaign: ReplayCampaign | undefined;
    if (campaignId !== undefined) {
      campaign = typeof campaignId === 'string' ? setup.campaigns.get(campaignId) : undefined;
      const at = campaignPostedAt(event.metadata, event.createdAt);
      if (!campaign || !isWithinWindow({ startsAt: campaign.startDate, endsAt: campaign.endDate }, at))
        return undefined;
      amount = campaignRewardOf(campaign, amount);
    }
    if (setup.tiers) amount = heldTierReward(setup.tiers.levels, held, amount);
    const source = event.source ?? undefined;
    const candidate = {
      input,
      rule,
      source,
      skipCooldown: skipsCooldown(source, signed, event.metadata),
    };
    const key = counterKey(event.member, event.eventType);
    const total =
      rule.max_total_claims === null
        ? undefined
        : { total: ruleTotals.get(rule.event_type) ?? 0, max: rule.max_total_claims };
    const campaignKey = campaign ? counterKey(event.member, `campaign:${campaign.id}`) : undefined;
    const refusal =
      judgeEvent(candidate, counterOf(key), total, event.createdAt, setup.settings) ??
      (campaign && campaignKey ? judgeCampaignLimit(candidate, campaign, counterOf(campaignKey)) : undefined);
    if (refusal) return undefined;
    return { amount, keys: campaignKey ? [key, campaignKey] : [key], rule };
  };

  /** The tier a member holds after an accepted event: promotions at once, never down inside the window. */
  const promote = (outcome: ReturnType<typeof memberOf>, event: ReplayEvent) => {
    if (event.eventType === TIER_ENTRY_EVENT_TYPE) return;
    if (setup.currentTiers) {
      const index = tierIndexFor(setup.currentTiers.levels, basisOf(setup.currentTiers, outcome.basis));
      outcome.actualTier = Math.max(outcome.actualTier, index);
    }
    if (setup.tiers)
      outcome.simulatedTier = Math.max(outcome.simulatedTier, tierIndexFor(setup.tiers.levels, outcome.simBasis));
  };

  const countsForTiers = (event: ReplayEvent) => event.eventType !== TIER_ENTRY_EVENT_TYPE;

  return {
    step(event: ReplayEvent): void {
      const outcome = memberOf(event.member);
      const accepted = event.status === 'accepted';
      if (accepted) {
        outcome.actual += event.rewardAmount;
        if (countsForTiers(event)) {
          outcome.basis.earned += event.rewardAmount;
          outcome.basis.spent += event.valueMinor ?? 0n;
        }
      }
      if (!isReplayed(event)) {
        passedThrough += 1;
        if (accepted) {
          outcome.simulated += event.rewardAmount;
          if (setup.tiers && countsForTiers(event)) {
            outcome.simBasis += setup.tiers.basis === 'earned' ? event.rewardAmount : (event.valueMinor ?? 0n);
          }
          claim(event, [counterKey(event.member, event.eventType)], setup.rules.get(event.eventType));
          promote(outcome, event);
        }
        return;
      }
      replayed += 1;
      const earned = judge(event, outcome.simulatedTier);
      if (earned) {
        outcome.simulated += earned.amount;
        if (setup.tiers) outcome.simBasis += setup.tiers.basis === 'earned' ? earned.amount : (event.valueMinor ?? 0n);
        claim(event, earned.keys, earned.rule);
      }
      if (accepted || earned) promote(outcome, event);
    },
    result(): ReplayResult {
      const result = new Map<string, MemberOutcome>();
      for (const [member, { actual, simulated, actualTier, simulatedTier }] of members) {
        result.set(member, { actual, simulated, actualTier, simulatedTier });
      }
      return { members: result, replayed, passedThrough };
    },
  };
}
