import { randomUUID } from 'node:crypto';
import { AppError, type Clock, type EventRequest, type ReferralOutcome, type Value } from '@pts/shared';
import type { Insertable } from 'kysely';
import type { Logger } from 'pino';
import type { InlineMintSigner, Minter, MintSubmission } from '../../chain/minter.types.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { EventsTable } from '../../db/schema.ts';
import { replayedSignature, type SignatureClaim } from '../../http/brand-signature.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { payDebtsFirst } from '../reversals/reversals.repository.ts';
import { ensureUsers, findUsers, setUserWallets } from '../users/users.repository.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';
import { createWalletReserve, type ReservedWallet, type WalletReserve } from '../wallets/wallet-reserve.ts';
import { judgeCampaignLimit, judgeEvent } from './event-rules.ts';
import {
  type ClaimCounter,
  claimExternalIds,
  type ExternalIdKey,
  type ExternalIdOwner,
  externalIdKeyOf,
  findExternalIdOwners,
  lockRuleTotals,
  normalizedValue,
  openAcceptBatch,
  type RuleRecord,
  ruleKeyOf,
  settleExternalIds,
  valueColumnsOf,
  writeJudgedBatch,
} from './events.repository.ts';

/** An event that passed the checks needing no lock (brand, domain, automation, rule, channel). */
export interface EventCandidate {
  eventId: string;
  input: EventRequest;
  rule: RuleRecord;
  /** A privileged origin claimed by a signed request (bypasses duplicate window, cooldown, max claims). */
  source: string | undefined;
  skipCooldown: boolean;
  domain: string | undefined;
  /** The request's signature, recorded as used in the same transaction as the event. */
  signature: SignatureClaim | undefined;
  /** Who sent it: `brand` (brand-signed), `agent:<keyId>` (agent API), undefined (unsigned or platform). */
  sentBy?: string | undefined;
  /** An amount the server computed (streak check-in × multiplier, milestone bonus); the rule's amount if absent. */
  rewardAmount?: bigint | undefined;
  /** Skip the duplicate window: the caller deduplicates itself (one check-in per user and UTC day). */
  skipDuplicateWindow?: boolean | undefined;
  /** A hashtag campaign this event claims (post_hashtag): its per-user limit is judged here too. */
  campaign?: CampaignLimit | undefined;
  /** The brand blocked this member (judgeEvent refuses with MEMBER_BLOCKED). */
  memberBlocked?: { reason: string; blockedAt: Date } | undefined;
}

/** A hashtag campaign's per-user limit, counted in its own claim counter (see campaignCounterKeyOf). */
export interface CampaignLimit {
  id: string;
  maxClaimsPerUser: number;
}

/**
 * A campaign's claims per user live in `claim_counters` under the event type `campaign:<id>`, which no rule
 * can have (event types are letters, digits and underscores), so the counter is locked with the event's own counters, in
 * the same key order, and a second campaign post waits for the first and sees its claim.
 */
function campaignCounterOf(input: EventRequest, campaign: CampaignLimit) {
  return { brandId: input.brandId, eventType: `campaign:${campaign.id}`, email: input.userEmail };
}

/** An event that passed every rule and whose reward row is committed; the mint may still be on its way. */
export interface AcceptedEvent {
  eventId: string;
  eventType: string;
  rewardAmount: number;
  walletAddress: `0x${string}`;
  walletCreated: boolean;
  mintId: string | undefined;
  /**
   * When the accept transaction signed the reward's `mintBatch` itself (minter.beginInline): resolves once
   * that transaction was sent (or `pending` after the mint wait). Absent: ask `minter.submit`.
   */
  mintSubmission?: Promise<MintSubmission> | undefined;
  /** The value the reward was computed on (the event's `value`, normalized to the currency's minor units). */
  value?: Value | undefined;
  /** This request repeated an `externalId`: every field above describes the first event; nothing new was paid. */
  duplicate?: true | undefined;
  /** What became of the event's `referralCode`, or of the referral it paid (set by the event service). */
  referral?: ReferralOutcome | undefined;
  /** A duplicate of an event committed earlier: its mint as recorded (no waiting on the minter). */
  knownMint?:
    | {
        status: ExternalIdOwner['mintStatus'];
        transactionHash: string | undefined;
        confirmedBy: ExternalIdOwner['confirmedBy'];
      }
    | undefined;
}

