import {
  AppError,
  describeRate,
  type EventRequest,
  rateFieldsOf,
  rateReward,
  rateTermsOf,
  type TierLevel,
  tierReward,
  toMinorUnits,
} from '@pts/shared';
import type { ClaimCounter, RuleRecord } from './events.repository.ts';

/**
 * The event rules of spec 4.1 (4–7) as one pure function: given the candidate, the user's locked claim
 * counter, the rule's running total and the time, the refusal — or undefined when the event earns. The
 * batcher calls it inside the accept transaction, after taking the locks that make its inputs current; it
 * reads nothing else, so it is tested as a table (event-rules.test.ts) with no database or chain.
 */

/** Per-user claims at these values are unlimited (spec 2.3). */
export function isUnlimited(maxClaims: number): boolean {
  return maxClaims === -1 || maxClaims === 999999;
}

export interface JudgeSettings {
  /** Same brand, type and user within this many seconds is a duplicate (PTS_DUPLICATE_WINDOW_SECONDS). */
  duplicateWindowSeconds: number;
}

/** What the rules look at of an event candidate (event-batcher.ts `EventCandidate`). */
export interface JudgedCandidate {
  input: Pick<EventRequest, 'eventType' | 'externalId'>;
  rule: Pick<RuleRecord, 'cooldown_hours' | 'max_claims_per_user'>;
  /** A privileged origin claimed by a signed request (bypasses duplicate window and max claims). */
  source: string | undefined;
  skipCooldown: boolean;
  skipDuplicateWindow?: boolean | undefined;
  /** The brand blocked this member (brand cache): refused before anything else, whatever the source. */
  memberBlocked?: { reason: string; blockedAt: Date } | undefined;
}

/** A blocked member (the brand's own block), then spec 4.1 rules 4–7 against the locked counter, in the spec's order. */
export function judgeEvent(
  c: JudgedCandidate,
  counter: Pick<ClaimCounter, 'claims' | 'last_claim_at' | 'last_event_id'>,
  total: { total: number; max: number | null } | undefined,
  now: Date,
  settings: JudgeSettings,
): AppError | undefined {
  const { input, rule, source } = c;
  if (c.memberBlocked) {
    return new AppError(
      'MEMBER_BLOCKED',
      `This member is blocked by the brand since ${c.memberBlocked.blockedAt.toISOString()}: their events earn nothing until the brand unblocks them`,
      { reason: 'member_blocked', blockedAt: c.memberBlocked.blockedAt.toISOString() },
    );
  }
  const sinceLast = counter.last_claim_at ? (now.getTime() - counter.last_claim_at.getTime()) / 1000 : Infinity;
  // An externalId names the event exactly (its repeats are caught by the key): the window, which guesses
  // from brand, type and user, would refuse two distinct orders or posts made within a minute.
  const exactlyNamed = input.externalId !== undefined;
  if (source === undefined && !c.skipDuplicateWindow && !exactlyNamed && sinceLast < settings.duplicateWindowSeconds) {
    return new AppError(
      'DUPLICATE_EVENT',
      `Duplicate event: ${input.eventType} was already recorded for this user ${Math.floor(sinceLast)} s ago`,
      {
        reason: 'duplicate',
        existingEventId: counter.last_event_id,
        duplicateWindowSeconds: settings.duplicateWindowSeconds,
      },
    );
  }
  const cooldownSeconds = rule.cooldown_hours * 3600;
  if (!c.skipCooldown && cooldownSeconds > 0 && sinceLast < cooldownSeconds) {
    const remaining = Math.ceil(cooldownSeconds - sinceLast);
    return new AppError(
      'COOLDOWN_ACTIVE',
      'Cooldown active',
      {
        message: `${input.eventType} can be rewarded again in ${remaining} s`,
        reason: 'cooldown_not_expired',
        cooldownSeconds,
        remainingSeconds: remaining,
        nextEligibleAt: new Date(now.getTime() + remaining * 1000).toISOString(),
      },
      { retryAfter: remaining },
    );
  }
  const maxClaims = rule.max_claims_per_user;
  if (source === undefined && !isUnlimited(maxClaims) && counter.claims >= maxClaims) {
    return new AppError('MAX_CLAIMS_REACHED', 'Max claims reached', {
      message: `This user already claimed ${input.eventType} ${counter.claims} time(s); the limit is ${maxClaims}`,
      reason: 'max_claims_reached',
      totalClaims: counter.claims,
      maxClaims,
    });
  }
  if (total && total.max !== null && total.total >= total.max) {
    return new AppError('MAX_TOTAL_CLAIMS_REACHED', 'Max total claims reached', {
      message: `${input.eventType} has reached its global limit of ${total.max} claims`,
      reason: 'max_total_claims_reached',
      totalClaims: total.total,
      maxTotal: total.max,
    });
  }
  return undefined;
}

