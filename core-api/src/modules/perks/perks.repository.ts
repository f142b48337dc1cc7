import type { Perk } from '@pts/shared';
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, PerksTable } from '../../db/schema.ts';

export type PerkRow = Selectable<PerksTable>;
export type NewPerkRow = Insertable<PerksTable>;
export type PerkRowPatch = Updateable<PerksTable>;

export function insertPerk(db: Kysely<DB>, row: NewPerkRow): Promise<PerkRow> {
  return db.insertInto('perks').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findPerk(db: Kysely<DB>, id: bigint): Promise<PerkRow | undefined> {
  return db.selectFrom('perks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The brand's perk with this name (case-insensitive), the unique key of a create. */
export function findPerkByName(db: Kysely<DB>, brandId: string, name: string): Promise<PerkRow | undefined> {
  return db
    .selectFrom('perks')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
}

export function updatePerkRow(db: Kysely<DB>, id: bigint, patch: PerkRowPatch): Promise<PerkRow | undefined> {
  return db.updateTable('perks').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Perks in id order; one brand's when `brandId` is given. `syncedOnly` hides perks not yet on chain. */
export function listPerkRows(
  db: Kysely<DB>,
  filter: { brandId?: string | undefined; category?: string | undefined; syncedOnly?: boolean } = {},
): Promise<PerkRow[]> {
  let query = db.selectFrom('perks').selectAll().orderBy('id');
  if (filter.brandId) query = query.where('brand_id', '=', filter.brandId);
  if (filter.category) query = query.where('category', '=', filter.category);
  if (filter.syncedOnly) query = query.where('chain_status', '=', 'synced');
  return query.execute();
}

/** The admin view of a perk row. */
export function toPerk(row: PerkRow): Perk {
  return {
    perkId: Number(row.id),
    uuid: row.public_id,
    brandId: row.brand_id,
    name: row.name,
    description: row.description,
    category: row.category,
    cost: Number(row.cost),
    maxSupply: row.max_supply === null ? null : Number(row.max_supply),
    maxPerUser: Number(row.max_per_user),
    chargesPerToken: Number(row.charges_per_token),
    active: row.active,
    imageUrl: row.image_url,
    chainStatus: row.chain_status,
    chainTxHash: row.chain_tx_hash,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
