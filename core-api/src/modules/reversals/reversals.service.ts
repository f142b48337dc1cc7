import {
  AppError,
  type Clock,
  type CurrencyCode,
  formatMinorUnits,
  type MemberDeductionResponse,
  type ReversalRequest,
  type ReversalResponse,
  reversalShare,
  toMinorUnits,
} from '@pts/shared';
import type { Minter } from '../../chain/minter.types.ts';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { WalletBalanceDeps } from '../ledger/wallet-balance.ts';
import { type DeductionInput, deductFromMember } from './deductions.ts';
import {
  eventIdForExternalId,
  findReversal,
  lockEvent,
  type ReversalRow,
  readEventMint,
  readEventReversals,
} from './reversals.repository.ts';

// Reversals (issue 35 §2; docs/shop-program.md "Refunds and reversals"): a brand takes back all or part of an
// event's reward. The entry is recorded at once (the member's earned totals and boards read it from there);
// its chain side, a `reverseBatch` on the minter's signer, burns what the wallet still holds and the rest
// becomes the member's debt at the brand, paid first from their next rewards (events.service: payDebtFirst).

export interface ReversalServiceDeps {
  db: Database;
  clock: Clock;
  /** Sends the reversal's `reverseBatch` and tracks it (chain/minter.ts `reverse`). */
  minter: Pick<Minter, 'reverse'>;
  /**
   * Runs in the transaction of a reversal settled without the chain (nothing to take there): the same
   * bookkeeping the minter runs when it settles one from its receipt (the `reward.reversed` notice, the boards).
   */
  onSettled?: (trx: Database, reversalIds: string[]) => Promise<void>;
  /** How long a request waits for its reversal to be settled on chain before answering `pending`/`submitted`. */
  waitMs: number;
  /**
   * After a new reversal is recorded and sent: what else follows from it (a referral whose qualifying purchase
   * this was is reversed too: referrals.service `afterReversal`). Never fails the reversal.
   */
  afterRecorded?: (reversal: { brandId: string; eventId: string; reversalId: string }) => Promise<void>;
  /** The member's wallet read (a deduction may take only what the member holds spendable). */
  wallet: WalletBalanceDeps;
}

export interface ReversalService {
  /** Records the reversal (or finds the brand's earlier one with this reversalId) and drives its chain side. */
  reverse(input: ReversalRequest): Promise<ReversalResponse>;
  /** A manual deduction (deductions.ts): a reversal naming no event, for a reason, audited as the actor. */
  deduct(input: DeductionInput): Promise<MemberDeductionResponse>;
}

/** The answer for a recorded reversal. */
export function toReversalResponse(row: ReversalRow, duplicate = false): ReversalResponse {
  const currency = row.currency as CurrencyCode | null;
  return {
    reversalId: row.reversal_id,
    brandId: row.brand_id,
    // A brand's reversal always names its event (only a deduction has none, and it is never answered here).
    eventId: row.event_id ?? '',
    eventType: row.event_type ?? '',
    requested: Number(row.pts),
    taken: row.taken === null ? null : Number(row.taken),
    debt: row.debt === null ? null : Number(row.debt),
    refunded:
      row.refunded_minor !== null && currency
        ? { amount: formatMinorUnits(BigInt(row.refunded_minor), currency), currency }
        : null,
    status: row.status,
    transactionHash: row.transaction_hash,
    createdAt: new Date(row.created_at).toISOString(),
    ...(duplicate ? { duplicate: true } : {}),
  };
}

function eventNotFound(input: ReversalRequest): AppError {
  const named = input.eventId
    ? `eventId ${input.eventId}`
    : `eventType ${input.eventType} with externalId ${input.externalId}`;
  return new AppError(
    'NOT_FOUND',
    `No event with ${named} at brand ${input.brandId}: name an event this brand recorded (its eventId as manual-event answered it, or the eventType and externalId it was sent with)`,
    { reason: 'event_not_found' },
  );
}

/** The same reversalId again: the first reversal, or a 409 when this request names another event or value. */
function repeatOf(existing: ReversalRow, input: ReversalRequest, eventId: string | undefined): ReversalResponse {
  const sameEvent = eventId === undefined || eventId === existing.event_id;
  const sameValue =
    input.value === undefined
      ? existing.refunded_minor === null
      : existing.currency === input.value.currency &&
        existing.refunded_minor === toMinorUnits(input.value.amount, input.value.currency);
  if (!sameEvent || !sameValue) {
    throw new AppError(
      'CONFLICT',
      `reversalId ${existing.reversal_id} was already used for another reversal (event ${existing.event_id}); use a new reversalId for a new refund`,
      { reason: 'reversal_id_reused', eventId: existing.event_id },
    );
  }
  return toReversalResponse(existing, true);
}

type LockedEvent = NonNullable<Awaited<ReturnType<typeof lockEvent>>>;

