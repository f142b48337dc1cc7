import type { Clock } from '@pts/shared';
import { AppError, type MemberDeductionResponse, type MemberReversal } from '@pts/shared';
import { sql } from 'kysely';
import type { Minter } from '../../chain/minter.types.ts';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { accountIdentities, memberOf } from '../accounts/accounts.service.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';
import { readWalletBalance, spendableBalance, type WalletBalanceDeps } from '../ledger/wallet-balance.ts';
import { findReversal, findReversalsByIds, type ReversalRow } from './reversals.repository.ts';

// Manual deductions (issue 33 §11, issue 35 §2; docs/decisions.md "A manual deduction is a reversal with no
// event"): a brand's admin or owner takes pts back from a member with a reason. The deduction is a
// `reward_reversals` row of kind `deduction` (no event): the one ledger reads it off `earned`, the member totals
// trigger off the balance, the minter's reverseBatch burns it on chain, and what the wallet no longer holds
// by then becomes debt, exactly as for a refund. It is not a refund: it may take only what the member holds
// spendable now (at this brand and in the wallet), so a deduction never creates debt on purpose.

/** Reversal ids of deductions: the idempotency key under a prefix no brand reversalId can take by accident. */
export const DEDUCTION_ID_PREFIX = 'deduction:';

export interface DeductionInput {
  brandId: string;
  /** The member by identity key (the portal's page) or as resolved by the admin API. */
  userKey: string;
  amount: number;
  reason: string;
  /** Who deducts: `portal:<e-mail>` or `admin`; written on the entry and in the audit log. */
  actor: string;
  idempotencyKey: string;
}

/** What a deduction needs: the reversal service's own deps (reversals.service.ts passes its own). */
export interface DeductionDeps {
  db: Database;
  clock: Clock;
  minter: Pick<Minter, 'reverse'>;
  waitMs: number;
  wallet: WalletBalanceDeps;
}

/** One reversal row as a member's page lists it. */
export function toMemberReversal(row: ReversalRow): MemberReversal {
  return {
    reversalId: row.reversal_id,
    kind: row.kind,
    eventId: row.event_id,
    eventType: row.event_type,
    requested: Number(row.pts),
    taken: row.taken === null ? null : Number(row.taken),
    debt: row.debt === null ? null : Number(row.debt),
    reason: row.reason,
    actor: row.actor,
    status: row.status,
    transactionHash: row.transaction_hash,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function memberNotFound(userKey: string): AppError {
  return new AppError('NOT_FOUND', `No member ${userKey} at this brand (no event or redemption here)`, {
    field: 'userKey',
    value: userKey,
  });
}

/** 409: this idempotency key already took another deduction (another member, amount or person). */
function deductionKeyReused(key: string): AppError {
  return new AppError(
    'CONFLICT',
    `Idempotency key "${key}" was already used for another deduction at this brand (another member, amount or person): send a new key for a new deduction, or the same request to get the first answer again`,
    { field: 'idempotencyKey', reason: 'idempotency_key_reused' },
  );
}

/** The same key again: the first deduction, or 409 when it was for another member, amount or person. */
function repeatOf(row: ReversalRow, input: DeductionInput, accountKey: string): MemberDeductionResponse {
  if (row.kind !== 'deduction' || row.user_email !== accountKey || Number(row.pts) !== input.amount) {
    throw deductionKeyReused(input.idempotencyKey);
  }
  if (row.actor !== input.actor) throw deductionKeyReused(input.idempotencyKey);
  return { success: true, userKey: input.userKey, deduction: toMemberReversal(row), replayed: true };
}

/** Pts of the wallet's reversals (every brand's), as a sum over rows in `statuses` (all when absent). */
async function walletReversedPts(db: Database, wallet: string, confirmedOnly: boolean): Promise<bigint> {
  const row = await db
    .selectFrom('reward_reversals')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('pts'), sql<string>`0`).as('pts'))
    .where('wallet_address', '=', wallet.toLowerCase())
    .$if(confirmedOnly, (qb) => qb.where('status', '=', 'confirmed'))
    .executeTakeFirst();
  return BigInt(row?.pts ?? 0);
}

function tooMuch(input: DeductionInput, held: { brand: bigint; wallet: bigint }): AppError {
  const limit = held.brand < held.wallet ? held.brand : held.wallet;
  const which =
    held.brand < held.wallet
      ? `${held.brand} pts left of what this brand gave them (earned less spent and deducted)`
      : `${held.wallet} pts spendable in their wallet now`;
  return new AppError(
    'VALIDATION_ERROR',
    `Cannot deduct ${input.amount} pts: the member holds ${which}. A deduction takes back only pts the member holds (at most ${limit} now); it is not a refund of a purchase — reverse that event instead`,
    { field: 'amount', reason: 'exceeds_spendable', max: Number(limit > 0n ? limit : 0n) },
  );
}

