import { type CurrencyCode, type EventRequest, formatMinorUnits, toMinorUnits, type Value } from '@pts/shared';
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

/** Every brand and every rule (inactive ones included), by address then event type: two statements. */
export async function loadBrandDirectory(db: Database): Promise<{ brands: BrandRecord[]; rules: RuleRecord[] }> {
  const [brands, rules] = await Promise.all([
    db.selectFrom('brands').selectAll().orderBy('address').execute(),
    db.selectFrom('event_rules').selectAll().orderBy('brand_id').orderBy('event_type').execute(),
  ]);
  return { brands, rules };
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

/**
 * What the judge reads for one user and rule, without a lock (an eligibility preview, never a decision that
 * pays): the user's claim counter (zero when they never claimed) and the rule's running total when capped.
 */
export async function readJudgeInputs(
  db: Database,
  rule: RuleKey & { event_type: string },
  identityKey: string,
): Promise<{
  counter: Pick<ClaimCounter, 'claims' | 'last_claim_at' | 'last_event_id'>;
  total: { total: number; max: number | null } | undefined;
}> {
  const [counter, totals] = await Promise.all([
    db
      .selectFrom('claim_counters')
      .select(['claims', 'last_claim_at', 'last_event_id'])
      .where('brand_id', '=', rule.brand_id)
      .where('event_type', '=', rule.event_type)
      .where('user_email', '=', identityKey)
      .executeTakeFirst(),
    db
      .selectFrom('event_rules')
      .select(['total_claims', 'max_total_claims'])
      .where('brand_id', '=', rule.brand_id)
      .where('id', '=', rule.id)
      .executeTakeFirst(),
  ]);
  return {
    counter: counter
      ? { ...counter, last_claim_at: counter.last_claim_at ? new Date(counter.last_claim_at) : null }
      : { claims: 0, last_claim_at: null, last_event_id: null },
    total:
      totals && totals.max_total_claims !== null
        ? { total: totals.total_claims, max: totals.max_total_claims }
        : undefined,
  };
}

/**
 * readJudgeInputs for one user and several rules (of any brands) in two statements: each rule's counter
 * (zero when never claimed) and running total when capped, keyed by ruleKeyOf.
 */
export async function readJudgeInputsFor(
  db: Database,
  rules: (RuleKey & { event_type: string })[],
  identityKey: string,
): Promise<Map<string, Awaited<ReturnType<typeof readJudgeInputs>>>> {
  const inputs = new Map<string, Awaited<ReturnType<typeof readJudgeInputs>>>();
  if (rules.length === 0) return inputs;
  const brandIds = [...new Set(rules.map((rule) => rule.brand_id))];
  const [counters, totals] = await Promise.all([
    db
      .selectFrom('claim_counters')
      .select(['brand_id', 'event_type', 'claims', 'last_claim_at', 'last_event_id'])
      .where('user_email', '=', identityKey)
      .where('brand_id', 'in', brandIds)
      .where('event_type', 'in', [...new Set(rules.map((rule) => rule.event_type))])
      .execute(),
    db
      .selectFrom('event_rules')
      .select(['brand_id', 'id', 'total_claims', 'max_total_claims'])
      .where('brand_id', 'in', brandIds)
      .where('id', 'in', [...new Set(rules.map((rule) => rule.id))])
      .where('max_total_claims', 'is not', null)
      .execute(),
  ]);
  for (const rule of rules) {
    const counter = counters.find((c) => c.brand_id === rule.brand_id && c.event_type === rule.event_type);
    const total = totals.find((t) => t.brand_id === rule.brand_id && t.id === rule.id);
    inputs.set(ruleKeyOf(rule), {
      counter: counter
        ? {
            claims: counter.claims,
            last_claim_at: counter.last_claim_at ? new Date(counter.last_claim_at) : null,
            last_event_id: counter.last_event_id,
          }
        : { claims: 0, last_claim_at: null, last_event_id: null },
      total:
        total && total.max_total_claims !== null
          ? { total: total.total_claims, max: total.max_total_claims }
          : undefined,
    });
  }
  return inputs;
}

export function ruleKeyOf(rule: RuleKey): string {
  return `${rule.brand_id}/${rule.id}`;
}

/** An event's value as its row keeps it: integer minor units and the currency, or both null. */
export function valueColumnsOf(
  input: Pick<EventRequest, 'value'>,
): Pick<Insertable<EventsTable>, 'value_minor' | 'value_currency'> {
  if (!input.value) return {};
  return { value_minor: toMinorUnits(input.value.amount, input.value.currency), value_currency: input.value.currency };
}

/** A value as answers show it: the amount with exactly its currency's decimals ("12.5" USD → "12.50"). */
export function normalizedValue(value: Value): Value {
  return {
    amount: formatMinorUnits(toMinorUnits(value.amount, value.currency), value.currency),
    currency: value.currency,
  };
}

/** A stored value (minor units and currency columns) as answers show it, or undefined when the event had none. */
export function valueOfColumns(minor: bigint | number | string | null, currency: string | null): Value | undefined {
  if (minor === null || currency === null) return undefined;
  const code = currency as CurrencyCode;
  return { amount: formatMinorUnits(BigInt(minor), code), currency: code };
}

export async function insertEvents(db: Database, events: Insertable<EventsTable>[]): Promise<void> {
  if (events.length === 0) return;
  await db.insertInto('events').values(events).execute();
}

/**
 * The first statement of an accept transaction, three writes in one round trip:
 * 1. inserts new users with the wallets reserved for them (`newUsers`; emails that already have a user are
 *    left alone) and reads the users of `emails` that existed before this statement;
 * 2. claims these signatures — the new ones come back, the others are replays;
 * 3. locks, creating if absent, these claim counters.
 * Signatures are claimed before counters are locked, and counters are locked in key order, in every
 * transaction, so concurrent batches never wait on each other in a cycle. The counters' conflict branch is
 * a no-op update that row-locks an existing counter (waiting for a concurrent holder, then reading its
 * latest committed version). A user another transaction inserted after this statement's snapshot is in
 * neither `insertedEmails` nor `existingUsers`: the caller reads it again.
 */
export async function openAcceptBatch(
  trx: Database,
  batch: {
    emails: string[];
    newUsers: { email: string; userId: bigint; address: string; idpUserId: string }[];
    claims: { signature: string; expiresAt: Date }[];
    counterKeys: CounterKey[];
  },
): Promise<{
  insertedEmails: Set<string>;
  existingUsers: Map<string, { id: bigint; walletAddress: string | null }>;
  fresh: Set<string>;
  counters: ClaimCounter[];
}> {
  const { newUsers, claims } = batch;
  const sorted = [...batch.counterKeys].sort(
    (a, b) =>
      a.brandId.localeCompare(b.brandId) || a.eventType.localeCompare(b.eventType) || a.email.localeCompare(b.email),
  );
  const { rows } = await sql<{ inserted: unknown; existing: unknown; signatures: unknown; counters: unknown }>`
    WITH u AS (
      INSERT INTO users (id, email, wallet_address, idp_user_id)
      SELECT * FROM unnest(${newUsers.map((u) => String(u.userId))}::bigint[], ${newUsers.map((u) => u.email)}::text[],
        ${newUsers.map((u) => u.address)}::text[], ${newUsers.map((u) => u.idpUserId)}::text[])
      ON CONFLICT (email) DO NOTHING
      RETURNING email
    ), e AS (
      SELECT id::text AS id, email, wallet_address FROM users WHERE email = ANY(${batch.emails}::text[])
    ), s AS (
      INSERT INTO used_signatures (signature, expires_at)
      SELECT * FROM unnest(${claims.map((c) => c.signature)}::text[], ${claims.map((c) => c.expiresAt.toISOString())}::timestamptz[])
      WHERE (SELECT count(*) FROM u) >= 0
      ON CONFLICT (signature) DO NOTHING
      RETURNING signature
    ), c AS (
      INSERT INTO claim_counters (brand_id, event_type, user_email, claims)
      SELECT brand_id, event_type, user_email, 0
      FROM unnest(${sorted.map((k) => k.brandId)}::text[], ${sorted.map((k) => k.eventType)}::text[],
        ${sorted.map((k) => k.email)}::text[]) AS k(brand_id, event_type, user_email)
      WHERE (SELECT count(*) FROM s) >= 0
      ON CONFLICT (brand_id, event_type, user_email) DO UPDATE SET claims = claim_counters.claims
      RETURNING *
    )
    SELECT (SELECT coalesce(json_agg(email), '[]'::json) FROM u) AS inserted,
           (SELECT coalesce(json_agg(e), '[]'::json) FROM e) AS existing,
           (SELECT coalesce(json_agg(signature), '[]'::json) FROM s) AS signatures,
           (SELECT coalesce(json_agg(c), '[]'::json) FROM c) AS counters`.execute(trx);
  const row = rows[0]!;
  const parse = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
  const existing = parse<{ id: string; email: string; wallet_address: string | null }[]>(row.existing);
  const counters = parse<
    {
      brand_id: string;
      event_type: string;
      user_email: string;
      claims: number;
      last_claim_at: string | null;
      last_event_id: string | null;
    }[]
  >(row.counters);
  return {
    insertedEmails: new Set(parse<string[]>(row.inserted)),
    existingUsers: new Map(existing.map((u) => [u.email, { id: BigInt(u.id), walletAddress: u.wallet_address }])),
    fresh: new Set(parse<string[]>(row.signatures)),
    counters: counters.map((c) => ({
      ...c,
      last_claim_at: c.last_claim_at === null ? null : new Date(c.last_claim_at),
    })),
  };
}

/**
 * Writes a judged batch in one statement: its events (accepted and rejected), the claim counters' and rule
 * totals' new state, and its reward rows (`submitted` in `chainTxId` when the batch signed its own
 * mintBatch, else `pending`). Column arrays (unnest) keep the statement the same size whatever the batch.
 */
export async function writeJudgedBatch(
  trx: Database,
  batch: {
    events: Insertable<EventsTable>[];
    counters: ClaimCounter[];
    ruleTotals: { rule: RuleKey; total: number }[];
    mints: {
      id: string;
      eventId: string;
      brandId: string;
      walletAddress: string;
      amount: bigint;
      /** The part of the reward that paid the member's debt (modules/reversals payDebtsFirst). */
      debtPaid?: bigint;
      at: Date;
    }[];
    chainTxId: bigint | undefined;
    now: Date;
  },
): Promise<void> {
  const { events, counters, ruleTotals, mints } = batch;
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  const at = (value: unknown) => (value instanceof Date ? value.toISOString() : text(value));
  await sql`
    WITH ev AS (
      INSERT INTO events (id, brand_id, event_type, user_email, status, reason, source, domain, channel_id, metadata,
        reward_amount, created_at, sent_by, value_minor, value_currency)
      SELECT id, brand_id, event_type, user_email, status, reason, source, domain, channel_id, metadata::jsonb,
        reward_amount, created_at, sent_by, value_minor, value_currency
      FROM unnest(${events.map((e) => e.id)}::uuid[], ${events.map((e) => e.brand_id)}::text[],
        ${events.map((e) => e.event_type)}::text[], ${events.map((e) => e.user_email)}::text[],
        ${events.map((e) => e.status)}::text[], ${events.map((e) => text(e.reason))}::text[],
        ${events.map((e) => text(e.source))}::text[], ${events.map((e) => text(e.domain))}::text[],
        ${events.map((e) => text(e.channel_id))}::text[], ${events.map((e) => text(e.metadata) ?? '{}')}::text[],
        ${events.map((e) => text(e.reward_amount) ?? '0')}::bigint[], ${events.map((e) => at(e.created_at))}::timestamptz[],
        ${events.map((e) => text(e.sent_by))}::text[], ${events.map((e) => text(e.value_minor))}::bigint[],
        ${events.map((e) => text(e.value_currency))}::text[])
        AS v(id, brand_id, event_type, user_email, status, reason, source, domain, channel_id, metadata,
          reward_amount, created_at, sent_by, value_minor, value_currency)
    ), counters AS (
      UPDATE claim_counters SET claims = v.claims, last_claim_at = v.last_claim_at, last_event_id = v.last_event_id
      FROM unnest(${counters.map((c) => c.brand_id)}::text[], ${counters.map((c) => c.event_type)}::text[],
        ${counters.map((c) => c.user_email)}::text[], ${counters.map((c) => c.claims)}::int[],
        ${counters.map((c) => at(c.last_claim_at))}::timestamptz[], ${counters.map((c) => text(c.last_event_id))}::uuid[])
        AS v(brand_id, event_type, user_email, claims, last_claim_at, last_event_id)
      WHERE claim_counters.brand_id = v.brand_id AND claim_counters.event_type = v.event_type
        AND claim_counters.user_email = v.user_email
    ), totals AS (
      UPDATE event_rules SET total_claims = v.total
      FROM unnest(${ruleTotals.map((t) => t.rule.brand_id)}::text[], ${ruleTotals.map((t) => t.rule.id)}::text[],
        ${ruleTotals.map((t) => t.total)}::int[]) AS v(brand_id, id, total)
      WHERE event_rules.brand_id = v.brand_id AND event_rules.id = v.id
    )
    INSERT INTO reward_mints (id, event_id, brand_id, wallet_address, amount, status, chain_tx_id, created_at, updated_at,
      debt_paid)
    SELECT id, event_id, brand_id, wallet_address, amount, ${batch.chainTxId === undefined ? 'pending' : 'submitted'},
      ${batch.chainTxId === undefined ? null : String(batch.chainTxId)}::bigint, ${batch.now}, ${batch.now}, debt_paid
    FROM unnest(${mints.map((m) => m.id)}::uuid[], ${mints.map((m) => m.eventId)}::uuid[],
      ${mints.map((m) => m.brandId)}::text[], ${mints.map((m) => m.walletAddress)}::text[],
      ${mints.map((m) => String(m.amount))}::bigint[], ${mints.map((m) => String(m.debtPaid ?? 0n))}::bigint[])
      AS v(id, event_id, brand_id, wallet_address, amount, debt_paid)`.execute(trx);
}

/** An idempotency key of an event: brand, event type and the caller's `externalId`. */
export interface ExternalIdKey {
  brandId: string;
  eventType: string;
  externalId: string;
}

export function externalIdKeyOf(key: ExternalIdKey): string {
  return `${key.brandId}\u0000${key.eventType}\u0000${key.externalId}`;
}

/**
 * Claims idempotency keys for events of this transaction (the primary key is the unique index). A key
 * another transaction holds uncommitted makes this statement wait for it; a key already committed is not
 * returned. Keys are inserted in key order so concurrent batches never wait on each other in a cycle.
 */
export async function claimExternalIds(
  trx: Database,
  claims: (ExternalIdKey & { eventId: string })[],
  now: Date,
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const sorted = [...claims].sort((a, b) => externalIdKeyOf(a).localeCompare(externalIdKeyOf(b)));
  const { rows } = await sql<{ brand_id: string; event_type: string; external_id: string }>`
    INSERT INTO event_external_ids (brand_id, event_type, external_id, event_id, created_at)
    SELECT brand_id, event_type, external_id, event_id, ${now}
    FROM unnest(${sorted.map((c) => c.brandId)}::text[], ${sorted.map((c) => c.eventType)}::text[],
      ${sorted.map((c) => c.externalId)}::text[], ${sorted.map((c) => c.eventId)}::uuid[])
      AS v(brand_id, event_type, external_id, event_id)
    ON CONFLICT (brand_id, event_type, external_id) DO NOTHING
    RETURNING brand_id, event_type, external_id`.execute(trx);
  return new Set(
    rows.map((r) => externalIdKeyOf({ brandId: r.brand_id, eventType: r.event_type, externalId: r.external_id })),
  );
}

/** The accepted event holding an idempotency key, with what its answer needs (amount, wallet, mint). */
export interface ExternalIdOwner {
  eventId: string;
  eventType: string;
  rewardAmount: bigint;
  walletAddress: string;
  mintStatus: 'none' | 'pending' | 'submitted' | 'confirmed';
  transactionHash: string | undefined;
  /** For a confirmed mint: shown by its receipt, or by the token supply (no receipt exists; docs/chain.md). */
  confirmedBy: 'receipt' | 'supply' | undefined;
  /** Who sent it (`events.sent_by`) and for whom: a repeat sees the details only when both are its own. */
  sentBy: string | null;
  userEmail: string;
  /** The value the first event carried, if any. */
  value: Value | undefined;
}

/** The events already holding these keys (committed by an earlier transaction). */
export async function findExternalIdOwners(db: Database, keys: ExternalIdKey[]): Promise<Map<string, ExternalIdOwner>> {
  if (keys.length === 0) return new Map();
  const { rows } = await sql<{
    brand_id: string;
    event_type: string;
    external_id: string;
    event_id: string;
    reward_amount: bigint | number | string;
    mint_wallet: string | null;
    user_wallet: string | null;
    mint_status: string | null;
    tx_hash: string | null;
    tx_status: string | null;
    confirmed_by: 'receipt' | 'supply' | null;
    sent_by: string | null;
    user_email: string;
    value_minor: bigint | number | string | null;
    value_currency: string | null;
  }>`
    SELECT x.brand_id, x.event_type, x.external_id, x.event_id, e.reward_amount, e.sent_by, e.user_email,
      e.value_minor, e.value_currency,
      m.wallet_address AS mint_wallet, u.wallet_address AS user_wallet, m.status AS mint_status,
      t.current_hash AS tx_hash, t.status AS tx_status, t.confirmed_by
    FROM unnest(${keys.map((k) => k.brandId)}::text[], ${keys.map((k) => k.eventType)}::text[],
      ${keys.map((k) => k.externalId)}::text[]) AS k(brand_id, event_type, external_id)
    JOIN event_external_ids x ON x.brand_id = k.brand_id AND x.event_type = k.event_type
      AND x.external_id = k.external_id
    JOIN events e ON e.id = x.event_id
    LEFT JOIN users u ON u.email = e.user_email
    LEFT JOIN reward_mints m ON m.event_id = e.id
    LEFT JOIN chain_txs t ON t.id = m.chain_tx_id`.execute(db);
  const owners = new Map<string, ExternalIdOwner>();
  for (const r of rows) {
    // A batch still `signed` was never taken by the node: `pending`, no hash, until it is really sent.
    const status = r.mint_status === 'submitted' && r.tx_status === 'signed' ? 'pending' : r.mint_status;
    owners.set(externalIdKeyOf({ brandId: r.brand_id, eventType: r.event_type, externalId: r.external_id }), {
      eventId: r.event_id,
      eventType: r.event_type,
      rewardAmount: BigInt(r.reward_amount),
      walletAddress: r.mint_wallet ?? r.user_wallet ?? '',
      mintStatus: status === null ? 'none' : status === 'submitted' || status === 'confirmed' ? status : 'pending',
      transactionHash: status === 'submitted' || status === 'confirmed' ? (r.tx_hash ?? undefined) : undefined,
      confirmedBy: status === 'confirmed' ? (r.confirmed_by ?? 'receipt') : undefined,
      sentBy: r.sent_by,
      userEmail: r.user_email,
      value: valueOfColumns(r.value_minor, r.value_currency),
    });
  }
  return owners;
}

/**
 * Settles the keys this transaction claimed: each goes to the event that was accepted with it, and keys
 * whose events were all refused are released (a refusal must not block a later legitimate event).
 */
export async function settleExternalIds(
  trx: Database,
  settle: { owners: (ExternalIdKey & { eventId: string })[]; released: ExternalIdKey[] },
): Promise<void> {
  const { owners, released } = settle;
  if (owners.length > 0) {
    await sql`
      UPDATE event_external_ids SET event_id = v.event_id
      FROM unnest(${owners.map((o) => o.brandId)}::text[], ${owners.map((o) => o.eventType)}::text[],
        ${owners.map((o) => o.externalId)}::text[], ${owners.map((o) => o.eventId)}::uuid[])
        AS v(brand_id, event_type, external_id, event_id)
      WHERE event_external_ids.brand_id = v.brand_id AND event_external_ids.event_type = v.event_type
        AND event_external_ids.external_id = v.external_id AND event_external_ids.event_id <> v.event_id`.execute(trx);
  }
  if (released.length > 0) {
    await sql`
      DELETE FROM event_external_ids x
      USING unnest(${released.map((o) => o.brandId)}::text[], ${released.map((o) => o.eventType)}::text[],
        ${released.map((o) => o.externalId)}::text[]) AS v(brand_id, event_type, external_id)
      WHERE x.brand_id = v.brand_id AND x.event_type = v.event_type AND x.external_id = v.external_id`.execute(trx);
  }
}
