import {
  type AccountKey,
  type AchievementDefinition,
  type AchievementType,
  achievementAccumulates,
  achievementProgress,
  type Clock,
  DEFAULT_ACHIEVEMENTS,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { type EnqueueWebhookInput, enqueueWebhooks } from '../webhooks/webhooks.outbox.ts';

/** A step of progress: `increment` adds to a running total, `value` raises a high-water mark. */
export interface ProgressUpdate {
  brandId: string;
  accountKey: string;
  type: string;
  increment?: bigint;
  value?: bigint;
}

export interface UnlockedAchievement {
  brandId: string;
  accountKey: string;
  id: string;
  name: string;
  threshold: number;
}

/** The brand's own definitions, or the defaults when it has none. */
export async function definitionsFor(db: Database, brandId: string): Promise<AchievementDefinition[]> {
  const rows = await db
    .selectFrom('achievement_definitions')
    .select(['id', 'type', 'threshold', 'name', 'description'])
    .where('brand_id', '=', brandId)
    .orderBy('position')
    .execute();
  if (rows.length === 0) return [...DEFAULT_ACHIEVEMENTS];
  return rows.map((row) => ({
    id: row.id,
    type: row.type as AchievementType,
    threshold: Number(row.threshold),
    name: row.name,
    description: row.description,
  }));
}

/** Whether the brand has definitions of its own (else the defaults apply). */
export async function hasOwnDefinitions(db: Database, brandId: string): Promise<boolean> {
  const row = await db
    .selectFrom('achievement_definitions')
    .select('id')
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One reported step of a member's progress (`POST /services/achievements/progress`): advanced in its own
 * transaction; answers the value now recorded for the type and what the step unlocked.
 */
export async function reportProgress(
  db: Database,
  update: ProgressUpdate,
  now: Date,
): Promise<{ value: bigint; unlocked: UnlockedAchievement[] }> {
  const unlocked = await db.transaction().execute((trx) => advanceAchievements(trx, [update], now));
  const row = await db
    .selectFrom('achievement_progress')
    .select('value')
    .where('brand_id', '=', update.brandId)
    .where('user_key', '=', update.accountKey)
    .where('type', '=', update.type)
    .executeTakeFirst();
  return { value: row?.value ?? 0n, unlocked };
}

/** The definitions in force for the brand and whether they are the defaults: every surface's read. */
export async function brandAchievementDefinitions(
  db: Database,
  brandId: string,
): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }> {
  const custom = await hasOwnDefinitions(db, brandId);
  return { defaults: !custom, definitions: await definitionsFor(db, brandId) };
}

type DefinitionInput = { id: string; type: string; threshold: number; name: string; description: string };

/** What a replacement changes, by id: added, removed, and kept with another type, threshold, name or description. */
function definitionChanges(before: readonly DefinitionInput[], after: readonly DefinitionInput[]) {
  const previous = new Map(before.map((d) => [d.id, d]));
  const next = new Set(after.map((d) => d.id));
  const same = (a: DefinitionInput, b: DefinitionInput) =>
    a.type === b.type && a.threshold === b.threshold && a.name === b.name && a.description === b.description;
  return {
    added: after.filter((d) => !previous.has(d.id)).map((d) => d.id),
    removed: before.filter((d) => !next.has(d.id)).map((d) => d.id),
    changed: after.filter((d) => previous.has(d.id) && !same(previous.get(d.id)!, d)).map((d) => d.id),
  };
}

/**
 * Replaces the brand's definitions (an empty list brings the defaults back), in the brand's audit log under
 * `audit.actor` (the admin token and the CLI are `admin`, the portal `portal:<email>`) with what changed:
 * the ids now in force, and those added, removed and changed against the list in force before (the
 * defaults while the brand had none). Answers the definitions now in force.
 */
export async function setDefinitions(
  db: Database,
  brandId: string,
  definitions: DefinitionInput[],
  audit: { actor: string; at: Date },
): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }> {
  await db.transaction().execute(async (trx) => {
    // One replacement at a time per brand: the list read for the audit is the one replaced.
    await trx.selectFrom('brands').select('address').where('address', '=', brandId.toLowerCase()).forUpdate().execute();
    const before = await definitionsFor(trx, brandId);
    const after = definitions.length === 0 ? DEFAULT_ACHIEVEMENTS : definitions;
    await trx.deleteFrom('achievement_definitions').where('brand_id', '=', brandId).execute();
    await insertAuditEntry(trx, {
      actor: audit.actor,
      action: 'achievement.set',
      subject: brandId.toLowerCase(),
      details: {
        ids: definitions.map((d) => d.id),
        ...(definitions.length === 0 ? { restoredDefaults: true } : {}),
        ...definitionChanges(before, after),
      },
      at: audit.at,
    });
    if (definitions.length === 0) return;
    await trx
      .insertInto('achievement_definitions')
      .values(
        definitions.map((d, position) => ({
          brand_id: brandId,
          id: d.id,
          type: d.type,
          threshold: BigInt(d.threshold),
          name: d.name,
          description: d.description,
          position,
        })),
      )
      .execute();
  });
  return brandAchievementDefinitions(db, brandId);
}

