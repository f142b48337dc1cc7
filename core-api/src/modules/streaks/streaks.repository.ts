import type { StreakState } from '@pts/shared';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** Streak rows are per brand, user and streak type; spec 4.3 counts `daily` streaks, the default. */
export const DAILY_STREAK = 'daily';

export interface StreakKey {
  brandId: string;
  accountKey: string;
  /** Each type is its own streak (`engagement`, …); `daily` when absent (check-ins, milestones). */
  streakType?: string | undefined;
}

const typeOf = (key: StreakKey) => key.streakType ?? DAILY_STREAK;

/** The brand's stored settings document, or undefined when it uses the defaults. */
export async function findStreakSettings(
  db: Kysely<DB>,
  brandId: string,
): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom('brand_streak_settings')
    .select('settings')
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return row?.settings;
}

/** Locks the brand's row until the transaction ends: one settings change at a time per brand. */
export async function lockBrandSettings(db: Kysely<DB>, brandId: string): Promise<void> {
  await db.selectFrom('brands').select('address').where('address', '=', brandId.toLowerCase()).forUpdate().execute();
}

/** Stores the brand's full settings document. */
export async function saveStreakSettings(
  db: Kysely<DB>,
  brandId: string,
  settings: Record<string, unknown>,
  at: Date,
): Promise<void> {
  const json = JSON.stringify(settings);
  await db
    .insertInto('brand_streak_settings')
    .values({ brand_id: brandId, settings: json, updated_at: at })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet({ settings: json, updated_at: at }))
    .execute();
}

function toState(row: {
  current: number;
  longest: number;
  last_activity_at: Date | null;
  last_counted_day: string | null;
  freezes: number;
  freezes_used: number;
  last_freeze_used_at: Date | null;
}): StreakState {
  return {
    current: row.current,
    longest: row.longest,
    lastActivityAt: row.last_activity_at,
    lastCountedDay: row.last_counted_day,
    freezes: row.freezes,
    freezesUsed: row.freezes_used,
    lastFreezeUsedAt: row.last_freeze_used_at,
  };
}

const STREAK_COLUMNS = [
  'current',
  'longest',
  'last_activity_at',
  'last_counted_day',
  'freezes',
  'freezes_used',
  'last_freeze_used_at',
] as const;

/** One brand's part of a member's daily streak, as readDailyStreakRows returns it. */
export interface DailyStreakRow {
  brandId: string;
  /** The brand's stored settings document; undefined when it uses the defaults. */
  settings: Record<string, unknown> | undefined;
  state: StreakState | undefined;
  claimed: number[];
  checkedInOn: boolean;
}

/**
 * A member's daily streak at each of `brandIds` in ONE statement (the agent tools read a member across many
 * brands): the brand's settings, the streak row, the milestones claimed and whether `day` has a check-in.
 * Rows come back in `brandIds` order, one per brand, with undefined parts where nothing is stored.
 */
export async function readDailyStreakRows(
  db: Kysely<DB>,
  brandIds: string[],
  accountKey: string,
  day: string,
): Promise<DailyStreakRow[]> {
  if (brandIds.length === 0) return [];
  const result = await sql<{
    brand_id: string;
    settings: Record<string, unknown> | null;
    has_streak: boolean;
    current: number | null;
    longest: number | null;
    last_activity_at: Date | string | null;
    last_counted_day: string | null;
    freezes: number | null;
    freezes_used: number | null;
    last_freeze_used_at: Date | string | null;
    claimed: (number | string)[] | null;
    checked_in: boolean;
  }>`
    SELECT b.id AS brand_id, s.settings, st.brand_id IS NOT NULL AS has_streak, st.current, st.longest,
           st.last_activity_at, st.last_counted_day, st.freezes, st.freezes_used, st.last_freeze_used_at,
           array(SELECT m.milestone FROM milestone_claims m
                  WHERE m.brand_id = b.id AND m.user_key = ${accountKey} ORDER BY m.milestone) AS claimed,
           EXISTS (SELECT 1 FROM checkins c WHERE c.brand_id = b.id AND c.user_key = ${accountKey} AND c.day = ${day})
             AS checked_in
      FROM unnest(${brandIds}::text[]) WITH ORDINALITY AS b(id, n)
      LEFT JOIN brand_streak_settings s ON s.brand_id = b.id
      LEFT JOIN streaks st ON st.brand_id = b.id AND st.user_key = ${accountKey} AND st.streak_type = ${DAILY_STREAK}
     ORDER BY b.n`.execute(db);
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  return result.rows.map((row) => ({
    brandId: row.brand_id,
    settings: row.settings ?? undefined,
    state: row.has_streak
      ? toState({
          current: Number(row.current),
          longest: Number(row.longest),
          last_activity_at: date(row.last_activity_at),
          last_counted_day: row.last_counted_day,
          freezes: Number(row.freezes),
          freezes_used: Number(row.freezes_used),
          last_freeze_used_at: date(row.last_freeze_used_at),
        })
      : undefined,
    claimed: (row.claimed ?? []).map(Number),
    checkedInOn: row.checked_in === true,
  }));
}

/** The stored streak, or undefined for a user without activity. */
export async function findStreak(db: Kysely<DB>, key: StreakKey): Promise<StreakState | undefined> {
  const row = await db
    .selectFrom('streaks')
    .select(STREAK_COLUMNS)
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .where('streak_type', '=', typeOf(key))
    .executeTakeFirst();
  return row ? toState(row) : undefined;
}

