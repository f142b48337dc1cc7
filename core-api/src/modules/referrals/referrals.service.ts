import { createHash, randomBytes } from 'node:crypto';
import {
  AppError,
  type Clock,
  type CurrencyCode,
  formatMinorUnits,
  type ReferralCodeResponse,
  type ReferralOutcome,
  type ReferralProgramInput,
  type ReferralProgramResponse,
  type ReferralRefusalReason,
  type ReferralStatsResponse,
  type ReversalRequest,
  referralCapAllows,
  referralCodeFromBytes,
  referralLink,
  selfReferralReason,
  toMinorUnits,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { accountIdentities } from '../accounts/accounts.service.ts';
import { findBrandByAddress, insertAuditEntry } from '../brands/brands.repository.ts';
import { enqueueWebhooks } from '../webhooks/webhooks.outbox.ts';
import {
  countPaidSince,
  findCodeOwner,
  findMemberCode,
  findReferral,
  findReferralByQualifyingEvent,
  hasBrandEvents,
  insertMemberCode,
  insertReferral,
  insertRefusal,
  loadReferralProgram,
  lockReferral,
  lockReferrer,
  qualifyingEventAfterReversals,
  type ReferralProgram,
  type ReferralRow,
  readReferralStats,
  saveReferralProgram,
  updateReferral,
  walletsOf,
} from './referrals.repository.ts';

// Referrals (issue 36 §2, docs/referrals.md). A member's code per brand; a new member's first event carries
// it (`referralCode`) and attaches the referral after the fraud rules; the brand's qualifying event pays both
// sides once, through the one award path; a reversal of that event reverses both rewards. The event pipeline
// calls `attachReferral` before it judges an event and `qualifyReferral` after it accepted one
// (events.service.ts), as it promotes tiers.

/** The event types the rewards are recorded under (in the one ledger, as manual awards of the brand). */
export const REFERRER_REWARD_EVENT_TYPE = 'referral_referrer';
export const REFEREE_REWARD_EVENT_TYPE = 'referral_referee';

/**
 * The one award path as this module uses it (the event service's `award`, with a manual award's shape): typed
 * here so that referrals and the event pipeline, which calls this module, import no cycle.
 */
export interface ReferralAwardPath {
  award(request: {
    kind: 'manual';
    eventType: string;
    brandId: string;
    userEmail: string;
    amount: bigint;
    reason: string;
    awardedBy: string;
    idempotencyKey: string;
  }): Promise<{ eventId: string }>;
}

/** The reversal path as this module uses it (the reversal service). */
export interface ReferralReversalPath {
  reverse(input: ReversalRequest): Promise<unknown>;
}

interface Deps {
  db: Database;
  clock: Clock;
}

async function brandOrThrow(db: Database, brandId: string) {
  const brand = await findBrandByAddress(db, brandId);
  if (!brand) {
    throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, {
      field: 'brandId',
      value: brandId,
    });
  }
  return brand;
}

function programAnswer(brandId: string, currency: CurrencyCode, program: ReferralProgram | undefined) {
  return {
    success: true as const,
    brandId,
    currency,
    program: program
      ? {
          qualifyingEventType: program.qualifyingEventType,
          minValue: program.minValueMinor === null ? null : formatMinorUnits(program.minValueMinor, currency),
          referrerReward: program.referrerReward,
          refereeReward: program.refereeReward,
          capPerReferrer: program.capPerReferrer,
          capPeriodDays: program.capPeriodDays,
          updatedAt: program.updatedAt.toISOString(),
        }
      : null,
  };
}

export async function readReferralProgram(db: Database, brandId: string): Promise<ReferralProgramResponse> {
  const brand = await brandOrThrow(db, brandId);
  return programAnswer(brandId, brand.currency as CurrencyCode, await loadReferralProgram(db, brandId));
}

