import { randomUUID } from 'node:crypto';
import { AppError, identityKeyOf } from '@pts/shared';
import { isUniqueViolation } from '../../db/errors.ts';
import { domainHolders } from '../../modules/brands/brand-registration.ts';
import { brandNotFound } from '../../modules/brands/brands.service.ts';
import type { AcceptedEvent, PlatformAward } from '../../modules/events/events.service.ts';
import {
  agentKeyToken,
  type MemberAnswers,
  memberToken,
  nextUtcDay,
  walletToken,
} from '../../modules/ledger/member-answers.ts';
import { actsFor } from '../actions/brand-authority.ts';
import type { AgentServiceDeps } from '../agent-services.ts';
import type { AgentPrincipal, AgentTier } from '../agent-tool.ts';
import { normalizeBrandQuery } from '../discovery/brand-query.ts';
import {
  type AgentRewardClaimView,
  type AgentRewardType,
  countAgentRewardClaimsSince,
  findAgentRewardClaim,
  findBrandsByReference,
  findKeyOnboarding,
  insertAgentRewardClaim,
  keyBroughtEvent,
  listAgentRewardClaims,
  lockAgentKey,
  readAgentActivity,
  readBrandTakeover,
  readSignedMemberActivity,
  releaseUnpaidClaim,
} from './agent-rewards.repository.ts';
import { evidenceStartsAt, judgeOnboardingEvidence, type OnboardingEvidenceVerdict } from './onboarding-evidence.ts';

/**
 * Agent rewards (spec 2 §2.2, 4.1, 8; docs/agent-api/rewards.md): the network pays an agent key for a brand
 * it brought — `discovery` 100 pts once it sent the brand's first accepted event through the agent API,
 * `onboarding` 500 pts once a brand it onboarded took an event of its own. Once per (key, brand, type), at
 * most a tier's number of claims per UTC day, paid to the key's own wallet through the event pipeline.
 */

export const AGENT_REWARD_TYPES = ['discovery', 'onboarding'] as const;

/** pts per reward (spec 8). */
export const AGENT_REWARD_AMOUNTS: Record<AgentRewardType, bigint> = { discovery: 100n, onboarding: 500n };

/** Claims a key may make per UTC day, by tier. */
export const AGENT_REWARD_DAILY_CLAIMS: Record<AgentTier, number> = { free: 3, pro: 20, enterprise: 100 };

/** A claim whose reward event is still missing this long after it was made is paid again (a crash between). */
export const AGENT_REWARD_REDRIVE_AFTER_MS = 30_000;

/** The event types of the rewards on the platform ledger. */
export const agentRewardEventType = (type: AgentRewardType) => `agent_reward_${type}`;

/**
 * The identity the key's rewards are paid to: a user like any other (a wallet from the identity provider,
 * the same token), whose `agent_` email keeps it out of user counts (get_network_stats) and `.pts` host out
 * of anyone's mailbox.
 */
export function agentIdentity(keyId: string): string {
  return `agent_${keyId.toLowerCase()}@agents.pts`;
}

const startOfUtcDay = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
const DAY_MS = 86_400_000;

/** The key's claims allowance of the current UTC day. */
export interface AgentRewardAllowance {
  period: 'utc_day';
  limit: number;
  used: number;
  remaining: number;
  resetsAt: string;
}

function allowanceOf(principal: AgentPrincipal, used: number, now: Date): AgentRewardAllowance {
  const limit = AGENT_REWARD_DAILY_CLAIMS[principal.tier];
  return {
    period: 'utc_day',
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resetsAt: new Date(startOfUtcDay(now).getTime() + DAY_MS).toISOString(),
  };
}

function requireKey(principal: AgentPrincipal | undefined): AgentPrincipal {
  if (!principal)
    throw new AppError('UNAUTHORIZED', 'Agent rewards need an agent key: sign the request (X-PTS-Agent-Key)');
  return principal;
}