/**
 * A hashtag campaign's per-user limit (its `max_claims_per_user`) against the user's locked campaign
 * counter: refused like the rule's own limit, 429 `max_claims_reached`, naming the campaign.
 */
export function judgeCampaignLimit(
  c: Pick<JudgedCandidate, 'input' | 'source'>,
  campaign: { id: string; maxClaimsPerUser: number },
  counter: Pick<ClaimCounter, 'claims'>,
): AppError | undefined {
  if (c.source !== undefined || isUnlimited(campaign.maxClaimsPerUser)) return undefined;
  if (counter.claims < campaign.maxClaimsPerUser) return undefined;
  return new AppError('MAX_CLAIMS_REACHED', 'Max claims reached', {
    message: `This user already claimed campaign ${campaign.id} ${counter.claims} time(s); its limit is ${campaign.maxClaimsPerUser}`,
    reason: 'max_claims_reached',
    totalClaims: counter.claims,
    maxClaims: campaign.maxClaimsPerUser,
    campaignId: campaign.id,
  });
}

/**
 * What an event earns under its rule before campaigns and limits: the fixed amount, or the rate over the
 * event's value (docs/shop-program.md). Refuses, with what to fix: a value in another currency than the
 * brand's (400, pts converts none), a rate rule's event without a value (400), and a value under the rate's
 * minimum (403 VALUE_BELOW_MINIMUM: recorded, but no claim is used). Pure and exact (bigint minor units).
 */
export function ruleRewardOf(
  rule: Pick<RuleRecord, 'event_type' | 'reward_amount' | 'rate'>,
  input: Pick<EventRequest, 'value'>,
  brandCurrency: string,
): bigint {
  const { value } = input;
  if (value && value.currency !== brandCurrency) {
    throw new AppError(
      'VALIDATION_ERROR',
      `value.currency ${value.currency} is not this brand's currency ${brandCurrency}: send the value in ${brandCurrency} (pts converts no currencies)`,
      { field: 'value.currency', value: value.currency, reason: 'currency_mismatch', brandCurrency },
    );
  }
  if (!rule.rate) return BigInt(rule.reward_amount);
  const shown = rateFieldsOf(rule.rate).rate!;
  if (!value) {
    throw new AppError(
      'VALIDATION_ERROR',
      `The ${rule.event_type} rule pays ${describeRate(shown)} of the event's value: send "value": {"amount": "12.50", "currency": "${shown.currency}"}`,
      { field: 'value', reason: 'value_required', rate: shown },
    );
  }
  const terms = rateTermsOf(rule.rate);
  const valueMinor = toMinorUnits(value.amount, value.currency);
  if (terms.minValueMinor !== null && valueMinor < terms.minValueMinor) {
    throw new AppError(
      'VALUE_BELOW_MINIMUM',
      `The ${rule.event_type} rule pays only from ${rule.rate.minValue} ${terms.currency}: ${value.amount} earns nothing`,
      { field: 'value.amount', value: value.amount, reason: 'below_min_value', minValue: rule.rate.minValue },
    );
  }
  return rateReward(terms, valueMinor);
}

/**
 * Whether an event skips its rule's cooldown: a privileged origin, or a signed request that asks for it
 * (`metadata.skip_cooldown`). The live path and the simulator's replay both decide it here.
 */
export function skipsCooldown(
  source: string | undefined,
  signed: boolean,
  metadata: Record<string, unknown> | undefined,
): boolean {
  return source !== undefined || (signed && metadata?.skip_cooldown === true);
}

/** What a hashtag campaign pays for an event its rule pays `base` for: its own reward, or base × its multiplier. */
export function campaignRewardOf(
  campaign: { reward: number | null; rewardMultiplier: number | null },
  base: bigint,
): bigint {
  if (campaign.reward !== null) return BigInt(campaign.reward);
  return BigInt(Math.round(Number(base) * (campaign.rewardMultiplier ?? 1)));
}

/** When a campaign post was made: `metadata.posted_at` when it is a date, else when the event arrived. */
export function campaignPostedAt(metadata: Record<string, unknown> | undefined, arrivedAt: Date): Date {
  const postedAt = metadata?.posted_at;
  return typeof postedAt === 'string' && !Number.isNaN(Date.parse(postedAt)) ? new Date(postedAt) : arrivedAt;
}

/**
 * The tier multiplier's one place (docs/tiers.md, "How multipliers combine"): the member's held tier (index,
 * clamped to the table) multiplies what the rule paid (fixed, by value, a campaign's, a check-in's × streak),
 * rounded down once.
 */
export function heldTierReward(levels: readonly TierLevel[], heldIndex: number, amount: bigint): bigint {
  const level = levels[Math.min(heldIndex, levels.length - 1)];
  return level ? tierReward(amount, level.multiplierHundredths) : amount;
}