/** Replaces the brand's program, audited (`referrals.set`, before and after). */
export async function setReferralProgram(
  deps: Deps,
  brandId: string,
  input: ReferralProgramInput,
  actor: string,
): Promise<ReferralProgramResponse> {
  const brand = await brandOrThrow(deps.db, brandId);
  const currency = brand.currency as CurrencyCode;
  const rule = await deps.db
    .selectFrom('event_rules')
    .select(['event_type', 'active', 'archived_at'])
    .where('brand_id', '=', brandId)
    .where('event_type', '=', input.qualifyingEventType)
    .executeTakeFirst();
  if (!rule?.active || rule.archived_at) {
    throw new AppError(
      'VALIDATION_ERROR',
      `qualifyingEventType ${input.qualifyingEventType} is not an active rule of this brand: name the event type of its sign-up or purchase rule`,
      { field: 'qualifyingEventType', value: input.qualifyingEventType },
    );
  }
  let minValueMinor: bigint | null = null;
  if (input.minValue !== undefined) {
    const decimals = input.minValue.split('.')[1]?.length ?? 0;
    const allowed = formatMinorUnits(0n, currency).split('.')[1]?.length ?? 0;
    if (decimals > allowed) {
      throw new AppError(
        'VALIDATION_ERROR',
        `minValue ${input.minValue} has more decimals than ${currency} allows (${allowed}): e.g. "${formatMinorUnits(0n, currency)}"`,
        { field: 'minValue', value: input.minValue },
      );
    }
    minValueMinor = toMinorUnits(input.minValue, currency);
  }
  const program = {
    qualifyingEventType: input.qualifyingEventType,
    minValueMinor,
    referrerReward: input.referrerReward,
    refereeReward: input.refereeReward,
    capPerReferrer: input.capPerReferrer ?? null,
    capPeriodDays: input.capPeriodDays ?? null,
  };
  const at = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const before = await loadReferralProgram(trx, brandId);
    await saveReferralProgram(trx, brandId, program, at);
    await insertAuditEntry(trx, {
      actor,
      action: 'referrals.set',
      subject: brandId,
      brandId,
      details: {
        before: before ? programAnswer(brandId, currency, before).program : null,
        after: programAnswer(brandId, currency, { ...program, updatedAt: at }).program,
      },
      at,
    });
  });
  return readReferralProgram(deps.db, brandId);
}

/** The member's code at the brand (made on first ask, then the same forever) and the link to share. */
export async function memberReferralCode(deps: Deps, brandId: string, member: string): Promise<ReferralCodeResponse> {
  const brand = await brandOrThrow(deps.db, brandId);
  let code = await findMemberCode(deps.db, brandId, member);
  // A new random code; a collision (one in 32^8 per code) or a concurrent ask for the same member tries again.
  for (let attempt = 0; code === undefined && attempt < 5; attempt++) {
    const candidate = referralCodeFromBytes(randomBytes(8));
    if (await insertMemberCode(deps.db, { brandId, member, code: candidate, at: deps.clock.now() })) code = candidate;
    else code = await findMemberCode(deps.db, brandId, member);
  }
  if (code === undefined) throw new Error('could not allocate a referral code');
  return {
    success: true,
    brandId,
    userIdentifier: member,
    code,
    link: referralLink(brand.website_domain, code),
  };
}

const REFUSAL_MESSAGES: Record<ReferralRefusalReason, string> = {
  unknown_code: 'No member of this brand has this referral code: check it',
  self_referral_account: 'A member cannot refer themselves',
  self_referral_linked_identity: 'The code belongs to an identity linked to this member’s account: no self-referral',
  self_referral_wallet: 'The code belongs to a member with the same wallet: no self-referral',
  self_referral_mailbox: 'The code belongs to the same mailbox (dots or +tags aside): no self-referral',
  referee_not_new: 'Only a member new to this brand can use a referral code: this member already has events here',
  already_referred: 'This member was already referred by another member',
  referrer_cap: 'The referrer reached the brand’s cap of paid referrals for the period',
};

function refused(reason: ReferralRefusalReason): ReferralOutcome {
  return { status: 'refused', reason, message: REFUSAL_MESSAGES[reason] };
}

async function party(db: Database, identityKey: string, extraWallets: readonly string[] = []) {
  const { accountKey, identities } = await accountIdentities(db, identityKey);
  const identityKeys = identities.map((identity) => identity.identityKey);
  const wallets = [...(await walletsOf(db, identityKeys)), ...extraWallets.map((w) => w.toLowerCase())];
  return { identityKey, accountKey: accountKey as string, identityKeys, wallets };
}