/**
 * The brand a `brandAddress` names: its Brand ID (0x + 40 hex) or exactly its website or verified domain (a
 * URL is reduced to its host). 404 when none, 400 when a domain is shared by several brands.
 */
export async function resolveRewardBrand(d: AgentServiceDeps, brandAddress: string) {
  const { brandId, domain } = normalizeBrandQuery(brandAddress);
  if (brandId) {
    const [brand] = await findBrandsByReference(d.db, { brandId });
    if (!brand) throw brandNotFound(brandId);
    return brand;
  }
  if (!domain) {
    throw new AppError(
      'VALIDATION_ERROR',
      `brandAddress: "${brandAddress}" is neither a Brand ID (0x followed by 40 hex characters) nor a domain such as shop.example.com`,
      { field: 'brandAddress' },
    );
  }
  // The brand that proved the domain through DNS answers for it, whoever else claims it (brand-registration.ts).
  const brands = domainHolders(await findBrandsByReference(d.db, { domain }), domain);
  if (brands.length === 0) {
    throw new AppError(
      'BRAND_NOT_FOUND',
      `No brand has the domain ${domain}; check_brand finds brands by name or URL`,
      {
        field: 'brandAddress',
        value: domain,
      },
    );
  }
  if (brands.length > 1) {
    throw new AppError('VALIDATION_ERROR', `brandAddress: ${domain} is a domain of several brands; give the Brand ID`, {
      field: 'brandAddress',
      brandIds: brands.map((brand) => brand.brandId),
    });
  }
  return brands[0]!;
}

/** 403 unless the key has earned this reward for this brand (docs/agent-api/rewards.md, "Evidence"). */
async function requireEvidence(
  d: AgentServiceDeps,
  principal: AgentPrincipal,
  brand: { brandId: string },
  rewardType: AgentRewardType,
): Promise<void> {
  const { db } = d;
  if (rewardType === 'discovery') {
    if (!actsFor(principal, brand.brandId)) {
      throw new AppError(
        'FORBIDDEN',
        `Discovery rewards are for brands this key acts for; agent key ${principal.keyId} does not act for brand ${brand.brandId}`,
        { brandId: brand.brandId, reason: 'brand_not_in_key' },
      );
    }
    if (!(await keyBroughtEvent(db, principal.keyId, brand.brandId))) {
      throw new AppError(
        'NOT_ELIGIBLE',
        `No discovery reward yet: send at least one event of brand ${brand.brandId} with process_event (this key) that is accepted, then claim again`,
        { brandId: brand.brandId, rewardType, reason: 'no_agent_event' },
      );
    }
    return;
  }
  const onboardedAt = await findKeyOnboarding(db, principal.keyId, brand.brandId);
  if (!onboardedAt) {
    throw new AppError(
      'NOT_ELIGIBLE',
      `Onboarding rewards are for brands this key onboarded with onboard_brand; key ${principal.keyId} did not onboard brand ${brand.brandId}`,
      { brandId: brand.brandId, rewardType, reason: 'not_onboarded_by_key' },
    );
  }
  const verdict = await readOnboardingEvidence(d, principal.keyId, brand.brandId, onboardedAt);
  if (!verdict.met) {
    const { met: _met, message, ...details } = verdict;
    throw new AppError('NOT_ELIGIBLE', `No onboarding reward yet for brand ${brand.brandId}: ${message}`, {
      brandId: brand.brandId,
      rewardType,
      ...details,
    });
  }
}

/** The onboarding evidence of a brand the key onboarded (onboarding-evidence.ts), read at the clock's now. */
async function readOnboardingEvidence(
  d: AgentServiceDeps,
  keyId: string,
  brandId: string,
  onboardedAt: Date,
): Promise<OnboardingEvidenceVerdict> {
  const { db, clock } = d;
  const brand = await readBrandTakeover(db, brandId);
  if (!brand) throw brandNotFound(brandId);
  const facts = { keyId, onboardedAt, now: clock.now(), brand };
  const since = evidenceStartsAt(facts);
  const activity = since ? await readSignedMemberActivity(db, brandId, since, keyId) : undefined;
  return judgeOnboardingEvidence(facts, activity);
}