export interface EventBatcherDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  wallets: WalletProvider;
  /** New users' wallets made ahead (local HD wallets only); without it they are derived on demand. */
  walletReserve?: WalletReserve | undefined;
  /** Signs each batch's `mintBatch` inside its accept transaction; without it rows go in `pending`. */
  minter?: Pick<Minter, 'beginInline'> | undefined;
  settings: { duplicateWindowSeconds: number; maxBatch?: number; mintWaitMs?: number };
}

interface ResolvedUsers {
  users: Map<string, { id: bigint; walletAddress: string | null }>;
  /** Emails whose user got a wallet in this batch (told once, as `walletCreated`). */
  walletCreatedFor: Set<string>;
}

interface Pending {
  candidate: EventCandidate;
  resolve(accepted: AcceptedEvent): void;
  reject(error: unknown): void;
}

function externalKeyOf(input: EventRequest): (ExternalIdKey & { key: string }) | undefined {
  if (input.externalId === undefined) return undefined;
  const key = { brandId: input.brandId, eventType: input.eventType, externalId: input.externalId };
  return { ...key, key: externalIdKeyOf(key) };
}

function counterKeyOf(input: EventRequest): string {
  return `${input.brandId}\u0000${input.eventType}\u0000${input.userEmail}`;
}

/**
 * Group commit for the accept path. Concurrent events queue here; one batch at a time is judged and written
 * in a single transaction of multi-row statements that holds the claim-counter locks of all its users, so a
 * batch costs about ten statements whatever its size. Inside a batch the events are judged one after
 * another in arrival order against the locked counters, exactly as if each had its own transaction: two
 * identical events in one batch see each other. Replicas stay correct because counters (and rule totals)
 * are locked in the database, in key order.
 */
