import { randomUUID } from 'node:crypto';
import {
  AppError,
  type BulkEventFailure,
  type Clock,
  type EventRequest,
  type EventResponse,
  isWithinWindow,
  PRIVILEGED_SOURCES,
  type PrivilegedSource,
  type ReferralOutcome,
  toMinorUnits,
} from '@pts/shared';
import type { Logger } from 'pino';
import { zeroAddress } from 'viem';
import type { Minter } from '../../chain/minter.types.ts';
import type { Database } from '../../db/database.ts';
import type { SignatureClaim } from '../../http/brand-signature.ts';
import { hostMatchesDomain } from '../../http/cors.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { findBrandCampaign } from '../community/campaigns.service.ts';
import { attachReferral, qualifyReferral } from '../referrals/referrals.service.ts';
import { heldTier, TIER_ENTRY_EVENT_TYPE } from '../tiers/tiers.repository.ts';
import { promoteMember } from '../tiers/tiers.service.ts';
import type { BrandCache, CachedBrand } from './brand-cache.ts';
import type { AcceptedEvent, CampaignLimit, EventBatcher, EventCandidate } from './event-batcher.ts';
import {
  campaignPostedAt,
  campaignRewardOf,
  heldTierReward,
  type JudgeSettings,
  judgeEvent,
  ruleRewardOf,
  skipsCooldown,
} from './event-rules.ts';
import {
  insertEvents,
  type RuleKey,
  type RuleRecord,
  readJudgeInputs,
  readJudgeInputsFor,
  ruleKeyOf,
  valueColumnsOf,
} from './events.repository.ts';

export type { AcceptedEvent } from './event-batcher.ts';

/**
 * The event pipeline's parts, the database handle among them: only the EventService below is built over them
 * (compose.ts). Every module that makes a reward, and every edge, gets that service, never these
 * (architecture.test.ts).
 */
export interface EventDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  minter: Minter;
  brands: BrandCache;
  batcher: EventBatcher;
  settings: {
    mintWaitMs: number;
  };
}

/** What the HTTP edge knows about the request besides its body. */
export interface EventContext {
  /** The request carried a valid brand signature for this brand. */
  signed: boolean;
  /** The `Origin` header, if any. */
  origin?: string | undefined;
  /** The verified signature, recorded as used in the event's own transaction. */
  signature?: SignatureClaim | undefined;
  /** The agent key that sent it through the agent API (standing in for the brand's signature). */
  agentKeyId?: string | undefined;
}

function hostnameOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/** Spec 4.1 rule 2: `domain`, then the host of `sourceUrl`, then the host of `Origin`. */
export function resolveEventDomain(
  input: Pick<EventRequest, 'domain' | 'sourceUrl'>,
  origin?: string,
): string | undefined {
  return input.domain ?? hostnameOf(input.sourceUrl) ?? hostnameOf(origin);
}

function privilegedSource(input: EventRequest, signed: boolean): PrivilegedSource | undefined {
  const source = input.metadata?.source;
  if (!signed || typeof source !== 'string') return undefined;
  return (PRIVILEGED_SOURCES as readonly string[]).includes(source) ? (source as PrivilegedSource) : undefined;
}

