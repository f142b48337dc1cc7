import type { BrandRedemption, Member, Perk } from '@pts/shared';
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, PerksTable } from '../../db/schema.ts';
import { isMemberKey } from '../accounts/member-keys.ts';

export type PerkRow = Selectable<PerksTable>;
export type NewPerkRow = Insertable<PerksTable>;
export type PerkRowPatch = Updateable<PerksTable>;

/** The id of the brand's perk of this uuid (`public_id`, as given), if there is one. */
export async function findBrandPerkIdByUuid(
  db: Kysely<DB>,
  brandId: string,
  publicId: string,
): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('perks')
    .select('id')
    .where('public_id', '=', publicId)
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return row?.id;
}

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

/**
 * Perks in id order; one brand's when `brandId` is given. `syncedOnly` hides perks not yet on chain. With
 * `member`, each row carries `member_claims`: that member's pending or confirmed redemptions of the perk
 * (under any identity of their account).
 */
export function listPerkRows(
  db: Kysely<DB>,
  filter: {
    brandId?: string | undefined;
    category?: string | undefined;
    syncedOnly?: boolean;
    member?: Member | undefined;
  } = {},
): Promise<(PerkRow & { member_claims?: string | number | null })[]> {
  let query = db.selectFrom('perks').selectAll('perks').orderBy('perks.id');
  if (filter.brandId) query = query.where('perks.brand_id', '=', filter.brandId);
  if (filter.category) query = query.where('perks.category', '=', filter.category);
  if (filter.syncedOnly) query = query.where('perks.chain_status', '=', 'synced');
  const { member } = filter;
  if (!member) return query.execute();
  return query
    .select((eb) =>
      eb
        .selectFrom('perk_redemptions as r')
        .select((inner) => inner.fn.countAll<string>().as('n'))
        .whereRef('r.perk_id', '=', 'perks.id')
        .where('r.user_key', 'in', member.identityKeys)
        .where('r.status', 'in', ['pending', 'confirmed'])
        .as('member_claims'),
    )
    .execute();
}

/** A perk with the claim counts judgeRedemption reads (redemption-rule.ts `RedemptionFacts`). */
export type PerkClaimFacts = PerkRow & { claimedTotal: bigint; memberClaims: bigint };

/**
 * The on-chain (synced) perks of `brandIds`, optionally costing at most `maxCost`, each with its claims by
 * anyone and by the member (`memberKeys`: the identities of one account) — pending or confirmed redemptions —
 * in one statement: the facts a recommendation gives judgeRedemption for every perk at once.
 */