export function createEventBatcher(deps: EventBatcherDeps) {
  const maxBatch = deps.settings.maxBatch ?? 128;
  let queue: Pending[] = [];
  let flushing: Promise<void> | undefined;

  /**
   * A batch is cut one event-loop turn after the first event queues (setImmediate): every request whose
   * bytes already arrived is parsed and joins it. Without the turn, an embedded database that answers
   * without real I/O (PGlite) would run each first event's transaction before the next request was read:
   * batches of one.
   */
  const schedule = () => {
    if (flushing || queue.length === 0) return;
    flushing = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        return flush(batch);
      })
      .finally(() => {
        flushing = undefined;
        schedule();
      });
  };

  async function flush(batch: Pending[]): Promise<void> {
    try {
      const outcomes = await judgeAndWrite(batch.map((p) => p.candidate));
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof AppError) pending.reject(outcome);
        else pending.resolve(outcome);
      });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // One event's unexpected failure must not fail its neighbours: retry each on its own.
      deps.logger.warn({ err: error, size: batch.length }, 'event batch failed; retrying its events one by one');
      for (const pending of batch) await flush([pending]);
    }
  }

  /**
   * Without a wallet reserve (wallets from a remote provider): finds or creates the users of these emails
   * before the transaction, so no lock waits on a remote call.
   */
  async function resolveUsersAhead(emails: string[]): Promise<ResolvedUsers> {
    const users = await ensureUsers(deps.db, emails);
    const walletCreatedFor = await completeWallets(deps.db, users);
    return { users, walletCreatedFor };
  }

  /**
   * With a reserve: the users the transaction's first statement inserted (with their reserved wallets) or
   * found. Reserved wallets it did not use go back; a user inserted concurrently after that statement's
   * snapshot is read again.
   */
  async function adoptUsers(
    trx: Database,
    emails: string[],
    newUsers: (ReservedWallet & { email: string })[],
    opened: Awaited<ReturnType<typeof openAcceptBatch>>,
  ): Promise<ResolvedUsers> {
    const users = new Map(opened.existingUsers);
    const walletCreatedFor = new Set<string>();
    const unused: ReservedWallet[] = [];
    for (const { email, ...wallet } of newUsers) {
      if (opened.insertedEmails.has(email)) {
        users.set(email, { id: wallet.userId, walletAddress: wallet.address });
        walletCreatedFor.add(email);
      } else unused.push(wallet);
    }
    deps.walletReserve?.giveBack(unused);
    const unseen = emails.filter((email) => !users.has(email));
    if (unseen.length > 0) for (const [email, user] of await findUsers(trx, unseen)) users.set(email, user);
    for (const email of await completeWallets(trx, users)) walletCreatedFor.add(email);
    return { users, walletCreatedFor };
  }

  /** Gives users without a wallet yet (created by another path, or a crash between its steps) one now. */
  async function completeWallets(
    db: Database,
    users: Map<string, { id: bigint; walletAddress: string | null }>,
  ): Promise<Set<string>> {
    const missing = [...users.entries()].filter(([, user]) => !user.walletAddress);
    if (missing.length === 0) return new Set();
    const derived = await Promise.all(
      missing.map(async ([email, user]) => ({
        email,
        userId: user.id,
        ...(await deps.wallets.walletForUser({ userId: user.id, email })),
      })),
    );
    const created = await setUserWallets(
      db,
      derived.map((d) => ({ userId: d.userId, address: d.address, idpUserId: d.idpUserId })),
    );
    const walletCreatedFor = new Set<string>();
    for (const d of derived) {
      users.get(d.email)!.walletAddress = d.address;
      if (created.has(d.userId)) walletCreatedFor.add(d.email);
    }
    return walletCreatedFor;
  }

  async function judgeAndWrite(candidates: EventCandidate[]): Promise<(AcceptedEvent | AppError)[]> {
    const now = deps.clock.now();
    deps.metrics.eventBatchSize.observe(candidates.length);
    const outcomes: (AcceptedEvent | AppError | undefined)[] = candidates.map(() => undefined);

    // New users take wallets made ahead (wallet-reserve.ts) and are inserted by the transaction's first
    // statement; without a reserve (or when it fails) users are resolved here, before any lock is taken.
    const emails = [...new Set(candidates.map((c) => c.input.userEmail))];
    let ahead: ResolvedUsers | undefined;
    let newUsers: (ReservedWallet & { email: string })[] = [];
    if (deps.walletReserve) {
      try {
        const reserved = await deps.walletReserve.take(emails.length);
        newUsers = emails.map((email, i) => ({ email, ...reserved[i]! }));
      } catch (error) {
        deps.logger.warn({ err: error }, 'reserved wallets unavailable; deriving them on demand');
        ahead = await resolveUsersAhead(emails);
      }
    } else ahead = await resolveUsersAhead(emails);

    const rejected: Insertable<EventsTable>[] = [];
    const reject = (i: number, error: AppError) => {
      outcomes[i] = error;
      const c = candidates[i]!;
      deps.metrics.eventsProcessed.inc({ outcome: error.code });
      if (error.code === 'INVALID_SIGNATURE') return;
      rejected.push(eventRow(c, 'rejected', error.code, 0n, now));
    };

    const write = (signer: InlineMintSigner | undefined) =>
      deps.db.transaction().execute(async (trx) => {
        const signatures = candidates.filter((c) => c.signature).map((c) => c.signature!);
        // Every candidate's counter is locked, a replay's too: a lock more, a round trip less.
        const counterKeys = new Map<string, { brandId: string; eventType: string; email: string }>();
        for (const { input, campaign } of candidates) {
          counterKeys.set(counterKeyOf(input), {
            brandId: input.brandId,
            eventType: input.eventType,
            email: input.userEmail,
          });
          if (campaign) {
            const key = campaignCounterOf(input, campaign);
            counterKeys.set(counterKeyOf({ ...input, eventType: key.eventType }), key);
          }
        }
        const opened = await openAcceptBatch(trx, {
          emails: ahead ? [] : emails,
          newUsers: ahead ? [] : newUsers,
          claims: dedupe(signatures),
          counterKeys: [...counterKeys.values()],
        });
        const { fresh, counters: locked } = opened;
        const { users, walletCreatedFor } = ahead ?? (await adoptUsers(trx, emails, newUsers, opened));
        // A signature counts once: the first request presenting it in this batch owns it, a second request
        // with the same signature (a replay racing the original) is refused.
        const owners = new Map<string, SignatureClaim>();
        const live: number[] = [];
        candidates.forEach((c, i) => {
          if (c.signature) {
            const sig = c.signature.signature;
            if (!owners.has(sig) && fresh.has(sig)) owners.set(sig, c.signature);
            if (owners.get(sig) !== c.signature) {
              reject(i, replayedSignature());
              return;
            }
          }
          live.push(i);
        });

        const counters = new Map<string, ClaimCounter>();
        for (const counter of locked) {
          counters.set(`${counter.brand_id}\u0000${counter.event_type}\u0000${counter.user_email}`, counter);
        }
        const cappedRules = new Map<string, RuleRecord>();
        for (const i of live) {
          const { rule } = candidates[i]!;
          if (rule.max_total_claims !== null) cappedRules.set(ruleKeyOf(rule), rule);
        }
        const totals = await lockRuleTotals(trx, [...cappedRules.values()]);

        // Idempotency keys: claimed here (the unique index waits for a concurrent holder), so a key already
        // committed answers as a duplicate of its event, and one batch's repeats see the first of them.
        const keyClaims = new Map<string, ExternalIdKey & { eventId: string }>();
        for (const i of live) {
          const c = candidates[i]!;
          const external = externalKeyOf(c.input);
          if (external && !keyClaims.has(external.key)) {
            const { key: _key, ...claim } = external;
            keyClaims.set(external.key, { ...claim, eventId: c.eventId });
          }
        }
        const claimedKeys = await claimExternalIds(trx, [...keyClaims.values()], now);
        const earlierOwners = await findExternalIdOwners(
          trx,
          [...keyClaims.entries()].filter(([key]) => !claimedKeys.has(key)).map(([, claim]) => claim),
        );
        const acceptedByKey = new Map<string, AcceptedEvent>();
        const firstCandidateByKey = new Map<string, EventCandidate>();
        const touchedCounters = new Set<ClaimCounter>();
        const touchedRules = new Set<string>();
        const accepted: Insertable<EventsTable>[] = [];
        const mints: Parameters<typeof writeJudgedBatch>[1]['mints'] = [];

        for (const i of live) {
          const c = candidates[i]!;
          const external = externalKeyOf(c.input);
          if (external && !claimedKeys.has(external.key)) {
            const owner = earlierOwners.get(external.key);
            if (!owner) throw new Error(`externalId ${external.externalId} is claimed by no event`);
            rejected.push(eventRow(c, 'rejected', 'DUPLICATE_EXTERNAL_ID', 0n, now));
            deps.metrics.eventsProcessed.inc({ outcome: 'DUPLICATE_EXTERNAL_ID' });
            if (!mayShowFirstEvent(c, owner)) {
              outcomes[i] = externalIdUsed(c.input.externalId);
              continue;
            }
            outcomes[i] = {
              eventId: owner.eventId,
              eventType: owner.eventType,
              rewardAmount: Number(owner.rewardAmount),
              walletAddress: owner.walletAddress as `0x${string}`,
              walletCreated: false,
              mintId: undefined,
              ...(owner.value ? { value: owner.value } : {}),
              duplicate: true,
              knownMint: {
                status: owner.mintStatus,
                transactionHash: owner.transactionHash,
                confirmedBy: owner.confirmedBy,
              },
            };
            continue;
          }
          const first = external ? acceptedByKey.get(external.key) : undefined;
          if (first) {
            const firstCandidate = firstCandidateByKey.get((external as { key: string }).key)!;
            outcomes[i] = mayShowFirstEvent(c, {
              sentBy: firstCandidate.sentBy ?? null,
              userEmail: firstCandidate.input.userEmail,
            })
              ? { ...first, walletCreated: false, duplicate: true }
              : externalIdUsed(c.input.externalId);
            rejected.push(eventRow(c, 'rejected', 'DUPLICATE_EXTERNAL_ID', 0n, now));
            deps.metrics.eventsProcessed.inc({ outcome: 'DUPLICATE_EXTERNAL_ID' });
            continue;
          }
          const counter = counters.get(counterKeyOf(c.input))!;
          const campaignCounter = c.campaign
            ? counters.get(counterKeyOf({ ...c.input, eventType: campaignCounterOf(c.input, c.campaign).eventType }))!
            : undefined;
          const error =
            judgeEvent(c, counter, totals.get(ruleKeyOf(c.rule)), now, deps.settings) ??
            (c.campaign && campaignCounter ? judgeCampaignLimit(c, c.campaign, campaignCounter) : undefined);
          if (error) {
            reject(i, error);
            continue;
          }
          for (const claimed of campaignCounter ? [counter, campaignCounter] : [counter]) {
            claimed.claims += 1;
            claimed.last_claim_at = now;
            claimed.last_event_id = c.eventId;
            touchedCounters.add(claimed);
          }
          const total = totals.get(ruleKeyOf(c.rule));
          if (total && c.rule.max_total_claims !== null) {
            total.total += 1;
            touchedRules.add(ruleKeyOf(c.rule));
          }
          const amount = c.rewardAmount ?? BigInt(c.rule.reward_amount);
          const wallet = users.get(c.input.userEmail)!.walletAddress as `0x${string}`;
          const mintId = amount > 0n ? randomUUID() : undefined;
          accepted.push(eventRow(c, 'accepted', null, amount, now));
          if (mintId) {
            mints.push({
              id: mintId,
              eventId: c.eventId,
              brandId: c.input.brandId,
              walletAddress: wallet,
              amount,
              at: now,
            });
          }
          const walletCreated = walletCreatedFor.delete(c.input.userEmail);
          const outcome: AcceptedEvent = {
            eventId: c.eventId,
            eventType: c.input.eventType,
            rewardAmount: Number(amount),
            walletAddress: wallet,
            walletCreated,
            mintId,
            ...(c.input.value ? { value: normalizedValue(c.input.value) } : {}),
          };
          outcomes[i] = outcome;
          if (external) {
            acceptedByKey.set(external.key, outcome);
            firstCandidateByKey.set(external.key, c);
          }
        }
        if (claimedKeys.size > 0) {
          const owners: (ExternalIdKey & { eventId: string })[] = [];
          const released: ExternalIdKey[] = [];
          for (const key of claimedKeys) {
            const claim = keyClaims.get(key)!;
            const accepted = acceptedByKey.get(key);
            if (accepted) owners.push({ ...claim, eventId: accepted.eventId });
            else released.push(claim);
          }
          await settleExternalIds(trx, { owners, released });
        }

        // The member's debt at the brand (reversals the chain could not take in full) is paid first: that part
        // of a reward is not minted, and a reward that pays only debt mints nothing.
        const paidInFull = await payDebtsFirst(trx, mints);
        if (paidInFull.size > 0) {
          mints.splice(0, mints.length, ...mints.filter((m) => !paidInFull.has(m.id)));
          for (const outcome of outcomes) {
            if (outcome && !(outcome instanceof AppError) && outcome.mintId && paidInFull.has(outcome.mintId))
              outcome.mintId = undefined;
          }
        }
        // The batch's own mintBatch, signed and recorded here: its rows commit already `submitted`.
        const inline =
          signer && mints.length > 0
            ? await signer.sign(
                trx,
                mints.map((m) => ({ id: m.id, walletAddress: m.walletAddress, amount: m.amount })),
              )
            : undefined;
        await writeJudgedBatch(trx, {
          events: [...accepted, ...rejected],
          counters: [...touchedCounters],
          ruleTotals: [...touchedRules].map((key) => ({ rule: cappedRules.get(key)!, total: totals.get(key)!.total })),
          mints,
          chainTxId: inline?.chainTxId,
          now,
        });
        return inline !== undefined;
      });
    // Signed inside the batch's own transaction, broadcast after its commit: the batcher drives each step
    // of the minter's inline signing (chain/mint/inline.ts), which never calls back into it.
    const inline = deps.minter ? await deps.minter.beginInline() : undefined;
    let signedInline: boolean;
    try {
      signedInline = await write(inline?.signer);
    } catch (error) {
      inline?.rolledBack(error);
      await inline?.released();
      throw error;
    }
    const sent = inline?.committed({ waitMs: deps.settings.mintWaitMs });
    await inline?.released();
    if (signedInline && sent) {
      for (const outcome of outcomes) {
        if (outcome && !(outcome instanceof AppError) && outcome.mintId) outcome.mintSubmission = sent;
      }
    }
    const rewarded = outcomes.filter((o) => o && !(o instanceof AppError) && !o.duplicate).length;
    if (rewarded > 0) deps.metrics.eventsProcessed.inc({ outcome: 'rewarded' }, rewarded);
    return outcomes.map((o) => o ?? new AppError('INTERNAL_ERROR', 'Event was not judged'));
  }

  return {
    /** Queues an event for the next batch; resolves when its batch committed, rejects with its rule's error. */
    enqueue(candidate: EventCandidate): Promise<AcceptedEvent> {
      return new Promise<AcceptedEvent>((resolve, reject) => {
        queue.push({ candidate, resolve, reject });
        schedule();
      });
    },
    /** Waits for queued events to be written (shutdown). */
    async drain(): Promise<void> {
      while (flushing) await flushing;
    },
  };
}