/** Rules that need no database lock: brand, domain, automation, rule, channel (spec 4.1 rules 2–3). */
function checkAccess(cached: CachedBrand | undefined, input: EventRequest, context: EventContext): RuleRecord {
  if (!cached) {
    throw new AppError('BRAND_NOT_FOUND', `Brand ${input.brandId} is not registered; check brandId`, {
      field: 'brandId',
      value: input.brandId,
    });
  }
  const { brand } = cached;
  if (!context.signed && !brand.unsigned_events) {
    throw new AppError(
      'INVALID_SIGNATURE',
      `Brand ${brand.address} accepts only signed events: send X-PTS-Timestamp and X-PTS-Signature from your server (its owner turned unsigned events off)`,
      { reason: 'signature_required' },
    );
  }
  if (!context.signed) {
    const domain = resolveEventDomain(input, context.origin);
    const authorized = [brand.website_domain, ...brand.verified_domains];
    if (!domain) {
      throw new AppError(
        'DOMAIN_NOT_AUTHORIZED',
        `No domain given: send "domain", "sourceUrl" or an Origin header matching the configured domain ${brand.website_domain}`,
        { configuredDomain: brand.website_domain },
      );
    }
    if (!authorized.some((allowed) => hostMatchesDomain(domain, allowed))) {
      throw new AppError(
        'DOMAIN_NOT_AUTHORIZED',
        `Domain ${domain} is not authorized for this brand; the configured domain is ${brand.website_domain}`,
        { domain, configuredDomain: brand.website_domain, authorizedDomains: authorized },
      );
    }
  }
  if (!brand.automation_enabled) {
    throw new AppError('AUTOMATION_DISABLED', 'Automation is disabled for this brand; enable it to accept events', {
      brandId: brand.address,
    });
  }
  const rule = cached.rulesByType.get(input.eventType);
  if (rule?.archived_at) {
    throw new AppError('RULE_ARCHIVED', `The brand archived its ${input.eventType} rule: it earns nothing now`, {
      reason: 'rule_archived',
      field: 'eventType',
      value: input.eventType,
      archivedAt: new Date(rule.archived_at).toISOString(),
    });
  }
  if (!rule?.active) {
    const available = [...cached.rulesByType.values()]
      .filter((r) => r.active && !r.archived_at)
      .map((r) => r.event_type);
    throw new AppError(
      'UNKNOWN_EVENT_TYPE',
      `Event type ${input.eventType} is not configured (or not active) for this brand`,
      { field: 'eventType', value: input.eventType, availableEventTypes: available },
    );
  }
  const channels = rule.detection_config.channels ?? [];
  if (channels.length > 0 && input.channel_id !== undefined && !channels.includes(input.channel_id)) {
    throw new AppError(
      'CHANNEL_NOT_ALLOWED',
      `Channel ${input.channel_id} is not allowed for ${input.eventType}; allowed channels: ${channels.join(', ')}`,
      { channel: input.channel_id, allowedChannels: channels },
    );
  }
  return rule;
}

/**
 * Checks what needs no lock (spec 4.1 rules 2–3) and builds the candidate the batcher judges against the
 * user's locked claim counter (rules 4–7). Rejections here are recorded as rejected events.
 */
async function prepareEvent(deps: EventDeps, input: EventRequest, context: EventContext): Promise<EventCandidate> {
  const cached = await deps.brands.get(input.brandId);
  const source = privilegedSource(input, context.signed);
  const eventId = randomUUID();
  try {
    const rule = checkAccess(cached, input, context);
    const base = ruleRewardOf(rule, input, (cached as CachedBrand).brand.currency);
    const campaign = context.signed ? await campaignReward(deps, input, base) : undefined;
    return {
      eventId,
      input,
      rule,
      rewardAmount: await withTierMultiplier(deps, cached as CachedBrand, input.userEmail, campaign?.amount ?? base),
      ...(campaign ? { campaign: campaign.limit } : {}),
      source,
      skipCooldown: skipsCooldown(source, context.signed, input.metadata),
      memberBlocked: cached?.blockedMembers.get(input.userEmail),
      domain: resolveEventDomain(input, context.origin),
      signature: context.signature,
      sentBy: context.agentKeyId ? `agent:${context.agentKeyId}` : context.signed ? 'brand' : undefined,
    };
  } catch (error) {
    if (error instanceof AppError) {
      deps.metrics.eventsProcessed.inc({ outcome: error.code });
      if (cached) await recordRejection(deps, input, context, eventId, error, source);
    }
    throw error;
  }
}

/**
 * Whether an event would earn now — the accept path's own decision, previewed: the lock-free checks
 * (brand, automation, rule) of a signed event, then `judgeEvent` on the user's claim counter and the rule's
 * total as they stand. Nothing is recorded and nothing is locked, so a concurrent event may still change the
 * answer; the accept path decides again under its locks.
 */
