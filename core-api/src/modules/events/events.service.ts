import { randomUUID } from 'node:crypto';
import {
  AppError,
  type Clock,
  type EventRequest,
  type EventResponse,
  PRIVILEGED_SOURCES,
  type PrivilegedSource,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { Minter } from '../../chain/minter.types.ts';
import type { Database } from '../../db/database.ts';
import { hostMatchesDomain } from '../../http/cors.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';
import type { BrandCache, CachedBrand } from './brand-cache.ts';
import {
  ensureUser,
  insertEvent,
  insertRewardMint,
  lockClaimCounter,
  type RuleRecord,
  readTotalClaims,
  recordClaim,
  reserveTotalClaim,
  setUserWallet,
} from './events.repository.ts';

export interface EventDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  wallets: WalletProvider;
  minter: Minter;
  brands: BrandCache;
  settings: {
    duplicateWindowSeconds: number;
    defaultCooldownHours: number;
    mintWaitMs: number;
  };
}

/** What the HTTP edge knows about the request besides its body. */
export interface EventContext {
  /** The request carried a valid brand signature for this brand. */
  signed: boolean;
  /** The `Origin` header, if any. */
  origin?: string | undefined;
}

/** An event that passed every rule and whose reward row is committed; the mint may still be on its way. */
export interface AcceptedEvent {
  eventId: string;
  eventType: string;
  rewardAmount: number;
  walletAddress: `0x${string}`;
  walletCreated: boolean;
  mintId: string | undefined;
}