/** An event's referral code, as the pipeline hands it over before judging the event. */
export interface ReferralAttempt {
  brandId: string;
  referee: string;
  code: string;
  /** A wallet the event names for the member (`userIdentifier` as a 0x address). */
  wallet?: string | undefined;
}

/**
 * Attaches the referee to the code's owner, or refuses with the first fraud rule it breaks (recorded once per
 * referee and reason). A repeat of an attached referral by the same code answers `attached` again, so 20
 * parallel sign-ups with one code attach once.
 */
export async function attachReferral(deps: Deps, attempt: ReferralAttempt): Promise<ReferralOutcome> {
  const { brandId, referee, code } = attempt;
  const at = deps.clock.now();
  const refuse = async (reason: ReferralRefusalReason, referrer?: string) => {
    await insertRefusal(deps.db, { brandId, referee, reason, referrer, code, at });
    return refused(reason);
  };
  // The referee's referral as it stands: one referrer per referee, the first code wins.
  const settled = (row: ReferralRow) => (row.code === code ? existingOutcome(row, code) : refuse('already_referred'));
  const existing = await findReferral(deps.db, brandId, referee);
  if (existing) return settled(existing);
  const referrer = await findCodeOwner(deps.db, brandId, code);
  if (!referrer) return refuse('unknown_code');
  const [referrerParty, refereeParty] = await Promise.all([
    party(deps.db, referrer),
    party(deps.db, referee, attempt.wallet ? [attempt.wallet] : []),
  ]);
  const self = selfReferralReason(referrerParty, refereeParty);
  if (self) return refuse(self, referrer);
  if (await hasBrandEvents(deps.db, brandId, refereeParty.identityKeys)) {
    // A concurrent sign-up with the code may have attached it (and its event landed) since the first look.
    const now = await findReferral(deps.db, brandId, referee);
    if (now) return settled(now);
    return refuse('referee_not_new', referrer);
  }
  if (await insertReferral(deps.db, { brandId, referee, referrer, code, at })) {
    return {
      status: 'attached',
      message: `Referred by code ${code}: the referral pays once the qualifying event happens`,
    };
  }
  return settled((await findReferral(deps.db, brandId, referee)) as ReferralRow);
}

function existingOutcome(row: ReferralRow, code: string): ReferralOutcome {
  if (row.status === 'refused') return refused((row.reason ?? 'referrer_cap') as ReferralRefusalReason);
  if (row.status !== 'attached') {
    return {
      status: 'attached',
      message: `Referred by code ${code}; this referral was already settled (${row.status})`,
    };
  }
  return {
    status: 'attached',
    message: `Referred by code ${code}: the referral pays once the qualifying event happens`,
  };
}

/** An accepted event, as the pipeline hands it over after the accept. */
export interface AcceptedForReferral {
  brandId: string;
  member: string;
  eventType: string;
  eventId: string;
  /** The event's value in the brand currency's minor units, when it carried one. */
  valueMinor: bigint | undefined;
}

/** Whether this event is the program's qualifying event (its type, and at least its minimum value). */
export function qualifies(program: ReferralProgram, event: AcceptedForReferral): boolean {
  if (event.eventType !== program.qualifyingEventType) return false;
  if (program.minValueMinor === null) return true;
  return event.valueMinor !== undefined && event.valueMinor >= program.minValueMinor;
}

function rewardKey(referee: string, side: 'referrer' | 'referee'): string {
  return `referral-${side}:${createHash('sha256').update(referee).digest('hex').slice(0, 40)}`;
}

/**
 * After an accepted event that qualifies: under the referee's referral lock (one payment per referee) and the
 * referrer's lock (their cap), marks the referral paid or refused by the cap, announces `referral.paid`, then
 * pays both sides through the one award path, each keyed once per referee (a re-drive pays nothing twice).
 */
