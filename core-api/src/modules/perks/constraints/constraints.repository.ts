import type { PerkConstraint } from '@pts/shared';
import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../../db/database.ts';
import type { PerkConstraintsTable } from '../../../db/schema.ts';

export type ConstraintRow = Selectable<PerkConstraintsTable>;

export function insertConstraint(db: Database, row: Insertable<PerkConstraintsTable>): Promise<ConstraintRow> {
  return db.insertInto('perk_constraints').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A perk's constraints, oldest first. */
export function listConstraintRows(db: Database, perkId: bigint): Promise<ConstraintRow[]> {
  return db.selectFrom('perk_constraints').selectAll().where('perk_id', '=', perkId).orderBy('seq').execute();
}

/** Deletes one constraint of a perk (its cache rows go with it); whether it existed. */
export async function deleteConstraint(db: Database, perkId: bigint, constraintId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('perk_constraints')
    .where('id', '=', constraintId)
    .where('perk_id', '=', perkId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A cached external-API answer still valid at `now`. */
export function findCachedAnswer(db: Database, constraintId: string, userAddress: string, now: Date) {
  return db
    .selectFrom('constraint_cache')
    .select(['eligible', 'detail', 'expires_at'])
    .where('constraint_id', '=', constraintId)
    .where('user_address', '=', userAddress)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function saveCachedAnswer(
  db: Database,
  entry: {
    constraintId: string;
    userAddress: string;
    apiUrl: string;
    collectionId: bigint;
    eligible: boolean;
    detail: string;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  const values = {
    api_url: entry.apiUrl,
    collection_id: entry.collectionId,
    eligible: entry.eligible,
    detail: entry.detail,
    expires_at: entry.expiresAt,
    created_at: entry.now,
  };
  await db
    .insertInto('constraint_cache')
    .values({ constraint_id: entry.constraintId, user_address: entry.userAddress, ...values })
    .onConflict((oc) => oc.columns(['constraint_id', 'user_address']).doUpdateSet(values))
    .execute();
}

/** The API view of a constraint row. */
export function toConstraint(row: ConstraintRow): PerkConstraint {
  return {
    constraintId: row.id,
    perkId: Number(row.perk_id),
    kind: row.kind,
    config: row.config,
    ttlSeconds: row.ttl_seconds,
    createdAt: new Date(row.created_at).toISOString(),
  };
}