/** Per-user claims at or above these are unlimited (spec 2.3). */
function isUnlimited(maxClaims: number): boolean {
  return maxClaims === -1 || maxClaims === 999999;
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
  if (!rule?.active) {
    const available = [...cached.rulesByType.values()].filter((r) => r.active).map((r) => r.event_type);
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
 * Applies every rule of spec 4.1 and, when all pass, commits the event, the claim and the reward row in
 * one transaction that holds the user's claim-counter lock. Rejections are recorded as rejected events.
 */
export async function acceptEvent(deps: EventDeps, input: EventRequest, context: EventContext): Promise<AcceptedEvent> {
  const cached = await deps.brands.get(input.brandId);
  const now = deps.clock.now();
  const source = privilegedSource(input, context.signed);
  const skipCooldown = source !== undefined || (context.signed && input.metadata?.skip_cooldown === true);
  const eventId = randomUUID();
  let rule: RuleRecord | undefined;
  try {
    rule = checkAccess(cached, input, context);
    const user = await ensureUser(deps.db, input.userEmail);
    let walletAddress = user.walletAddress as `0x${string}` | null;
    let walletCreated = false;
    if (!walletAddress) {
      const wallet = await deps.wallets.walletForUser({ userId: user.id, email: input.userEmail });
      walletCreated = await setUserWallet(deps.db, user.id, wallet.address, wallet.idpUserId);
      walletAddress = wallet.address;
    }
    const amount = BigInt(rule.reward_amount);
    const mintId = amount > 0n ? randomUUID() : undefined;
    const acceptedRule = rule;
    const wallet = walletAddress;
    await deps.db.transaction().execute(async (trx) => {
      const counter = await lockClaimCounter(trx, {
        brandId: input.brandId,
        eventType: input.eventType,
        email: input.userEmail,
      });
      const sinceLast = counter.last_claim_at ? (now.getTime() - counter.last_claim_at.getTime()) / 1000 : Infinity;
      if (source === undefined && sinceLast < deps.settings.duplicateWindowSeconds) {
        throw new AppError(
          'DUPLICATE_EVENT',
          `Duplicate event: ${input.eventType} was already recorded for this user ${Math.floor(sinceLast)} s ago`,
          {
            reason: 'duplicate',
            existingEventId: counter.last_event_id,
            duplicateWindowSeconds: deps.settings.duplicateWindowSeconds,
          },
        );
      }
      const cooldownSeconds = acceptedRule.cooldown_hours * 3600;
      if (!skipCooldown && cooldownSeconds > 0 && sinceLast < cooldownSeconds) {
        const remaining = Math.ceil(cooldownSeconds - sinceLast);
        throw new AppError(
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
      const maxClaims = acceptedRule.max_claims_per_user;
      if (source === undefined && !isUnlimited(maxClaims) && counter.claims >= maxClaims) {
        throw new AppError('MAX_CLAIMS_REACHED', 'Max claims reached', {
          message: `This user already claimed ${input.eventType} ${counter.claims} time(s); the limit is ${maxClaims}`,
          reason: 'max_claims_reached',
          totalClaims: counter.claims,
          maxClaims,
        });
      }
      if (acceptedRule.max_total_claims !== null) {
        const total = await reserveTotalClaim(trx, acceptedRule);
        if (total === undefined) {
          throw new AppError('MAX_TOTAL_CLAIMS_REACHED', 'Max total claims reached', {
            message: `${input.eventType} has reached its global limit of ${acceptedRule.max_total_claims} claims`,
            reason: 'max_total_claims_reached',
            totalClaims: await readTotalClaims(trx, acceptedRule),
            maxTotal: acceptedRule.max_total_claims,
          });
        }
      }
      await recordClaim(trx, counter, now, eventId);
      await insertEvent(trx, {
        id: eventId,
        brand_id: input.brandId,
        event_type: input.eventType,
        user_email: input.userEmail,
        status: 'accepted',
        reason: null,
        source: source ?? null,
        domain: resolveEventDomain(input, context.origin) ?? null,
        channel_id: input.channel_id ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        reward_amount: amount,
        created_at: now,
      });
      if (mintId) {
        await insertRewardMint(trx, {
          id: mintId,
          eventId,
          brandId: input.brandId,
          walletAddress: wallet,
          amount,
          at: now,
        });
      }
    });
    deps.metrics.eventsProcessed.inc({ outcome: 'rewarded' });
    return {
      eventId,
      eventType: input.eventType,
      rewardAmount: Number(amount),
      walletAddress: wallet,
      walletCreated,
      mintId,
    };
  } catch (error) {
    if (error instanceof AppError) {
      deps.metrics.eventsProcessed.inc({ outcome: error.code });
      if (cached) await recordRejection(deps, input, context, eventId, error, source, now);
    }
    throw error;
  }
}

/** Keeps the audit trail of rejected events (spec data model); never fails the request it describes. */
async function recordRejection(
  deps: EventDeps,
  input: EventRequest,
  context: EventContext,
  eventId: string,
  error: AppError,
  source: string | undefined,
  now: Date,
): Promise<void> {
  try {
    await insertEvent(deps.db, {
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
      created_at: now,
    });
  } catch (recordError) {
    deps.logger.warn({ err: recordError, eventId }, 'could not record rejected event');
  }
}

/** Waits (bounded) for the minter to send the transaction carrying this reward, then builds the response. */
export async function completeEvent(deps: EventDeps, accepted: AcceptedEvent): Promise<EventResponse> {
  let mintStatus: EventResponse['mintStatus'] = 'none';
  let transactionHash: `0x${string}` | undefined;
  if (accepted.mintId) {
    const submission = await deps.minter.submit(accepted.mintId, { waitMs: deps.settings.mintWaitMs });
    mintStatus = submission.status;
    transactionHash = submission.transactionHash;
  }
  const message =
    mintStatus === 'pending'
      ? `Reward of ${accepted.rewardAmount} recorded; the mint is queued and will be sent shortly`
      : `Rewarded ${accepted.rewardAmount} for ${accepted.eventType}`;
  return {
    success: true,
    eventId: accepted.eventId,
    message,
    rewardAmount: accepted.rewardAmount,
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
  };
}

/** manual-event: accept, then wait for the mint. */
export async function recordEvent(deps: EventDeps, input: EventRequest, context: EventContext): Promise<EventResponse> {
  return completeEvent(deps, await acceptEvent(deps, input, context));
}