export async function qualifyReferral(
  deps: Deps & { events: ReferralAwardPath },
  program: ReferralProgram,
  event: AcceptedForReferral,
): Promise<ReferralOutcome | undefined> {
  if (!qualifies(program, event)) return undefined;
  const now = deps.clock.now();
  const decided = await deps.db.transaction().execute(async (trx) => {
    const referral = await lockReferral(trx, event.brandId, event.member);
    if (!referral) return undefined;
    if (referral.status !== 'attached') return { referral, outcome: undefined };
    await lockReferrer(trx, event.brandId, referral.referrer);
    const since = program.capPeriodDays === null ? null : new Date(now.getTime() - program.capPeriodDays * 86_400_000);
    const paid = await countPaidSince(trx, event.brandId, referral.referrer, since);
    if (!referralCapAllows(program.capPerReferrer, paid)) {
      await updateReferral(trx, event.brandId, event.member, {
        status: 'refused',
        reason: 'referrer_cap',
        qualifying_event_id: event.eventId,
        qualified_at: now,
      });
      await insertRefusal(trx, {
        brandId: event.brandId,
        referee: event.member,
        reason: 'referrer_cap',
        referrer: referral.referrer,
        code: referral.code,
        at: now,
      });
      return { referral, outcome: refused('referrer_cap') };
    }
    const change = {
      status: 'paid' as const,
      qualifying_event_id: event.eventId,
      qualified_at: now,
      referrer_reward: program.referrerReward,
      referee_reward: program.refereeReward,
    };
    await updateReferral(trx, event.brandId, event.member, change);
    await enqueueWebhooks(trx, [
      {
        brandId: event.brandId,
        type: 'referral.paid' as const,
        data: {
          brandId: event.brandId,
          referrer: referral.referrer,
          referee: event.member,
          code: referral.code,
          qualifyingEventId: event.eventId,
          referrerReward: program.referrerReward,
          refereeReward: program.refereeReward,
          timestamp: now.getTime(),
        },
        at: now,
      },
    ]);
    return {
      referral: { ...referral, ...change },
      outcome: {
        status: 'paid' as const,
        message: `Referral paid: ${program.referrerReward} pts to the referrer, ${program.refereeReward} pts to this member`,
      },
    };
  });
  if (!decided) return undefined;
  // Paid now, or paid before but a side's award is not recorded yet (a failure, or a concurrent payer still
  // awarding): the keys make a second award of a side answer the first one.
  if (decided.referral.status === 'paid') await payReferral(deps, decided.referral);
  return decided.outcome;
}

async function payReferral(deps: Deps & { events: ReferralAwardPath }, referral: ReferralRow): Promise<void> {
  const sides = [
    {
      side: 'referrer' as const,
      member: referral.referrer,
      amount: referral.referrer_reward ?? 0,
      eventType: REFERRER_REWARD_EVENT_TYPE,
      done: referral.referrer_event_id,
    },
    {
      side: 'referee' as const,
      member: referral.referee,
      amount: referral.referee_reward ?? 0,
      eventType: REFEREE_REWARD_EVENT_TYPE,
      done: referral.referee_event_id,
    },
  ];
  for (const s of sides) {
    if (s.done || s.amount <= 0) continue;
    const accepted = await deps.events.award({
      kind: 'manual',
      eventType: s.eventType,
      brandId: referral.brand_id,
      userEmail: s.member,
      amount: BigInt(s.amount),
      reason:
        s.side === 'referrer'
          ? `Referral: ${referral.referee} joined with your code`
          : `Referral: joined with code ${referral.code}`,
      awardedBy: 'referrals',
      idempotencyKey: rewardKey(referral.referee, s.side),
    });
    await updateReferral(
      deps.db,
      referral.brand_id,
      referral.referee,
      s.side === 'referrer' ? { referrer_event_id: accepted.eventId } : { referee_event_id: accepted.eventId },
    );
  }
}

/**
 * After a reversal of an event: when it was a paid referral's qualifying event and what is left of it no
 * longer qualifies (its reward taken back whole, or its value refunded below the program's minimum; with no
 * minimum, refunded to nothing), the referral is marked reversed and both rewards are reversed in full.
 */