export async function judgeEventEligibility(
  deps: Pick<EventDeps, 'db' | 'clock' | 'brands'>,
  input: EventRequest,
  settings: JudgeSettings,
): Promise<{ rule: RuleRecord; claims: number; refusal: AppError | undefined }> {
  const cached = await deps.brands.get(input.brandId);
  const rule = checkAccess(cached, input, { signed: true });
  const { counter, total } = await readJudgeInputs(deps.db, rule, input.userEmail);
  const refusal = judgeEvent(
    { input, rule, source: undefined, skipCooldown: false },
    counter,
    total,
    deps.clock.now(),
    settings,
  );
  return { rule, claims: counter.claims, refusal };
}

/** One rule's preview for a member: their claims, their last claim, and the judge's refusal if any. */
export interface EarningPreview {
  claims: number;
  lastClaimAt: Date | null;
  refusal: AppError | undefined;
  /** The rule has a global limit: the preview then depends on every member's claims, not only this one's. */
  capped: boolean;
}

/**
 * Whether each of `rules` would still pay `userEmail` now — `judgeEvent` on the member's claim counters and
 * the rules' totals as they stand (per-member limit, cooldown, global limit), in two statements for every
 * rule. A preview for recommendations (route_commerce, stack_commerce), keyed by ruleKeyOf: nothing is
 * locked, and the duplicate window, which depends on the very event, is left to the event itself.
 */
