import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { ClaimCountersTable, EventsTable } from '../../db/schema.ts';
import { type BrandRow, findBrandByAddress, listRules, type RuleRow } from '../brands/brands.repository.ts';

export type BrandRecord = BrandRow;
export type RuleRecord = RuleRow;
export type ClaimCounter = Selectable<ClaimCountersTable>;
/** Rules are keyed by brand and eventId (custom event ids repeat across brands). */
export type RuleKey = Pick<RuleRecord, 'brand_id' | 'id'>;

/** The brand and all of its rules (active or not), for the event path's cache. */
export async function loadBrandWithRules(
  db: Database,
  brandId: string,
): Promise<{ brand: BrandRecord; rules: RuleRecord[] } | undefined> {
  const brand = await findBrandByAddress(db, brandId);
  if (!brand) return undefined;
  return { brand, rules: await listRules(db, brandId, { activeOnly: false }) };
}

/**
 * Finds or creates the user row for an email; the id doubles as the local wallet derivation index.
 * One round trip in the usual cases: the insert and the lookup of an existing row go in one statement.
 * Its lookup reads the statement's snapshot, so a row a concurrent request committed while this insert
 * waited on it is not seen there; the follow-up select (a fresh snapshot) finds it.
 */
export async function ensureUser(db: Database, email: string): Promise<{ id: bigint; walletAddress: string | null }> {
  const found = await db
    .with('inserted', (qb) =>
      qb
        .insertInto('users')
        .values({ email })
        .onConflict((oc) => oc.column('email').doNothing())
        .returning(['id', 'wallet_address']),
    )
    .selectFrom('inserted')
    .select(['inserted.id', 'inserted.wallet_address'])
    .unionAll((qb) =>
      qb
        .selectFrom('users')
        .select(['users.id', 'users.wallet_address'])
        .where('users.email', '=', email)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('inserted').select('inserted.id')))),
    )
    .executeTakeFirst();
  const row =
    found ??
    (await db
      .selectFrom('users')
      .select(['id', 'wallet_address'])
      .where('email', '=', email)
      .executeTakeFirstOrThrow());
  return { id: row.id, walletAddress: row.wallet_address };
}

/** Records the user's wallet once; true only for the caller that set it (so `walletCreated` is told once). */
export async function setUserWallet(
  db: Database,
  userId: bigint,
  address: string,
  idpUserId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ wallet_address: address, idp_user_id: idpUserId })
    .where('id', '=', userId)
    .where('wallet_address', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Locks (creating if absent) the claim counter of one user for one brand event type, so concurrent
 * identical requests queue here and each sees the previous one's effect. One statement: the conflict branch
 * is a no-op update, which row-locks the existing counter (waiting for a concurrent holder, then taking the
 * latest committed version, as `SELECT … FOR UPDATE` did) and returns it.
 */
export async function lockClaimCounter(
  trx: Database,
  key: { brandId: string; eventType: string; email: string },
): Promise<ClaimCounter> {
  return trx
    .insertInto('claim_counters')
    .values({ brand_id: key.brandId, event_type: key.eventType, user_email: key.email, claims: 0 })
    .onConflict((oc) =>
      oc
        .columns(['brand_id', 'event_type', 'user_email'])
        .doUpdateSet((eb) => ({ claims: eb.ref('claim_counters.claims') })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function recordClaim(trx: Database, counter: ClaimCounter, at: Date, eventId: string): Promise<void> {
  await trx
    .updateTable('claim_counters')
    .set({ claims: counter.claims + 1, last_claim_at: at, last_event_id: eventId })
    .where('brand_id', '=', counter.brand_id)
    .where('event_type', '=', counter.event_type)
    .where('user_email', '=', counter.user_email)
    .execute();
}

/** Takes one slot of a rule's global max total; returns the new total, or undefined when none is left. */
export async function reserveTotalClaim(trx: Database, rule: RuleKey): Promise<number | undefined> {
  const row = await trx
    .updateTable('event_rules')
    .set((eb) => ({ total_claims: eb('total_claims', '+', 1) }))
    .where('brand_id', '=', rule.brand_id)
    .where('id', '=', rule.id)
    .where((eb) => eb('total_claims', '<', eb.ref('max_total_claims')))
    .returning('total_claims')
    .executeTakeFirst();
  return row?.total_claims;
}

export async function readTotalClaims(db: Database, rule: RuleKey): Promise<number> {
  const row = await db
    .selectFrom('event_rules')
    .select('total_claims')
    .where('brand_id', '=', rule.brand_id)
    .where('id', '=', rule.id)
    .executeTakeFirst();
  return row?.total_claims ?? 0;
}

export async function insertEvent(db: Database, event: Insertable<EventsTable>): Promise<void> {
  await db.insertInto('events').values(event).execute();
}

export async function insertRewardMint(
  trx: Database,
  mint: { id: string; eventId: string; brandId: string; walletAddress: string; amount: bigint; at: Date },
): Promise<void> {
  await trx
    .insertInto('reward_mints')
    .values({
      id: mint.id,
      event_id: mint.eventId,
      brand_id: mint.brandId,
      wallet_address: mint.walletAddress,
      amount: mint.amount,
      status: 'pending',
      created_at: mint.at,
      updated_at: mint.at,
    })
    .execute();
}
