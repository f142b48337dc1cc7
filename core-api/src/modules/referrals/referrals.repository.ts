import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { ReferralsTable } from '../../db/schema.ts';

// The referral tables (migration 2026_12_08_g01_referrals; docs/referrals.md). Queries take a Kysely handle so
// they run inside the service's transaction.

/** A brand's referral program as the event pipeline reads it (cached with the brand). */
export interface ReferralProgram {
  qualifyingEventType: string;
  minValueMinor: bigint | null;
  referrerReward: number;
  refereeReward: number;
  capPerReferrer: number | null;
  capPeriodDays: number | null;
  updatedAt: Date;
}

export async function loadReferralProgram(db: Database, brandId: string): Promise<ReferralProgram | undefined> {
  const row = await db.selectFrom('referral_programs').selectAll().where('brand_id', '=', brandId).executeTakeFirst();
  if (!row) return undefined;
  return {
    qualifyingEventType: row.qualifying_event_type,
    minValueMinor: row.min_value_minor === null ? null : BigInt(row.min_value_minor),
    referrerReward: row.referrer_reward,
    refereeReward: row.referee_reward,
    capPerReferrer: row.cap_per_referrer,
    capPeriodDays: row.cap_period_days,
    updatedAt: new Date(row.updated_at),
  };
}

export async function saveReferralProgram(
  db: Database,
  brandId: string,
  program: Omit<ReferralProgram, 'updatedAt'>,
  at: Date,
): Promise<void> {
  const row = {
    qualifying_event_type: program.qualifyingEventType,
    min_value_minor: program.minValueMinor,
    referrer_reward: program.referrerReward,
    referee_reward: program.refereeReward,
    cap_per_referrer: program.capPerReferrer,
    cap_period_days: program.capPeriodDays,
    updated_at: at,
  };
  await db
    .insertInto('referral_programs')
    .values({ brand_id: brandId, ...row })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet(row))
    .execute();
}

export async function findMemberCode(db: Database, brandId: string, member: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('referral_codes')
    .select('code')
    .where('brand_id', '=', brandId)
    .where('member', '=', member)
    .executeTakeFirst();
  return row?.code;
}