export async function reverseReferralOf(
  deps: Deps & { reversals: ReferralReversalPath },
  reversal: { brandId: string; eventId: string; reversalId: string },
): Promise<boolean> {
  const referral = await findReferralByQualifyingEvent(deps.db, reversal.eventId);
  if (referral?.status !== 'paid' || referral.brand_id !== reversal.brandId) return false;
  const left = await qualifyingEventAfterReversals(deps.db, reversal.eventId);
  const program = await loadReferralProgram(deps.db, reversal.brandId);
  if (!left) return false;
  const remaining = left.valueMinor === null ? null : left.valueMinor - left.refundedMinor;
  const minimum = program?.minValueMinor ?? 1n;
  const stillQualifies = !left.whole && (remaining === null || remaining >= minimum);
  if (stillQualifies) return false;
  const marked = await deps.db.transaction().execute(async (trx) => {
    const locked = await lockReferral(trx, referral.brand_id, referral.referee);
    if (locked?.status !== 'paid') return undefined;
    await updateReferral(trx, referral.brand_id, referral.referee, {
      status: 'reversed',
      reversed_at: deps.clock.now(),
    });
    return locked;
  });
  if (!marked) return false;
  for (const [side, eventId] of [
    ['referrer', marked.referrer_event_id],
    ['referee', marked.referee_event_id],
  ] as const) {
    if (!eventId) continue;
    await deps.reversals.reverse({
      brandId: marked.brand_id,
      eventId,
      reversalId: `referral-${side}:${reversal.reversalId}`.slice(0, 128),
    } as ReversalRequest);
  }
  return true;
}

export async function referralStats(db: Database, brandId: string): Promise<ReferralStatsResponse> {
  await brandOrThrow(db, brandId);
  const { byStatus, refusals, invites } = await readReferralStats(db, brandId);
  const count = (status: string) => Number(byStatus.find((row) => row.status === status)?.n ?? 0);
  const paidRows = byStatus.filter((row) => row.status === 'paid' || row.status === 'reversed');
  const sum = (key: 'referrer_pts' | 'referee_pts') =>
    byStatus.filter((row) => row.status === 'paid').reduce((total, row) => total + Number(row[key]), 0);
  const capRefused = count('refused');
  return {
    success: true,
    brandId,
    invites,
    attached: count('attached'),
    qualified: paidRows.reduce((total, row) => total + Number(row.n), 0) + capRefused,
    paid: paidRows.reduce((total, row) => total + Number(row.n), 0),
    reversed: count('reversed'),
    pts: { referrers: sum('referrer_pts'), referees: sum('referee_pts') },
    refused: Object.fromEntries(refusals.map((row) => [row.reason, Number(row.n)])),
  };
}

/** The referral operations the routes, the CLI's admin API and the reversal hook use. */
export interface ReferralService {
  program(brandId: string): Promise<ReferralProgramResponse>;
  setProgram(brandId: string, input: ReferralProgramInput, actor: string): Promise<ReferralProgramResponse>;
  code(brandId: string, member: string): Promise<ReferralCodeResponse>;
  stats(brandId: string): Promise<ReferralStatsResponse>;
  /** After a reversal was recorded: reverses the referral rewards its qualifying event paid, when it no longer qualifies. */
  afterReversal(reversal: { brandId: string; eventId: string; reversalId: string }): Promise<void>;
}

export function createReferralService(deps: {
  db: Database;
  clock: Clock;
  logger: Logger;
  brands: { invalidate(brandId?: string): void };
  reversals: ReferralReversalPath;
}): ReferralService {
  return {
    program: (brandId) => readReferralProgram(deps.db, brandId),
    setProgram: async (brandId, input, actor) => {
      const answer = await setReferralProgram(deps, brandId, input, actor);
      deps.brands.invalidate(brandId);
      return answer;
    },
    code: (brandId, member) => memberReferralCode(deps, brandId, member),
    stats: (brandId) => referralStats(deps.db, brandId),
    afterReversal: async (reversal) => {
      try {
        await reverseReferralOf(deps, reversal);
      } catch (error) {
        deps.logger.warn({ err: error, eventId: reversal.eventId }, 'referral reversal failed');
      }
    },
  };
}