export type EventBatcher = ReturnType<typeof createEventBatcher>;

/** The batcher with the operator's settings; every batch signs its own mintBatch when `minter` may sign. */
export function createConfiguredEventBatcher(
  deps: Omit<EventBatcherDeps, 'settings' | 'walletReserve'>,
  config: Pick<Config, 'PTS_DUPLICATE_WINDOW_SECONDS' | 'PTS_MINT_BATCH_MAX' | 'PTS_MINT_WAIT_MS' | 'PTS_MINT_INLINE'>,
): EventBatcher {
  return createEventBatcher({
    ...deps,
    minter: config.PTS_MINT_INLINE ? deps.minter : undefined,
    walletReserve: deps.wallets.derivesFromUserId
      ? createWalletReserve({ db: deps.db, wallets: deps.wallets, logger: deps.logger })
      : undefined,
    settings: {
      duplicateWindowSeconds: config.PTS_DUPLICATE_WINDOW_SECONDS,
      // A batch's rewards must fit in the one mintBatch its transaction signs.
      maxBatch: Math.min(128, config.PTS_MINT_BATCH_MAX),
      mintWaitMs: config.PTS_MINT_WAIT_MS,
    },
  });
}

function dedupe(claims: SignatureClaim[]): SignatureClaim[] {
  return [...new Map(claims.map((c) => [c.signature, c])).values()];
}