/** The refund of this request in minor units, checked against the event's value and currency. */
function refundOf(event: LockedEvent, input: ReversalRequest): bigint | undefined {
  if (!input.value) return undefined;
  if (event.value_currency === null || event.value_minor === null) {
    throw new AppError(
      'VALIDATION_ERROR',
      'The event carried no value, so a part of it cannot be refunded by value: leave `value` out to reverse it all',
      { field: 'value', reason: 'event_has_no_value' },
    );
  }
  if (input.value.currency !== event.value_currency) {
    throw new AppError(
      'VALIDATION_ERROR',
      `The refund is in ${input.value.currency} but the event's value was in ${event.value_currency}: send the refund in ${event.value_currency}`,
      { field: 'value.currency', reason: 'currency_mismatch' },
    );
  }
  return toMinorUnits(input.value.amount, input.value.currency);
}

/** Records the reversal in one transaction; the new row's id, or the earlier answer for a repeated reversalId. */
async function recordReversal(
  deps: ReversalServiceDeps,
  input: ReversalRequest,
): Promise<{ id: string } | { answer: ReversalResponse }> {
  return deps.db.transaction().execute(async (trx) => {
    const eventId =
      input.eventId ?? (await eventIdForExternalId(trx, input.brandId, input.eventType!, input.externalId!));
    const earlier = await findReversal(trx, input.brandId, input.reversalId);
    if (earlier) return { answer: repeatOf(earlier, input, eventId) };
    if (!eventId) throw eventNotFound(input);
    // Reversals of one event wait for each other here: each sees what the earlier ones took.
    const event = await lockEvent(trx, eventId);
    if (!event || event.brand_id !== input.brandId) throw eventNotFound(input);
    const again = await findReversal(trx, input.brandId, input.reversalId);
    if (again) return { answer: repeatOf(again, input, eventId) };
    const refund = refundOf(event, input);
    const before = await readEventReversals(trx, eventId);
    const share = reversalShare(
      {
        reward: event.status === 'accepted' ? Number(event.reward_amount) : 0,
        valueMinor: event.value_minor === null ? undefined : BigInt(event.value_minor),
        refundedMinor: before.refunded,
        reversedPts: Number(before.pts),
      },
      refund,
    );
    if (!share.ok) {
      const code = share.reason === 'NOTHING_LEFT' ? 'CONFLICT' : 'VALIDATION_ERROR';
      throw new AppError(code, share.message, {
        reason: share.reason.toLowerCase(),
        ...(share.reason === 'NOTHING_LEFT' ? {} : { field: 'value' }),
      });
    }
    return { id: await insertReversal(deps, trx, { input, event, pts: share.pts, refund }) };
  });
}

async function insertReversal(
  deps: ReversalServiceDeps,
  trx: Database,
  params: { input: ReversalRequest; event: LockedEvent; pts: number; refund: bigint | undefined },
): Promise<string> {
  const { input, event, pts, refund } = params;
  const mint = await readEventMint(trx, event.id);
  // Nothing to take on chain: no pts (a refund too small to round to one), or a reward that was never minted.
  const offChain = pts === 0 || !mint || mint.status === 'failed';
  const now = deps.clock.now();
  const id = crypto.randomUUID();
  await trx
    .insertInto('reward_reversals')
    .values({
      id,
      brand_id: input.brandId,
      reversal_id: input.reversalId,
      event_id: event.id,
      user_email: event.user_email,
      wallet_address: offChain ? null : mint.wallet_address.toLowerCase(),
      pts,
      refunded_minor: refund ?? null,
      currency: refund === undefined ? null : event.value_currency,
      status: offChain ? 'confirmed' : 'pending',
      taken: offChain ? 0n : null,
      debt: offChain ? 0n : null,
      created_at: now,
      updated_at: now,
      confirmed_at: offChain ? now : null,
    })
    .execute();
  if (offChain) await deps.onSettled?.(trx, [id]);
  return id;
}

export function createReversalService(deps: ReversalServiceDeps): ReversalService {
  return {
    async reverse(input) {
      let recorded: { id: string } | { answer: ReversalResponse };
      try {
        recorded = await recordReversal(deps, input);
      } catch (error) {
        // The same reversalId sent twice at once: the first insert won; this request answers it.
        if (!isUniqueViolation(error)) throw error;
        recorded = await recordReversal(deps, input);
      }
      if ('answer' in recorded) return recorded.answer;
      await deps.minter.reverse([recorded.id], { waitMs: deps.waitMs });
      const row = await deps.db
        .selectFrom('reward_reversals as r')
        .leftJoin('events as e', 'e.id', 'r.event_id')
        .selectAll('r')
        .select('e.event_type')
        .where('r.id', '=', recorded.id)
        .executeTakeFirstOrThrow();
      if (row.event_id !== null) {
        await deps.afterRecorded?.({ brandId: row.brand_id, eventId: row.event_id, reversalId: row.reversal_id });
      }
      return toReversalResponse(row as ReversalRow);
    },
    deduct: (input) => deductFromMember(deps, input),
  };
}