/**
 * Applies progress in the caller's transaction and records every achievement it unlocks, once (the unlock
 * row's primary key), queueing an `achievement.unlocked` webhook for each in the same transaction.
 * Returns what this call unlocked.
 */
export async function advanceAchievements(
  trx: Database,
  updates: ProgressUpdate[],
  now: Date,
): Promise<UnlockedAchievement[]> {
  const merged = new Map<string, ProgressUpdate & { amount: bigint }>();
  for (const update of updates) {
    const accumulates = achievementAccumulates(update.type);
    const amount = accumulates ? (update.increment ?? 0n) : (update.value ?? 0n);
    if (accumulates && amount <= 0n) continue;
    const key = [update.brandId, update.accountKey, update.type].join('\u0000');
    const entry = merged.get(key);
    if (!entry) merged.set(key, { ...update, amount });
    else entry.amount = accumulates ? entry.amount + amount : entry.amount > amount ? entry.amount : amount;
  }
  if (merged.size === 0) return [];
  // One lock order for every writer: no deadlocks between concurrent confirmations and reports.
  const ordered = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, u]) => u);
  const current = new Map<string, bigint>();
  // Two statements whatever the batch size: running totals add, high-water marks keep the greatest.
  for (const accumulates of [true, false]) {
    const rows = ordered
      .filter((update) => achievementAccumulates(update.type) === accumulates)
      .map((update) => ({
        brand_id: update.brandId,
        user_key: update.accountKey,
        type: update.type,
        value: update.amount,
        updated_at: now,
      }));
    if (rows.length === 0) continue;
    const updated = await trx
      .insertInto('achievement_progress')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['brand_id', 'user_key', 'type']).doUpdateSet({
          value: accumulates
            ? sql`achievement_progress.value + excluded.value`
            : sql`greatest(achievement_progress.value, excluded.value)`,
          updated_at: now,
        }),
      )
      .returning(['brand_id', 'user_key', 'type', 'value'])
      .execute();
    for (const row of updated) current.set([row.brand_id, row.user_key, row.type].join('\u0000'), BigInt(row.value));
  }

  const definitionsByBrand = new Map<string, AchievementDefinition[]>();
  for (const brandId of new Set(ordered.map((u) => u.brandId))) {
    definitionsByBrand.set(brandId, await definitionsFor(trx, brandId));
  }
  const candidates: { brandId: string; accountKey: string; definition: AchievementDefinition }[] = [];
  for (const update of ordered) {
    const value = current.get([update.brandId, update.accountKey, update.type].join('\u0000')) ?? 0n;
    for (const definition of definitionsByBrand.get(update.brandId) ?? []) {
      if (definition.type === update.type && BigInt(definition.threshold) <= value) {
        candidates.push({ brandId: update.brandId, accountKey: update.accountKey, definition });
      }
    }
  }
  if (candidates.length === 0) return [];
  const inserted = await trx
    .insertInto('achievement_unlocks')
    .values(
      candidates.map(({ brandId, accountKey, definition }) => ({
        brand_id: brandId,
        user_key: accountKey,
        achievement_id: definition.id,
        type: definition.type,
        threshold: BigInt(definition.threshold),
        name: definition.name,
        unlocked_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['brand_id', 'user_key', 'achievement_id']).doNothing())
    .returning(['brand_id', 'user_key', 'achievement_id', 'name', 'threshold'])
    .execute();
  if (inserted.length === 0) return [];

  const users = await trx
    .selectFrom('users')
    .select(['id', 'email'])
    .where(
      'email',
      'in',
      inserted.map((row) => row.user_key),
    )
    .execute();
  const userIds = new Map(users.map((user) => [user.email, String(user.id)]));
  const notices: EnqueueWebhookInput[] = inserted.map((row) => ({
    brandId: row.brand_id,
    type: 'achievement.unlocked',
    data: {
      brandId: row.brand_id,
      userId: userIds.get(row.user_key) ?? row.user_key,
      email: row.user_key,
      achievementId: row.achievement_id,
      name: row.name,
      timestamp: now.getTime(),
    },
    at: now,
  }));
  await enqueueWebhooks(trx, notices);
  return inserted.map((row) => ({
    brandId: row.brand_id,
    accountKey: row.user_key,
    id: row.achievement_id,
    name: row.name,
    threshold: Number(row.threshold),
  }));
}

export interface AchievementView {
  id: string;
  type: string;
  name: string;
  description: string;
  threshold: number;
  progress: number;
  fraction: number;
  unlocked: boolean;
  unlockedAt: string | null;
}

/**
 * Every achievement of the brand with the user's progress. An unlock stays unlocked even if the brand
 * later raises the threshold; unlocks of definitions the brand removed are listed after the current ones.
 */
export async function readAchievements(
  db: Database,
  brandId: string,
  accountKey: AccountKey,
): Promise<AchievementView[]> {
  const [definitions, progress, unlocks] = await Promise.all([
    definitionsFor(db, brandId),
    db
      .selectFrom('achievement_progress')
      .select(['type', 'value'])
      .where('brand_id', '=', brandId)
      .where('user_key', '=', accountKey)
      .execute(),
    db
      .selectFrom('achievement_unlocks')
      .select(['achievement_id', 'type', 'threshold', 'name', 'unlocked_at'])
      .where('brand_id', '=', brandId)
      .where('user_key', '=', accountKey)
      .execute(),
  ]);
  const values = new Map(progress.map((row) => [row.type, Number(row.value)]));
  const unlocked = new Map(unlocks.map((row) => [row.achievement_id, row]));
  const views: AchievementView[] = definitions.map((definition) => {
    const unlock = unlocked.get(definition.id);
    const computed = achievementProgress(definition, values.get(definition.type) ?? 0);
    return {
      id: definition.id,
      type: definition.type,
      name: definition.name,
      description: definition.description,
      threshold: definition.threshold,
      progress: unlock ? definition.threshold : computed.progress,
      fraction: unlock ? 1 : computed.fraction,
      unlocked: unlock !== undefined,
      unlockedAt: unlock ? unlock.unlocked_at.toISOString() : null,
    };
  });
  const listed = new Set(definitions.map((d) => d.id));
  for (const unlock of unlocks) {
    if (listed.has(unlock.achievement_id)) continue;
    views.push({
      id: unlock.achievement_id,
      type: unlock.type,
      name: unlock.name,
      description: '',
      threshold: Number(unlock.threshold),
      progress: Number(unlock.threshold),
      fraction: 1,
      unlocked: true,
      unlockedAt: unlock.unlocked_at.toISOString(),
    });
  }
  return views;
}

/** Achievements of a brand's members and the brand's definitions (`/services/achievements`, `/admin`). */
export interface AchievementService {
  /** The member's achievements; linked identities share the account's (docs/identity-linking.md). */
  read(brandId: string, identityKey: string): Promise<AchievementView[]>;
  /** Records reported progress of the member's account now, after checking the brand exists. */
  reportProgress(input: {
    brandId: string;
    userIdentifier: string;
    type: string;
    increment?: bigint;
    value?: bigint;
  }): Promise<{ value: bigint; unlocked: UnlockedAchievement[] }>;
  /** The brand's definitions (`defaults: true` while it has none of its own), or BRAND_NOT_FOUND. */
  definitions(brandId: string): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }>;
  /** Replaces the brand's definitions now, audited as `actor`; BRAND_NOT_FOUND for an unknown brand. */
  setDefinitions(
    brandId: string,
    definitions: DefinitionInput[],
    actor: string,
  ): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }>;
}

export function createAchievementService(deps: { db: Database; clock: Clock }): AchievementService {
  const { db, clock } = deps;
  return {
    read: async (brandId, identityKey) => readAchievements(db, brandId, await resolveAccountKey(db, identityKey)),
    reportProgress: async ({ userIdentifier: identityKey, ...update }) => {
      await requireBrandExists(db, update.brandId);
      const now = clock.now();
      const accountKey = await resolveAccountKey(db, identityKey);
      return reportProgress(db, { ...update, accountKey }, now);
    },
    definitions: async (brandId) => {
      await requireBrandExists(db, brandId);
      return brandAchievementDefinitions(db, brandId);
    },
    setDefinitions: async (brandId, definitions, actor) => {
      await requireBrandExists(db, brandId);
      return setDefinitions(db, brandId, definitions, { actor, at: clock.now() });
    },
  };
}