export async function previewEarnings(
  db: Database,
  rules: (RuleKey & Pick<RuleRecord, 'event_type' | 'cooldown_hours' | 'max_claims_per_user'>)[],
  identityKey: string,
  now: Date,
): Promise<Map<string, EarningPreview>> {
  const inputs = await readJudgeInputsFor(db, rules, identityKey);
  const previews = new Map<string, EarningPreview>();
  for (const rule of rules) {
    const key = ruleKeyOf(rule);
    const { counter, total } = inputs.get(key) ?? { counter: { claims: 0, last_claim_at: null, last_event_id: null } };
    const refusal = judgeEvent(
      {
        input: { eventType: rule.event_type, externalId: undefined },
        rule,
        source: undefined,
        skipCooldown: false,
        skipDuplicateWindow: true,
      },
      counter,
      total,
      now,
      { duplicateWindowSeconds: 0 },
    );
    previews.set(key, {
      claims: counter.claims,
      lastClaimAt: counter.last_claim_at,
      refusal,
      capped: total !== undefined,
    });
  }
  return previews;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A signed event naming a hashtag campaign (`metadata.campaign_id`, the X bot's post_hashtag) is paid the
 * campaign's reward, or the rule's reward (fixed, or by the event's value) times its multiplier. The campaign must be the brand's and its
 * window must contain `metadata.posted_at` (when the post was made), or now when that is absent. The
 * campaign's per-user limit comes back with the amount: the batcher decides it against a locked counter in
 * the event's own transaction, like every other limit (the bot keeps no count of its own).
 */
async function campaignReward(
  deps: EventDeps,
  input: EventRequest,
  base: bigint,
): Promise<{ amount: bigint; limit: CampaignLimit } | undefined> {
  const campaignId = input.metadata?.campaign_id;
  if (campaignId === undefined) return undefined;
  const notActive = (why: string) =>
    new AppError('VALIDATION_ERROR', `metadata.campaign_id ${String(campaignId)}: ${why}`, {
      field: 'metadata.campaign_id',
      reason: 'campaign_not_active',
    });
  if (typeof campaignId !== 'string' || !UUID_PATTERN.test(campaignId)) throw notActive('must be a campaign id (uuid)');
  const campaign = await findBrandCampaign(deps.db, input.brandId, campaignId, deps.clock.now());
  if (!campaign) throw notActive('no such campaign for this brand');
  const at = campaignPostedAt(input.metadata, deps.clock.now());
  if (!isWithinWindow({ startsAt: campaign.startDate, endsAt: campaign.endDate }, at)) {
    throw notActive(`${at.toISOString()} is outside the campaign (${campaign.startDate} to ${campaign.endDate})`);
  }
  const limit = { id: campaign.id, maxClaimsPerUser: campaign.maxClaimsPerUser };
  return { amount: campaignRewardOf(campaign, base), limit };
}

/**
 * A reward the server decides rather than a rule's amount — a check-in × streak multiplier, a milestone
 * bonus, a drop unit — through the same lock-free checks as any event (brand, automation, rule). The caller
 * deduplicates itself (one check-in per UTC day, one claim per milestone or unit, under its own row lock), so
 * the rule's duplicate window and cooldown do not apply; the rule's per-user and total limits still do.
 */
async function prepareServerAward(deps: EventDeps, request: ServerAward): Promise<EventCandidate> {
  const candidate = await prepareEvent(deps, request.input, { signed: true });
  const cached = await deps.brands.get(request.input.brandId);
  return {
    ...candidate,
    eventId: request.eventId,
    rewardAmount: request.tierMultiplied
      ? await withTierMultiplier(deps, cached as CachedBrand, request.input.userEmail, request.amount)
      : request.amount,
    skipCooldown: true,
    skipDuplicateWindow: true,
  };
}

/**
 * The ledger of rewards the network itself pays (agent rewards, docs/agent-api/rewards.md): recorded as
 * events and mints of this id, which is no brand, so no brand's rules, totals, boards, webhooks or analytics
 * see them. Only server code reaches it (`preparePlatformAward`): no brand may have this address (createBrand
 * and a check constraint refuse it), so the event API answers it as an unknown brand.
 */
export const PLATFORM_LEDGER_ID: string = zeroAddress;

/**
 * A platform-funded award: no brand rule is looked up or needed (the rule below exists only in this
 * candidate, unlimited and without cooldown), because the caller owns the whole entitlement (agent rewards:
 * evidence, one claim per key, brand and type, a period cap, under its own row lock). It still goes through
 * the batcher (one ledger, one wallet path, one mint). Brand rules are untouched: this
 * never writes under a brand's id.
 */
function preparePlatformAward(request: PlatformAward, at: Date): EventCandidate {
  const { eventType, userEmail, metadata } = request;
  const input = { eventType, userEmail, metadata };
  const award = { amount: request.amount, at };
  return {
    eventId: request.eventId,
    input: { brandId: PLATFORM_LEDGER_ID, ...input },
    rule: unlimitedRule(`platform_${input.eventType}`, PLATFORM_LEDGER_ID, input.eventType, award, 'platform'),
    rewardAmount: award.amount,
    source: undefined,
    skipCooldown: true,
    skipDuplicateWindow: true,
    domain: undefined,
    signature: undefined,
  };
}

/** The event type a brand's manual awards are recorded under (docs/portal.md, "Members"). */
export const MANUAL_AWARD_EVENT_TYPE = 'manual_award';

/**
 * A brand team's manual award to one member (the portal's Members page, `POST /admin/brands/:id/awards`):
 * pts the brand decides, with the reason in the event's metadata and the person who gave them as its
 * sender. Like a platform award it needs no rule of the brand (an unlimited one exists only in this
 * candidate), and it is paid through the batcher: one ledger, one wallet path, one mint. Its idempotency key
 * is the event's externalId, so the batcher's key claim makes repeats (parallel ones too) pay once. A member the
 * brand blocked is refused (MEMBER_BLOCKED), as their own events are.
 */
async function prepareManualAward(
  deps: Pick<EventDeps, 'brands' | 'clock'>,
  input: Omit<ManualAward, 'kind'>,
): Promise<EventCandidate> {
  const cached = await deps.brands.get(input.brandId);
  if (!cached) {
    throw new AppError('BRAND_NOT_FOUND', `Brand ${input.brandId} is not registered; check brandId`, {
      field: 'brandId',
      value: input.brandId,
    });
  }
  const award = { eventId: randomUUID(), amount: input.amount, at: deps.clock.now() };
  return {
    eventId: award.eventId,
    input: {
      brandId: input.brandId,
      eventType: input.eventType ?? MANUAL_AWARD_EVENT_TYPE,
      userEmail: input.userEmail,
      metadata: { reason: input.reason, awardedBy: input.awardedBy },
      // The idempotency key: a repeat by the same person for the same member answers with the first award.
      ...(input.idempotencyKey === undefined ? {} : { externalId: input.idempotencyKey }),
    },
    rule: unlimitedRule(
      `manual_${input.brandId}`,
      input.brandId,
      input.eventType ?? MANUAL_AWARD_EVENT_TYPE,
      award,
      'manual',
    ),
    rewardAmount: input.amount,
    source: undefined,
    skipCooldown: true,
    skipDuplicateWindow: true,
    domain: undefined,
    signature: undefined,
    sentBy: input.awardedBy,
    // A block holds against the brand's own team too: one judge refuses the member, whoever sends the pts.
    memberBlocked: cached.blockedMembers.get(input.userEmail),
  };
}

/** A rule that exists only in an award's candidate: this amount, no limit, no cooldown. */
function unlimitedRule(
  id: string,
  brandId: string,
  eventType: string,
  award: { amount: bigint; at: Date },
  detection: string,
): RuleRecord {
  return {
    id,
    brand_id: brandId,
    event_type: eventType,
    reward_amount: award.amount,
    max_claims_per_user: -1,
    max_total_claims: null,
    total_claims: 0,
    cooldown_hours: 0,
    detection_method: detection,
    detection_config: {},
    is_custom: false,
    active: true,
    created_at: award.at,
    updated_at: award.at,
    archived_at: null,
    rate: null,
  };
}

/** Keeps the audit trail of rejected events (spec data model); never fails the request it describes. */
async function recordRejection(
  deps: EventDeps,
  input: EventRequest,
  context: EventContext,
  eventId: string,
  error: AppError,
  source: string | undefined,
): Promise<void> {
  try {
    await insertEvents(deps.db, [
      {
        id: eventId,
        brand_id: input.brandId,
        event_type: input.eventType,
        user_email: input.userEmail,
        status: 'rejected',
        reason: error.code,
        source: source ?? null,
        domain: resolveEventDomain(input, context.origin) ?? null,
        channel_id: input.channel_id ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        reward_amount: 0,
        ...valueColumnsOf(input),
        created_at: deps.clock.now(),
      },
    ]);
  } catch (recordError) {
    deps.logger.warn({ err: recordError, eventId }, 'could not record rejected event');
  }
}

/** Waits (bounded) for the minter to send the transaction carrying this reward, then builds the response. */
async function completeEvent(deps: EventDeps, accepted: AcceptedEvent): Promise<EventResponse> {
  let mintStatus: EventResponse['mintStatus'] = 'none';
  let transactionHash: `0x${string}` | undefined;
  if (accepted.knownMint) {
    mintStatus = accepted.knownMint.status;
    transactionHash = accepted.knownMint.transactionHash as `0x${string}` | undefined;
  } else if (accepted.mintId) {
    const submission = await (accepted.mintSubmission ??
      deps.minter.submit(accepted.mintId, { waitMs: deps.settings.mintWaitMs }));
    mintStatus = submission.status;
    transactionHash = submission.transactionHash;
  }
  const message = accepted.duplicate
    ? `Already recorded: this externalId was rewarded ${accepted.rewardAmount} by event ${accepted.eventId}; nothing new was rewarded`
    : mintStatus === 'pending'
      ? `Reward of ${accepted.rewardAmount} recorded; the mint is queued and will be sent shortly`
      : `Rewarded ${accepted.rewardAmount} for ${accepted.eventType}`;
  return {
    success: true,
    eventId: accepted.eventId,
    message,
    rewardAmount: accepted.rewardAmount,
    ...(accepted.value ? { value: accepted.value } : {}),
    eventType: accepted.eventType,
    walletCreated: accepted.walletCreated,
    walletAddress: accepted.walletAddress,
    ...(transactionHash ? { transactionHash } : {}),
    mintStatus,
    reward: {
      amount: accepted.rewardAmount,
      eventType: accepted.eventType,
      walletAddress: accepted.walletAddress,
      ...(transactionHash ? { transactionHash } : {}),
    },
    ...(mintStatus === 'confirmed' && accepted.knownMint?.confirmedBy
      ? { confirmedBy: accepted.knownMint.confirmedBy }
      : {}),
    ...(accepted.duplicate ? { duplicate: true as const } : {}),
    ...(accepted.referral ? { referral: accepted.referral } : {}),
  };
}

/** One failed item of a bulk request: its index and the error it would have had alone. */
export function bulkEventFailure(index: number, error: AppError): BulkEventFailure {
  return {
    success: false,
    index,
    error: error.message,
    code: error.code,
    status: error.status,
    ...(error.details ? { details: error.details } : {}),
  };
}

/** The answer of a bulk request (POST /pts-api/bulk-events, the agent's process_bulk_events). */
export interface BulkEventsOutcome {
  success: boolean;
  processed: number;
  failed: number;
  results: (EventResponse | BulkEventFailure)[];
}

/**
 * The second half of a bulk request, once each item is prepared in order (or failed alone): queued together
 * (one batch where possible), their mints awaited together; an item refused in the batch fails alone.
 */
async function settleBulkEvents(
  deps: EventDeps,
  prepared: (EventCandidate | BulkEventFailure)[],
): Promise<BulkEventsOutcome> {
  const outcomes = await Promise.all(
    prepared.map(async (entry, index): Promise<AcceptedEvent | BulkEventFailure> => {
      if (!('eventId' in entry)) return entry;
      try {
        return await award(deps, { kind: 'prepared', candidate: entry });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return bulkEventFailure(index, error);
      }
    }),
  );
  const results = await Promise.all(
    outcomes.map((outcome) => ('eventId' in outcome ? completeEvent(deps, outcome) : outcome)),
  );
  const failed = results.filter((result) => !result.success).length;
  return { success: failed === 0, processed: results.length - failed, failed, results };
}

/** A rule event (manual-event, process_event, the integrations' compat): every rule of spec 4.1. */
export interface RuleEventAward {
  kind: 'event';
  input: EventRequest;
  context: EventContext;
}

/** A bulk request's item, prepared in order by `prepareEvent` (its lock-free checks already passed). */
export interface PreparedAward {
  kind: 'prepared';
  candidate: EventCandidate;
}

/**
 * A reward the server decides under a brand rule (streak check-in × multiplier, milestone bonus, drop unit):
 * the rule's per-user and total limits apply, its cooldown and duplicate window do not (the caller
 * deduplicates under its own row lock). A re-drive of a recorded one repeats its `eventId`.
 */
export interface ServerAward {
  kind: 'server';
  input: EventRequest;
  eventId: string;
  amount: bigint;
  /** The member's tier multiplier applies to `amount` (a check-in: the rule's amount × streak, then × tier). */
  tierMultiplied?: boolean | undefined;
}

/** The same server award with another event id (a re-drive of a recorded one), amount or metadata. */
export function restateAward(
  request: ServerAward,
  change: { eventId?: string; amount?: bigint; metadata?: Record<string, unknown> },
): ServerAward {
  return {
    ...request,
    ...(change.eventId === undefined ? {} : { eventId: change.eventId }),
    ...(change.amount === undefined ? {} : { amount: change.amount }),
    ...(change.metadata === undefined ? {} : { input: { ...request.input, metadata: change.metadata } }),
  };
}

/** A brand team's manual award (portal, admin API, CLI); `idempotencyKey` becomes the event's externalId. */
export interface ManualAward {
  kind: 'manual';
  brandId: string;
  userEmail: string;
  amount: bigint;
  reason: string;
  /** Who gave it (`portal:<email>`, `admin`): the event's sender, and the only one whose repeat sees the first. */
  awardedBy: string;
  idempotencyKey?: string | undefined;
  /** Recorded under this event type instead of `manual_award` (a tier's entry reward: `tier_entry`). */
  eventType?: string | undefined;
}

/** A platform-funded award (agent rewards), recorded under PLATFORM_LEDGER_ID: no brand rule applies. */
export interface PlatformAward {
  kind: 'platform';
  eventType: string;
  userEmail: string;
  metadata: Record<string, unknown>;
  eventId: string;
  amount: bigint;
}

/** Every way a reward is made; each goes through `award`, the one entry, to the one batcher. */
export type AwardRequest = RuleEventAward | PreparedAward | ServerAward | ManualAward | PlatformAward;

/** The candidate a request makes: its checks (lock-free: brand, domain, automation, rule) done. */
function candidateOf(deps: EventDeps, request: AwardRequest): Promise<EventCandidate> | EventCandidate {
  switch (request.kind) {
    case 'event':
      return prepareEvent(deps, request.input, request.context);
    case 'prepared':
      return request.candidate;
    case 'server':
      return prepareServerAward(deps, request);
    case 'manual':
      return prepareManualAward(deps, request);
    case 'platform':
      return preparePlatformAward(request, deps.clock.now());
  }
}

/**
 * The one award entry: every reward (events, drops, streak bonuses, manual awards, compat, agent rewards) is
 * judged, written and its mint signed here, by the one batcher. Resolves once the event, its claim and its
 * reward row are committed; rejects with the rule's AppError.
 */
async function award(deps: EventDeps, request: AwardRequest): Promise<AcceptedEvent> {
  const candidate = await candidateOf(deps, request);
  const attached = await referralBefore(deps, request, candidate);
  const accepted = await deps.batcher.enqueue(candidate);
  if (accepted.duplicate || request.kind === 'platform')
    return attached ? { ...accepted, referral: attached } : accepted;
  await promoteAfter(deps, candidate);
  const referral = (await referralAfter(deps, request, candidate, accepted)) ?? attached;
  return referral ? { ...accepted, referral } : accepted;
}

/**
 * Before a rule event carrying `referralCode` is judged (docs/referrals.md): the referral is attached or
 * refused by the fraud rules, before the event itself can make the member "not new". A refusal never fails
 * the event: its answer says why.
 */
async function referralBefore(
  deps: EventDeps,
  request: AwardRequest,
  candidate: EventCandidate,
): Promise<ReferralOutcome | undefined> {
  const { brandId, userEmail, referralCode, userIdentifier } = candidate.input;
  if (referralCode === undefined || (request.kind !== 'event' && request.kind !== 'prepared')) return undefined;
  try {
    return await attachReferral(deps, {
      brandId,
      referee: userEmail,
      code: referralCode,
      wallet: userIdentifier?.startsWith('0x') ? userIdentifier : undefined,
    });
  } catch (error) {
    deps.logger.warn({ err: error, brandId }, 'referral attach failed; the event goes on without it');
    return undefined;
  }
}

/**
 * After an accepted rule event of a brand with a referral program: when it is the referee's qualifying event,
 * the referral is paid once, through `award` (referral.paid). A failure here never fails the event.
 */
async function referralAfter(
  deps: EventDeps,
  request: AwardRequest,
  candidate: EventCandidate,
  accepted: AcceptedEvent,
): Promise<ReferralOutcome | undefined> {
  if (request.kind !== 'event' && request.kind !== 'prepared') return undefined;
  const { brandId, userEmail, eventType } = candidate.input;
  const cached = await deps.brands.get(brandId);
  if (!cached?.referrals || eventType !== cached.referrals.qualifyingEventType) return undefined;
  const value = accepted.value ?? candidate.input.value;
  try {
    return await qualifyReferral(
      { db: deps.db, clock: deps.clock, events: { award: (next) => award(deps, next) } },
      cached.referrals,
      {
        brandId,
        member: userEmail,
        eventType,
        eventId: accepted.eventId,
        valueMinor:
          value && value.currency === cached.brand.currency ? toMinorUnits(value.amount, value.currency) : undefined,
      },
    );
  } catch (error) {
    deps.logger.warn({ err: error, brandId }, 'referral payment failed; the next qualifying event retries it');
    return undefined;
  }
}

/** The member's held tier, read now, multiplies the amount (the pure step: heldTierReward, event-rules.ts). */
async function withTierMultiplier(deps: EventDeps, cached: CachedBrand, member: string, amount: bigint) {
  if (!cached.tiers) return amount;
  const held = await heldTier(deps.db, cached.brand.address, member);
  return heldTierReward(cached.tiers.levels, held?.tier_index ?? 0, amount);
}

/**
 * After an accepted event of a brand with tiers: the member is promoted at once when their total reaches a
 * higher tier, and the entry rewards due are paid through `award` (an entry reward promotes nobody: its pts
 * do not count). A failure here never fails the event: the period's turn promotes and pays what was missed.
 */
async function promoteAfter(deps: EventDeps, candidate: EventCandidate): Promise<void> {
  const { brandId, userEmail, eventType } = candidate.input;
  if (eventType === TIER_ENTRY_EVENT_TYPE) return;
  const cached = await deps.brands.get(brandId);
  if (!cached?.tiers) return;
  try {
    await promoteMember(
      { db: deps.db, clock: deps.clock, events: { award: (request) => award(deps, request) } },
      cached.tiers,
      brandId,
      userEmail,
    );
  } catch (error) {
    deps.logger.warn({ err: error, brandId }, 'tier promotion failed; the period turn retries it');
  }
}

/**
 * The event pipeline as every module and edge uses it — the event API's routes, the agent's tools and
 * services, and the modules that make rewards (drops, streaks, members, compat): none of them holds the
 * database handle or the batcher (issue 23 §2, issue 34 §3). compose.ts builds it once over the one batcher
 * and brand cache.
 */
export interface EventService {
  /**
   * Brands and their rules as the pipeline reads them (the brand cache): one brand, or the whole directory;
   * `invalidate` after a write this process made that the judge must see at once (a member's block).
   */
  readonly brands: Pick<BrandCache, 'get' | 'directory' | 'invalidate'>;
  /** The one entry through which every reward is made (see AwardRequest). */
  award(request: AwardRequest): Promise<AcceptedEvent>;
  /**
   * A server award's lock-free checks (brand, automation, rule) without making it: a caller that records what
   * it pays for (a check-in, a milestone claim, a drop unit) first learns whether the brand would pay at all.
   */
  checkAward(request: ServerAward): Promise<void>;
  /** manual-event, process_event: `award` of a rule event, then the bounded wait for the mint. */
  recordEvent(input: EventRequest, context: EventContext): Promise<EventResponse>;
  /** A bulk request's first half, item by item in order: the lock-free checks and the batcher's candidate. */
  prepareEvent(input: EventRequest, context: EventContext): Promise<EventCandidate>;
  /** A bulk request's second half: the prepared items awarded together, their mints awaited together. */
  settleBulkEvents(prepared: (EventCandidate | BulkEventFailure)[]): Promise<BulkEventsOutcome>;
  /** Waits (bounded) for an accepted event's mint, then builds its answer. */
  completeEvent(accepted: AcceptedEvent): Promise<EventResponse>;
}

/** The EventService over the pipeline's parts: the functions above, with `deps` bound. */
export function createEventService(deps: EventDeps): EventService {
  return {
    brands: deps.brands,
    award: (request) => award(deps, request),
    checkAward: async (request) => {
      await prepareServerAward(deps, request);
    },
    recordEvent: async (input, context) => completeEvent(deps, await award(deps, { kind: 'event', input, context })),
    prepareEvent: (input, context) => prepareEvent(deps, input, context),
    settleBulkEvents: (prepared) => settleBulkEvents(deps, prepared),
    completeEvent: (accepted) => completeEvent(deps, accepted),
  };
}