/**
 * Creates the user's streak row if missing and locks it (`SELECT … FOR UPDATE`) for the rest of the
 * transaction: every change to one user's streak, check-ins and milestone claims runs behind this lock.
 */
export async function lockStreak(trx: Kysely<DB>, key: StreakKey, at: Date): Promise<StreakState> {
  await trx
    .insertInto('streaks')
    .values({
      brand_id: key.brandId,
      user_key: key.accountKey,
      streak_type: typeOf(key),
      current: 0,
      longest: 0,
      freezes: 0,
      freezes_used: 0,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['brand_id', 'user_key', 'streak_type']).doNothing())
    .execute();
  const row = await trx
    .selectFrom('streaks')
    .select(STREAK_COLUMNS)
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .where('streak_type', '=', typeOf(key))
    .forUpdate()
    .executeTakeFirstOrThrow();
  return toState(row);
}

/** Writes the user's streak (inside the transaction holding its lock). */
export async function saveStreak(
  trx: Kysely<DB>,
  key: StreakKey,
  state: StreakState,
  platform: string,
  at: Date,
): Promise<void> {
  await trx
    .updateTable('streaks')
    .set({
      current: state.current,
      longest: state.longest,
      last_activity_at: state.lastActivityAt,
      last_counted_day: state.lastCountedDay,
      freezes: state.freezes,
      freezes_used: state.freezesUsed,
      last_freeze_used_at: state.lastFreezeUsedAt,
      last_platform: platform,
      updated_at: at,
    })
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .where('streak_type', '=', typeOf(key))
    .execute();
}

/** Milestone lengths the user has claimed at the brand, ascending. */
export async function listClaimedMilestones(db: Kysely<DB>, key: StreakKey): Promise<number[]> {
  const rows = await db
    .selectFrom('milestone_claims')
    .select('milestone')
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .orderBy('milestone')
    .execute();
  return rows.map((row) => row.milestone);
}

export interface CheckinRecord {
  day: string;
  eventId: string;
  platform: string;
  streak: number;
  multiplier: number;
  reward: bigint;
  createdAt: Date;
}

/** The user's check-in of a UTC day, if any. */
export async function findCheckin(db: Kysely<DB>, key: StreakKey, day: string): Promise<CheckinRecord | undefined> {
  const row = await db
    .selectFrom('checkins')
    .select(['day', 'event_id', 'platform', 'streak', 'multiplier', 'reward', 'created_at'])
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .where('day', '=', day)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    day: row.day,
    eventId: row.event_id,
    platform: row.platform,
    streak: row.streak,
    multiplier: Number(row.multiplier),
    reward: BigInt(row.reward),
    createdAt: row.created_at,
  };
}

/** A user's claim of one milestone, if any. */
export async function findMilestoneClaim(
  db: Kysely<DB>,
  key: StreakKey,
  milestone: number,
): Promise<{ eventId: string; bonus: bigint; claimedAt: Date } | undefined> {
  const row = await db
    .selectFrom('milestone_claims')
    .select(['event_id', 'bonus', 'claimed_at'])
    .where('brand_id', '=', key.brandId)
    .where('user_key', '=', key.accountKey)
    .where('milestone', '=', milestone)
    .executeTakeFirst();
  return row ? { eventId: row.event_id, bonus: BigInt(row.bonus), claimedAt: row.claimed_at } : undefined;
}

/** Whether the event pipeline recorded an event (accepted or rejected) under this id. */
export async function eventExists(db: Kysely<DB>, eventId: string): Promise<boolean> {
  const row = await db.selectFrom('events').select('id').where('id', '=', eventId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Records the day's check-in. The primary key (brand, user, day) makes a second one impossible; returns
 * false when the row already existed.
 */
export async function insertCheckin(
  trx: Kysely<DB>,
  row: StreakKey & {
    day: string;
    platform: string;
    eventId: string;
    streak: number;
    multiplier: number;
    reward: bigint;
    at: Date;
  },
): Promise<boolean> {
  const result = await trx
    .insertInto('checkins')
    .values({
      brand_id: row.brandId,
      user_key: row.accountKey,
      day: row.day,
      platform: row.platform,
      event_id: row.eventId,
      streak: row.streak,
      multiplier: row.multiplier,
      reward: row.reward,
      created_at: row.at,
    })
    .onConflict((oc) => oc.columns(['brand_id', 'user_key', 'day']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Records a milestone claim; false when this milestone was already claimed (primary key). */
export async function insertMilestoneClaim(
  trx: Kysely<DB>,
  row: StreakKey & { milestone: number; bonus: bigint; eventId: string; at: Date },
): Promise<boolean> {
  const result = await trx
    .insertInto('milestone_claims')
    .values({
      brand_id: row.brandId,
      user_key: row.accountKey,
      milestone: row.milestone,
      bonus: row.bonus,
      event_id: row.eventId,
      claimed_at: row.at,
    })
    .onConflict((oc) => oc.columns(['brand_id', 'user_key', 'milestone']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Releases a milestone claim whose bonus the event pipeline refused, so it can be claimed again. */
export async function deleteMilestoneClaim(db: Kysely<DB>, eventId: string): Promise<void> {
  await db.deleteFrom('milestone_claims').where('event_id', '=', eventId).execute();
}

/** The platform user id of an identifier, for webhooks (`users.id`), when the user has one yet. */
export async function findUserId(db: Kysely<DB>, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
  return row ? String(row.id) : undefined;
}
