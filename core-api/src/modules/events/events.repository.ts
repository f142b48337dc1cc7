import { type Insertable, type Selectable, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { ClaimCountersTable, EventsTable } from '../../db/schema.ts';
import { type BrandRow, findBrandByAddress, listRules, type RuleRow } from '../brands/brands.repository.ts';

// The accept path writes whole batches (see event-batcher.ts): every function here takes many rows and
// costs one statement, whatever the batch size.

export type BrandRecord = BrandRow;
export type RuleRecord = RuleRow;
export type ClaimCounter = Selectable<ClaimCountersTable>;
/** Rules are keyed by brand and eventId (custom event ids repeat across brands). */
export type RuleKey = Pick<RuleRecord, 'brand_id' | 'id'>;
export interface CounterKey {
  brandId: string;
  eventType: string;
  email: string;
}

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
 * Finds or creates the user rows for these emails; a user's id doubles as the local wallet derivation
 * index. The insert waits for concurrent inserts of the same email to commit, so the select after it sees
 * every row.
 */
export async function ensureUsers(
  db: Database,
  emails: string[],
): Promise<Map<string, { id: bigint; walletAddress: string | null }>> {
  if (emails.length === 0) return new Map();
  await db
    .insertInto('users')
    .values(emails.map((email) => ({ email })))
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
  return findUsers(db, emails);
}

/**
 * Inserts new users with their wallets already made (see wallet-reserve.ts): one statement. Emails that
 * already have a user are left alone; returns the emails this call inserted.
 */
export async function insertUsersWithWallets(
  db: Database,
  users: { email: string; userId: bigint; address: string; idpUserId: string }[],
): Promise<Set<string>> {
  if (users.length === 0) return new Set();
  const rows = await db
    .insertInto('users')
    .values(users.map((u) => ({ id: u.userId, email: u.email, wallet_address: u.address, idp_user_id: u.idpUserId })))
    .onConflict((oc) => oc.column('email').doNothing())
    .returning('email')
    .execute();
  return new Set(rows.map((row) => row.email));
}

/** The users of these emails, if they exist. */
export async function findUsers(
  db: Database,
  emails: string[],
): Promise<Map<string, { id: bigint; walletAddress: string | null }>> {
  if (emails.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email', 'wallet_address'])
    .where('email', 'in', emails)
    .execute();
  return new Map(rows.map((row) => [row.email, { id: row.id, walletAddress: row.wallet_address }]));
}

/** Records wallets of users that have none yet; returns the ids this call set (so `walletCreated` is told once). */
export async function setUserWallets(
  db: Database,
  wallets: { userId: bigint; address: string; idpUserId: string }[],
): Promise<Set<bigint>> {
  if (wallets.length === 0) return new Set();
  const values = sql.join(wallets.map((w) => sql`(${String(w.userId)}::bigint, ${w.address}, ${w.idpUserId})`));
  const { rows } = await sql<{ id: bigint }>`
    UPDATE users SET wallet_address = v.address, idp_user_id = v.idp_user_id
    FROM (VALUES ${values}) AS v(id, address, idp_user_id)
    WHERE users.id = v.id AND users.wallet_address IS NULL
    RETURNING users.id`.execute(db);
  return new Set(rows.map((row) => BigInt(row.id)));
}

/**
 * Locks (creating if absent) the claim counters of these users, in key order so concurrent batches never
 * wait on each other in a cycle. The conflict branch is a no-op update: it row-locks an existing counter
 * (waiting for a concurrent holder, then reading its latest committed version) and returns it.
 */
export async function lockClaimCounters(trx: Database, keys: CounterKey[]): Promise<ClaimCounter[]> {
  if (keys.length === 0) return [];
  const sorted = [...keys].sort(
    (a, b) =>
      a.brandId.localeCompare(b.brandId) || a.eventType.localeCompare(b.eventType) || a.email.localeCompare(b.email),
  );
  return trx
    .insertInto('claim_counters')
    .values(sorted.map((k) => ({ brand_id: k.brandId, event_type: k.eventType, user_email: k.email, claims: 0 })))
    .onConflict((oc) =>
      oc
        .columns(['brand_id', 'event_type', 'user_email'])
        .doUpdateSet((eb) => ({ claims: eb.ref('claim_counters.claims') })),
    )
    .returningAll()
    .execute();
}

/** Writes the counters' new state after a batch's claims. */
export async function updateClaimCounters(trx: Database, counters: ClaimCounter[]): Promise<void> {
  if (counters.length === 0) return;
  const values = sql.join(
    counters.map(
      (c) =>
        sql`(${c.brand_id}, ${c.event_type}, ${c.user_email}, ${c.claims}::int, ${c.last_claim_at}::timestamptz, ${c.last_event_id}::uuid)`,
    ),
  );
  await sql`
    UPDATE claim_counters SET claims = v.claims, last_claim_at = v.last_claim_at, last_event_id = v.last_event_id
    FROM (VALUES ${values}) AS v(brand_id, event_type, user_email, claims, last_claim_at, last_event_id)
    WHERE claim_counters.brand_id = v.brand_id AND claim_counters.event_type = v.event_type
      AND claim_counters.user_email = v.user_email`.execute(trx);
}

/** Locks the rules that have a global max total and returns their running totals. */
export async function lockRuleTotals(
  trx: Database,
  rules: RuleKey[],
): Promise<Map<string, { total: number; max: number | null }>> {
  if (rules.length === 0) return new Map();
  const rows = await trx
    .selectFrom('event_rules')
    .select(['brand_id', 'id', 'total_claims', 'max_total_claims'])
    .where((eb) => eb.or(rules.map((r) => eb.and([eb('brand_id', '=', r.brand_id), eb('id', '=', r.id)]))))
    .orderBy('brand_id')
    .orderBy('id')
    .forUpdate()
    .execute();
  return new Map(rows.map((r) => [ruleKeyOf(r), { total: r.total_claims, max: r.max_total_claims }]));
}

export function ruleKeyOf(rule: RuleKey): string {
  return `${rule.brand_id}/${rule.id}`;
}

export async function updateRuleTotals(trx: Database, totals: { rule: RuleKey; total: number }[]): Promise<void> {
  for (const { rule, total } of totals) {
    await trx
      .updateTable('event_rules')
      .set({ total_claims: total })
      .where('brand_id', '=', rule.brand_id)
      .where('id', '=', rule.id)
      .execute();
  }
}

export async function insertEvents(db: Database, events: Insertable<EventsTable>[]): Promise<void> {
  if (events.length === 0) return;
  await db.insertInto('events').values(events).execute();
}

/**
 * Inserts reward rows: `pending` for the minter, or — with `chainTxId`, the `mintBatch` the accept
 * transaction signed for them (minter.mintInline) — already `submitted` in that transaction.
 */
export async function insertRewardMints(
  trx: Database,
  mints: { id: string; eventId: string; brandId: string; walletAddress: string; amount: bigint; at: Date }[],
  chainTxId?: bigint,
): Promise<void> {
  if (mints.length === 0) return;
  await trx
    .insertInto('reward_mints')
    .values(
      mints.map((mint) => ({
        id: mint.id,
        event_id: mint.eventId,
        brand_id: mint.brandId,
        wallet_address: mint.walletAddress,
        amount: mint.amount,
        status: chainTxId === undefined ? ('pending' as const) : ('submitted' as const),
        chain_tx_id: chainTxId ?? null,
        created_at: mint.at,
        updated_at: mint.at,
      })),
    )
    .execute();
}

/** Records signatures as used; returns those that were new (the others are replays). */
export async function claimSignatures(
  trx: Database,
  claims: { signature: string; expiresAt: Date }[],
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await trx
    .insertInto('used_signatures')
    .values(claims.map((c) => ({ signature: c.signature, expires_at: c.expiresAt })))
    .onConflict((oc) => oc.column('signature').doNothing())
    .returning('signature')
    .execute();
  return new Set(rows.map((row) => row.signature));
}