function claimView(claim: AgentRewardClaimView) {
  return {
    brandId: claim.brandId,
    brandName: claim.brandName,
    rewardType: claim.rewardType,
    amount: Number(claim.amount),
    eventId: claim.eventId,
    claimedAt: claim.claimedAt.toISOString(),
    status: claim.paid ? ('paid' as const) : ('paying' as const),
    mintStatus: claim.mintStatus,
    transactionHash: claim.transactionHash,
  };
}

function alreadyClaimed(claim: AgentRewardClaimView): AppError {
  return new AppError(
    'CONFLICT',
    `Agent key ${claim.keyId} already claimed the ${claim.rewardType} reward of brand ${claim.brandId} (${claim.amount} pts, ${claim.claimedAt.toISOString()}, event ${claim.eventId}); each reward is paid once per key and brand`,
    { reason: 'already_claimed', claim: claimView(claim) },
  );
}

/**
 * The claim reserved behind the key's row lock: a repeat answered 409 (or re-driven when its event never came),
 * the period cap checked, the claim row written — in one transaction, so concurrent claims never pay twice.
 */
function reserveClaim(
  d: AgentServiceDeps,
  principal: AgentPrincipal,
  key: { keyId: string; brandId: string; rewardType: AgentRewardType },
  now: Date,
) {
  const { db } = d;
  const fresh = randomUUID();
  return db
    .transaction()
    .execute(async (trx) => {
      if (!(await lockAgentKey(trx, principal.keyId))) {
        throw new AppError('UNAUTHORIZED', `Agent key ${principal.keyId} no longer exists`);
      }
      const existing = await findAgentRewardClaim(trx, key);
      if (existing) {
        const orphaned =
          !existing.paid && now.getTime() - existing.claimedAt.getTime() >= AGENT_REWARD_REDRIVE_AFTER_MS;
        if (!orphaned) throw alreadyClaimed(existing);
        return { eventId: existing.eventId, amount: existing.amount, claimedAt: existing.claimedAt, redrive: true };
      }
      const used = await countAgentRewardClaimsSince(trx, principal.keyId, startOfUtcDay(now));
      const allowance = allowanceOf(principal, used, now);
      if (allowance.remaining === 0) {
        const retryAfter = Math.ceil((Date.parse(allowance.resetsAt) - now.getTime()) / 1000);
        throw new AppError(
          'RATE_LIMIT_EXCEEDED',
          `Agent key ${principal.keyId} made its ${allowance.limit} reward claims of today (${principal.tier} tier); claim again after ${allowance.resetsAt}`,
          { reason: 'agent_reward_cap', allowance },
          { retryAfter },
        );
      }
      const amount = AGENT_REWARD_AMOUNTS[key.rewardType];
      await insertAgentRewardClaim(trx, { ...key, amount, eventId: fresh, claimedAt: now });
      return { eventId: fresh, amount, claimedAt: now, redrive: false };
    })
    .catch(async (error: unknown) => {
      // The claim's primary key, should a claim of this key, brand and type ever pass the lock: still a 409.
      if (!isUniqueViolation(error)) throw error;
      const claim = await findAgentRewardClaim(db, key);
      throw claim ? alreadyClaimed(claim) : error;
    });
}

/**
 * `claim_agent_reward`. The claim is reserved behind the key's row lock (repeat and period cap checked and
 * the claim row written in one transaction, so concurrent claims never pay twice nor pass the cap); the
 * reward then goes through the event pipeline under the claim's event id. A refused or failed reward gives
 * the claim back; a claim left without its event by a crash is paid by the next claim with the same id.
 */