/**
 * Records the deduction in one transaction (or finds the earlier one with this key). The wallet's chain
 * balance is read before it, with the pts of the wallet's reversals already confirmed at that moment; inside,
 * under a lock on the wallet, every reversal recorded since (pending, sent, or settled after the read) is taken
 * off that balance, so parallel deductions of one member never take more than it held.
 */
async function recordDeduction(
  deps: DeductionDeps,
  input: DeductionInput,
): Promise<{ id: string } | { answer: MemberDeductionResponse }> {
  const reversalId = `${DEDUCTION_ID_PREFIX}${input.idempotencyKey}`;
  const { accountKey, identities } = await accountIdentities(deps.db, input.userKey);
  const member = memberOf(accountKey, identities);
  const earlier = await findReversal(deps.db, input.brandId, reversalId);
  if (earlier) return { answer: repeatOf(earlier, input, accountKey) };
  const ledger = await readMemberLedger(deps.db, input.brandId, member);
  if (!ledger.known) throw memberNotFound(input.userKey);
  const walletAddress = (await readWalletBalance(deps.wallet, accountKey)).walletAddress;
  if (!walletAddress) throw tooMuch(input, { brand: 0n, wallet: 0n });
  const settledBefore = await walletReversedPts(deps.db, walletAddress, true);
  const wallet = await readWalletBalance(deps.wallet, accountKey);
  return deps.db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`pts-deduct:${walletAddress.toLowerCase()}`}))`.execute(trx);
    const again = await findReversal(trx, input.brandId, reversalId);
    if (again) return { answer: repeatOf(again, input, accountKey) };
    const since = (await walletReversedPts(trx, walletAddress, false)) - settledBefore;
    const inWallet = spendableBalance(wallet) - since;
    const atBrand = await readMemberLedger(trx, input.brandId, member);
    const ofBrand = atBrand.earned - atBrand.redeemed - atBrand.redeeming;
    const held = { brand: ofBrand > 0n ? ofBrand : 0n, wallet: inWallet > 0n ? inWallet : 0n };
    const amount = BigInt(input.amount);
    if (amount > held.brand || amount > held.wallet) throw tooMuch(input, held);
    const now = deps.clock.now();
    const id = crypto.randomUUID();
    await trx
      .insertInto('reward_reversals')
      .values({
        id,
        brand_id: input.brandId,
        reversal_id: reversalId,
        kind: 'deduction',
        event_id: null,
        reason: input.reason,
        actor: input.actor,
        user_email: accountKey,
        wallet_address: walletAddress.toLowerCase(),
        pts: amount,
        status: 'pending',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await insertAuditEntry(trx, {
      actor: input.actor,
      action: 'member.deduct',
      subject: input.brandId,
      brandId: input.brandId,
      details: { userKey: accountKey, amount: input.amount, reason: input.reason, reversalId, deductionId: id },
      at: now,
    });
    return { id };
  });
}

/**
 * Deducts `amount` pts from a member for `reason`, audited as `actor`: one reversal of kind `deduction` per
 * idempotency key (parallel repeats too), burned by the minter's reverseBatch. 400 above what the member holds
 * spendable; 404 for a member the brand never saw; 409 for a key reused for another deduction.
 */
export async function deductFromMember(deps: DeductionDeps, input: DeductionInput): Promise<MemberDeductionResponse> {
  let recorded: { id: string } | { answer: MemberDeductionResponse };
  try {
    recorded = await recordDeduction(deps, input);
  } catch (error) {
    // The same key sent twice at once (PostgreSQL runs both): the first insert won; this request answers it.
    if (!isUniqueViolation(error)) throw error;
    recorded = await recordDeduction(deps, input);
  }
  if ('answer' in recorded) return recorded.answer;
  await deps.minter.reverse([recorded.id], { waitMs: deps.waitMs });
  const [row] = await findReversalsByIds(deps.db, [recorded.id]);
  return { success: true, userKey: input.userKey, deduction: toMemberReversal(row as ReversalRow) };
}

/** A member's reversals and deductions at the brand (every identity of their account), newest first. */
export async function listMemberReversals(
  db: Database,
  brandId: string,
  identityKeys: readonly string[],
  limit: number,
): Promise<MemberReversal[]> {
  if (identityKeys.length === 0) return [];
  const rows = await db
    .selectFrom('reward_reversals as r')
    .leftJoin('events as e', 'e.id', 'r.event_id')
    .selectAll('r')
    .select('e.event_type')
    .where('r.brand_id', '=', brandId)
    .where('r.user_email', 'in', [...identityKeys])
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id')
    .limit(limit)
    .execute();
  return (rows as ReversalRow[]).map(toMemberReversal);
}