function eventRow(
  c: EventCandidate,
  status: 'accepted' | 'rejected',
  reason: string | null,
  amount: bigint,
  now: Date,
): Insertable<EventsTable> {
  return {
    id: c.eventId,
    brand_id: c.input.brandId,
    event_type: c.input.eventType,
    user_email: c.input.userEmail,
    status,
    reason,
    source: c.source ?? null,
    domain: c.domain ?? null,
    channel_id: c.input.channel_id ?? null,
    metadata: JSON.stringify(c.input.metadata ?? {}),
    reward_amount: amount,
    ...valueColumnsOf(c.input),
    created_at: now,
    sent_by: c.sentBy ?? null,
  };
}

/**
 * Whether a repeat of an externalId may see the first event (its wallet, event id and transaction): only when the
 * same authenticated sender (the brand's signature, or the same agent key) repeats it for the same user. An
 * unsigned request's domain is only a claim and order ids are easy to guess (issue 24 §7).
 */
function mayShowFirstEvent(repeat: EventCandidate, first: { sentBy: string | null; userEmail: string }): boolean {
  return repeat.sentBy !== undefined && repeat.sentBy === first.sentBy && repeat.input.userEmail === first.userEmail;
}

/** 409 `duplicate` for a repeat that may not see the first event: nothing of it is named. */
function externalIdUsed(externalId: string | undefined): AppError {
  return new AppError(
    'DUPLICATE_EVENT',
    'Duplicate event: this externalId was already used for this brand and event type; nothing new was rewarded',
    { reason: 'duplicate', externalId },
  );
}