export async function readPerkClaimFacts(
  db: Kysely<DB>,
  filter: { brandIds: string[]; memberKeys: string[]; maxCost?: bigint | undefined },
): Promise<PerkClaimFacts[]> {
  if (filter.brandIds.length === 0) return [];
  const memberKeys = filter.memberKeys.length > 0 ? filter.memberKeys : [''];
  let query = db
    .selectFrom('perks')
    .selectAll('perks')
    .select((eb) => [
      eb
        .selectFrom('perk_redemptions as r')
        .select((inner) => inner.fn.countAll<string>().as('n'))
        .whereRef('r.perk_id', '=', 'perks.id')
        .where('r.status', 'in', ['pending', 'confirmed'])
        .as('claimed_total'),
      eb
        .selectFrom('perk_redemptions as r')
        .select((inner) => inner.fn.countAll<string>().as('n'))
        .whereRef('r.perk_id', '=', 'perks.id')
        .where('r.status', 'in', ['pending', 'confirmed'])
        .where('r.user_key', 'in', memberKeys)
        .as('member_claims'),
    ])
    .where('perks.brand_id', 'in', filter.brandIds)
    .where('perks.chain_status', '=', 'synced')
    .orderBy('perks.id');
  if (filter.maxCost !== undefined) query = query.where('perks.cost', '<=', filter.maxCost);
  const rows = await query.execute();
  return rows.map(({ claimed_total, member_claims, ...row }) => ({
    ...row,
    claimedTotal: BigInt(claimed_total ?? 0),
    memberClaims: BigInt(member_claims ?? 0),
  }));
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
    startsAt: row.starts_at ? new Date(row.starts_at).toISOString() : null,
    endsAt: row.ends_at ? new Date(row.ends_at).toISOString() : null,
    chainStatus: row.chain_status,
    chainTxHash: row.chain_tx_hash,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** A member's claims of one perk as the per-member limit counts them, with the perk's brand. */
export interface MemberPerkClaims {
  brandId: string;
  claims: bigint;
}

/**
 * The member's claims of every perk they ever redeemed (pending or confirmed redemptions, keyed by the perk's
 * integer id as text), one statement for all perks: what recommendations give judgeRedemption as
 * `memberClaims`. `brandIds` narrows it to some brands' perks.
 */
export async function readMemberPerkClaims(
  db: Kysely<DB>,
  member: Member,
  brandIds?: string[],
): Promise<Map<string, MemberPerkClaims>> {
  if (brandIds?.length === 0) return new Map();
  let query = db
    .selectFrom('perk_redemptions')
    .select(['perk_id', 'brand_id', (eb) => eb.fn.countAll<string>().as('claims')])
    .where('user_key', 'in', member.identityKeys)
    .where('status', 'in', ['pending', 'confirmed'])
    .groupBy(['perk_id', 'brand_id']);
  if (brandIds) query = query.where('brand_id', 'in', brandIds);
  const rows = await query.execute();
  return new Map(rows.map((row) => [String(row.perk_id), { brandId: row.brand_id, claims: BigInt(row.claims) }]));
}

/**
 * A brand's redemptions, newest first (at most `limit`): of one perk, or of some members' identities. The
 * portal's perk and member pages read them here.
 */
export async function listBrandRedemptions(
  db: Kysely<DB>,
  brandId: string,
  filter: { perkId?: bigint; userKeys?: string[]; limit?: number },
): Promise<BrandRedemption[]> {
  if (filter.userKeys?.length === 0) return [];
  let query = db
    .selectFrom('perk_redemptions as r')
    .innerJoin('perks as p', 'p.id', 'r.perk_id')
    .select([
      'r.id',
      'r.perk_id',
      'p.name',
      'r.user_key',
      'r.platform',
      'r.wallet_address',
      'r.status',
      'r.cost',
      'r.confirmation_code',
      'r.tx_hash',
      'r.error',
      'r.created_at',
    ])
    .where('r.brand_id', '=', brandId)
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id')
    .limit(filter.limit ?? 100);
  if (filter.perkId !== undefined) query = query.where('r.perk_id', '=', filter.perkId);
  if (filter.userKeys) query = query.where('r.user_key', 'in', filter.userKeys);
  const rows = await query.execute();
  return rows.map((row) => ({
    redemptionId: row.id,
    perkId: Number(row.perk_id),
    perkName: row.name,
    userKey: row.user_key,
    platform: row.platform,
    walletAddress: row.wallet_address,
    status: row.status,
    cost: Number(row.cost),
    confirmationCode: row.confirmation_code,
    transactionHash: row.tx_hash,
    error: row.error,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/** An offered perk (readOfferedPerks): its row, its brand's name and category, its redemptions in the window. */
export type OfferedPerkRow = PerkRow & { brand_name: string; brand_category: string | null; redemptions: number };

/**
 * Active, on-chain perks of every brand (of `brandCategory`, costing at most `maxCost`), cheapest first, each
 * with its redemptions in `[window.from, window.to)` — pending or confirmed, agent identities (`agent:…`,
 * `agent_…`) left out: the catalogue deals are chosen from (the agent's find_deals). Supply is read from the
 * chain by the caller.
 */
export async function readOfferedPerks(
  db: Kysely<DB>,
  filter: { brandCategory?: string | undefined; maxCost?: bigint | undefined },
  window: { from: Date; to: Date },
): Promise<OfferedPerkRow[]> {
  let query = db
    .selectFrom('perks')
    .innerJoin('brands', 'brands.address', 'perks.brand_id')
    .selectAll('perks')
    .select(['brands.name as brand_name', 'brands.category as brand_category'])
    .select((eb) =>
      eb
        .selectFrom('perk_redemptions as r')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('r.perk_id', '=', 'perks.id')
        .where('r.status', 'in', ['pending', 'confirmed'])
        .where('r.created_at', '>=', window.from)
        .where('r.created_at', '<', window.to)
        .where(isMemberKey(sql.ref('r.user_key')))
        .as('redemptions'),
    )
    .where('perks.active', '=', true)
    .where('perks.chain_status', '=', 'synced');
  if (filter.brandCategory) query = query.where('brands.category', '=', filter.brandCategory);
  if (filter.maxCost !== undefined) query = query.where('perks.cost', '<=', filter.maxCost);
  const rows = await query.orderBy('perks.cost').orderBy('perks.id').execute();
  return rows.map((row) => ({ ...row, redemptions: Number(row.redemptions ?? 0) }));
}