export async function claimAgentReward(
  d: AgentServiceDeps,
  principalOrNone: AgentPrincipal | undefined,
  input: { rewardType: AgentRewardType; brandAddress: string },
) {
  const principal = requireKey(principalOrNone);
  const brand = await resolveRewardBrand(d, input.brandAddress);
  await requireEvidence(d, principal, brand, input.rewardType);
  const { db, clock } = d;
  const now = clock.now();
  const key = { keyId: principal.keyId, brandId: brand.brandId, rewardType: input.rewardType };
  const reserved = await reserveClaim(d, principal, key, now);

  const candidate: PlatformAward = {
    kind: 'platform',
    eventType: agentRewardEventType(input.rewardType),
    userEmail: agentIdentity(principal.keyId),
    // Not `agentKeyId`: that marks the events a key brought to a brand (the discovery evidence).
    metadata: { rewardedKeyId: principal.keyId, rewardType: input.rewardType, rewardBrandId: brand.brandId },
    eventId: reserved.eventId,
    amount: reserved.amount,
  };
  let accepted: AcceptedEvent;
  try {
    accepted = await d.events.award(candidate);
  } catch (error) {
    // A re-driven claim whose original event committed meanwhile: the events key let only one through.
    if (reserved.redrive && isUniqueViolation(error)) {
      const claim = await findAgentRewardClaim(db, key);
      if (claim) throw alreadyClaimed(claim);
    }
    if (!reserved.redrive) await releaseUnpaidClaim(db, reserved.eventId);
    throw error;
  }
  const completed = await d.events.completeEvent(accepted);
  const used = await countAgentRewardClaimsSince(db, principal.keyId, startOfUtcDay(now));
  return {
    claim: {
      brandId: brand.brandId,
      brandName: brand.name,
      rewardType: input.rewardType,
      amount: accepted.rewardAmount,
      eventId: accepted.eventId,
      claimedAt: reserved.claimedAt.toISOString(),
      status: 'paid' as const,
      mintStatus: completed.mintStatus,
      transactionHash: completed.transactionHash ?? null,
    },
    wallet: { identity: agentIdentity(principal.keyId), address: accepted.walletAddress },
    allowance: allowanceOf(principal, used, now),
  };
}

/**
 * `get_agent_rewards`: the key's wallet, earnings, claims, activity, what it may claim and its allowance. Kept
 * like a member's answers (modules/ledger/member-answers.ts) until the database says the key's figures moved:
 * an event it brought, a claim or an onboarding of the key (`k:<keyId>`, migration 2026_12_05_r01), its reward
 * wallet's events, mints and user row (`m:`/`w:`), the chain head (the wallet's balance), the UTC day turning
 * (the allowance), a brand change (names). Read afresh on every call while a mint of the wallet is in flight or
 * an onboarding's evidence is not met yet (it waits for other members' events at that brand). `answers` is the
 * calling tool's own store (a test's tools may keep nothing).
 */
export async function readAgentRewards(
  d: AgentServiceDeps,
  answers: MemberAnswers,
  principalOrNone: AgentPrincipal | undefined,
) {
  const principal = requireKey(principalOrNone);
  const key = [
    'get_agent_rewards',
    principal.keyId,
    principal.tier,
    String(principal.ratePerMinute),
    principal.brandIds.join(','),
  ].join('\n');
  return answers.answer(key, () => agentRewardsAnswer(d, principal));
}

/**
 * What the key may claim now: discovery at each brand it sent events to, onboarding at each brand it onboarded
 * whose evidence is met (`waitsForEvidence`: one is not yet, so the answer is not kept).
 */