/** Inserts the member's code unless they have one; false when the code or the member was taken meanwhile. */
export async function insertMemberCode(
  db: Database,
  row: { brandId: string; member: string; code: string; at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('referral_codes')
    .values({ brand_id: row.brandId, member: row.member, code: row.code, created_at: row.at })
    .onConflict((oc) => oc.doNothing())
    .returning('code')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function findCodeOwner(db: Database, brandId: string, code: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('referral_codes')
    .select('member')
    .where('brand_id', '=', brandId)
    .where('code', '=', code)
    .executeTakeFirst();
  return row?.member;
}

/** The referrer's code row, locked: payments to one referrer go one at a time, so their cap holds. */
export async function lockReferrer(db: Database, brandId: string, referrer: string): Promise<void> {
  await sql`SELECT 1 FROM referral_codes WHERE brand_id = ${brandId} AND member = ${referrer} FOR UPDATE`.execute(db);
}

export type ReferralRow = ReferralsTable;

export async function findReferral(db: Database, brandId: string, referee: string): Promise<ReferralRow | undefined> {
  return db
    .selectFrom('referrals')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('referee', '=', referee)
    .executeTakeFirst();
}

/** The referee's referral, locked for the transaction that pays or reverses it. */
export async function lockReferral(db: Database, brandId: string, referee: string): Promise<ReferralRow | undefined> {
  return db
    .selectFrom('referrals')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('referee', '=', referee)
    .forUpdate()
    .executeTakeFirst();
}

/** The paid referral whose qualifying event this is, if any. */
export async function findReferralByQualifyingEvent(db: Database, eventId: string): Promise<ReferralRow | undefined> {
  return db.selectFrom('referrals').selectAll().where('qualifying_event_id', '=', eventId).executeTakeFirst();
}

/** Inserts the referral unless the referee has one (the primary key); true when this call made it. */
export async function insertReferral(
  db: Database,
  row: { brandId: string; referee: string; referrer: string; code: string; at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('referrals')
    .values({
      brand_id: row.brandId,
      referee: row.referee,
      referrer: row.referrer,
      code: row.code,
      status: 'attached',
      created_at: row.at,
    })
    .onConflict((oc) => oc.columns(['brand_id', 'referee']).doNothing())
    .returning('referee')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function updateReferral(
  db: Database,
  brandId: string,
  referee: string,
  change: Partial<Omit<ReferralRow, 'brand_id' | 'referee'>>,
): Promise<void> {
  await db
    .updateTable('referrals')
    .set(change)
    .where('brand_id', '=', brandId)
    .where('referee', '=', referee)
    .execute();
}

/** Records a refusal once per referee and reason (repeats of one attempt count once). */
export async function insertRefusal(
  db: Database,
  row: { brandId: string; referee: string; reason: string; referrer: string | undefined; code: string; at: Date },
): Promise<void> {
  await db
    .insertInto('referral_refusals')
    .values({
      brand_id: row.brandId,
      referee: row.referee,
      reason: row.reason,
      referrer: row.referrer ?? null,
      code: row.code,
      created_at: row.at,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Whether any of these identities has an accepted event at the brand (the referee-must-be-new rule). */
export async function hasBrandEvents(db: Database, brandId: string, identityKeys: readonly string[]): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('brand_id', '=', brandId)
    .where('user_email', 'in', [...identityKeys])
    .where('status', '=', 'accepted')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The wallets of these identities' users rows, lower case (OAuth identities' own wallets are not read yet). */
export async function walletsOf(db: Database, identityKeys: readonly string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('wallet_address')
    .where('email', 'in', [...identityKeys])
    .where('wallet_address', 'is not', null)
    .execute();
  return rows.map((row) => (row.wallet_address as string).toLowerCase());
}

/** Referrals paid to the referrer since `since` (reversed ones too: a reversal does not give the cap back). */
export async function countPaidSince(db: Database, brandId: string, referrer: string, since: Date | null) {
  let query = db
    .selectFrom('referrals')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('brand_id', '=', brandId)
    .where('referrer', '=', referrer)
    .where('status', 'in', ['paid', 'reversed']);
  if (since) query = query.where('qualified_at', '>=', since);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The brand's referral figures, each counted once here (the admin route, the CLI). */
export async function readReferralStats(db: Database, brandId: string) {
  const byStatus = await db
    .selectFrom('referrals')
    .select([
      'status',
      (eb) => eb.fn.countAll<string>().as('n'),
      (eb) => eb.fn.coalesce(eb.fn.sum<string>('referrer_reward'), sql<string>`0`).as('referrer_pts'),
      (eb) => eb.fn.coalesce(eb.fn.sum<string>('referee_reward'), sql<string>`0`).as('referee_pts'),
    ])
    .where('brand_id', '=', brandId)
    .groupBy('status')
    .execute();
  const refusals = await db
    .selectFrom('referral_refusals')
    .select(['reason', (eb) => eb.fn.countAll<string>().as('n')])
    .where('brand_id', '=', brandId)
    .groupBy('reason')
    .execute();
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM (
      SELECT referee FROM referrals WHERE brand_id = ${brandId}
      UNION SELECT referee FROM referral_refusals WHERE brand_id = ${brandId}) r`.execute(db);
  return { byStatus, refusals, invites: Number(rows[0]?.n ?? 0) };
}

/**
 * What the reversals of a qualifying event left of it: its value, the value refunded, and whether one of them
 * took the whole reward back (a reversal without a value).
 */
export async function qualifyingEventAfterReversals(db: Database, eventId: string) {
  const { rows } = await sql<{ value_minor: string | bigint | null; refunded: string | null; whole: boolean }>`
    SELECT e.value_minor,
           (SELECT sum(r.refunded_minor) FROM reward_reversals r WHERE r.event_id = e.id) AS refunded,
           EXISTS (SELECT 1 FROM reward_reversals r WHERE r.event_id = e.id AND r.refunded_minor IS NULL) AS whole
      FROM events e WHERE e.id = ${eventId}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return {
    valueMinor: row.value_minor === null ? null : BigInt(row.value_minor),
    refundedMinor: BigInt(row.refunded ?? 0),
    whole: row.whole,
  };
}