async function claimableRewards(
  d: AgentServiceDeps,
  principal: AgentPrincipal,
  claims: Awaited<ReturnType<typeof listAgentRewardClaims>>,
  activity: Awaited<ReturnType<typeof readAgentActivity>>,
) {
  const claimed = new Set(claims.map((claim) => `${claim.brandId}:${claim.rewardType}`));
  const claimable: { brandId: string; rewardType: AgentRewardType; amount: number }[] = [];
  let waitsForEvidence = false;
  for (const brandId of activity.brandsWithEvents) {
    if (actsFor(principal, brandId) && !claimed.has(`${brandId}:discovery`)) {
      claimable.push({ brandId, rewardType: 'discovery', amount: Number(AGENT_REWARD_AMOUNTS.discovery) });
    }
  }
  for (const brandId of activity.onboardedBrands) {
    if (claimed.has(`${brandId}:onboarding`)) continue;
    const onboardedAt = await findKeyOnboarding(d.db, principal.keyId, brandId);
    if (onboardedAt && (await readOnboardingEvidence(d, principal.keyId, brandId, onboardedAt)).met) {
      claimable.push({ brandId, rewardType: 'onboarding', amount: Number(AGENT_REWARD_AMOUNTS.onboarding) });
    } else {
      waitsForEvidence = true;
    }
  }
  return { claimable, waitsForEvidence };
}

async function agentRewardsAnswer(d: AgentServiceDeps, principal: AgentPrincipal) {
  const { db, clock } = d;
  const now = clock.now();
  const identityKey = agentIdentity(principal.keyId);
  const [claims, activity, used, balance] = await Promise.all([
    listAgentRewardClaims(db, principal.keyId),
    readAgentActivity(db, principal.keyId),
    countAgentRewardClaimsSince(db, principal.keyId, startOfUtcDay(now)),
    d.walletBalances.read(identityKeyOf(identityKey)),
  ]);
  const { claimable, waitsForEvidence } = await claimableRewards(d, principal, claims, activity);
  const paid = claims.filter((claim) => claim.paid);
  const earned = (type: AgentRewardType) =>
    paid.filter((claim) => claim.rewardType === type).reduce((sum, claim) => sum + Number(claim.amount), 0);
  const value = {
    keyId: principal.keyId,
    tier: principal.tier,
    wallet: {
      identity: identityKey,
      address: balance.walletAddress,
      balance: balance.balance,
      pending: balance.pending,
    },
    earnings: {
      total: earned('discovery') + earned('onboarding'),
      discovery: earned('discovery'),
      onboarding: earned('onboarding'),
      claims: claims.length,
    },
    rates: { discovery: Number(AGENT_REWARD_AMOUNTS.discovery), onboarding: Number(AGENT_REWARD_AMOUNTS.onboarding) },
    activity: {
      acceptedEvents: activity.acceptedEvents,
      brandsWithEvents: activity.brandsWithEvents.length,
      onboardedBrands: activity.onboardedBrands.length,
    },
    claimable,
    claims: claims.map(claimView),
    allowance: allowanceOf(principal, used, now),
    // The key's request rate (spec 8); each answer's X-RateLimit-* headers carry what is left of the minute.
    rateLimit: { requestsPerMinute: principal.ratePerMinute },
  };
  return {
    value,
    tokens: [
      agentKeyToken(principal.keyId),
      memberToken(identityKey),
      ...(balance.walletAddress ? [walletToken(balance.walletAddress)] : []),
    ],
    chain: balance.walletAddress !== null,
    keep: balance.settled && !waitsForEvidence,
    validUntil: nextUtcDay(now),
  };
}

/** Agent rewards (rewards.tools.ts): a key's standing and its claims, over the handle compose.ts gives. */
export interface AgentRewardsService {
  /** `get_agent_rewards`, kept in `answers` (the tools' member answers). */
  readAgentRewards(answers: MemberAnswers, principal: AgentPrincipal | undefined): ReturnType<typeof readAgentRewards>;
  claimAgentReward(
    principal: AgentPrincipal | undefined,
    input: Parameters<typeof claimAgentReward>[2],
  ): ReturnType<typeof claimAgentReward>;
}

export function createAgentRewardsService(d: AgentServiceDeps): AgentRewardsService {
  return {
    readAgentRewards: (answers, principal) => readAgentRewards(d, answers, principal),
    claimAgentReward: (principal, input) => claimAgentReward(d, principal, input),
  };
}
