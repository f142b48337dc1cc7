import {
  AppError,
  type BrandRedemption,
  type Clock,
  type CreatePerkInput,
  type Member,
  PERK_DEFAULT_CATEGORY,
  type Perk,
  type PerkCatalogueItem,
  perkStatusAt,
  type UpdatePerkInput,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { findBrandByAddress, insertAuditEntry } from '../brands/brands.repository.ts';
import { brandNotFound } from '../brands/brands.service.ts';
import type { CollectionSettings, PerkChain } from './perk-chain.ts';
import {
  findPerk,
  findPerkByName,
  insertPerk,
  listBrandRedemptions,
  listPerkRows,
  type PerkRow,
  type PerkRowPatch,
  toPerk,
  updatePerkRow,
} from './perks.repository.ts';

/** What the perk catalogue works with. `perkChain` is absent when this process has no chain access for perks. */
export interface PerkServiceDeps {
  db: Database;
  clock: Clock;
  perkChain?: PerkChain | undefined;
  logger?: Logger | undefined;
  /** Who the audit log names; `admin` when absent. */
  actor?: string | undefined;
  /**
   * Told when a perk reaches the chain (created or changed), as a change of its brand: every process then drops
   * what it remembered of the brand's catalogue (agent answers, `find_deals`).
   */
  changes?: ChangeNotifier | undefined;
  /** Where catalogue reads learn that the brand exists (the event path's brand cache); the database when absent. */
  brands?: { get(brandId: string): Promise<unknown> } | undefined;
}

/**
 * One lock per perk and chain: a create and its retry (or two updates) never sync the same collection at
 * once. Keyed by the PerkChain instance, so two platforms in one process (tests) keep separate locks.
 */
const perkLocksByChain = new WeakMap<PerkChain, Map<string, Promise<unknown>>>();
function withPerkLock<T>(chain: PerkChain, id: bigint, work: () => Promise<T>): Promise<T> {
  let locks = perkLocksByChain.get(chain);
  if (!locks) {
    locks = new Map();
    perkLocksByChain.set(chain, locks);
  }
  const perkLocks = locks;
  const key = id.toString();
  const previous = perkLocks.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  const tail = next.catch(() => undefined);
  perkLocks.set(key, tail);
  void tail.then(() => {
    if (perkLocks.get(key) === tail) perkLocks.delete(key);
  });
  return next;
}

/**
 * Creates a perk: the row is written `pending` first, then the PerkNFT collection (id = the row's id) is
 * created on-chain and its receipt awaited, then the row becomes `synced`. A create that failed half-way is
 * finished by repeating it (same brand and name): the pending row is reused with the new request's fields
 * and the chain step runs again (it creates the collection only if it does not exist yet). A synced perk
 * with the same name is a 409.
 */
export async function createPerk(deps: PerkServiceDeps, input: CreatePerkInput): Promise<Perk> {
  const chain = writableChain(deps);
  const brand = await findBrandByAddress(deps.db, input.brandId);
  if (!brand) throw brandNotFound(input.brandId);
  const now = deps.clock.now();
  const fields = {
    name: input.name,
    description: input.description ?? '',
    category: input.category ?? PERK_DEFAULT_CATEGORY,
    cost: BigInt(input.cost),
    max_supply: input.maxSupply === undefined || input.maxSupply === null ? null : BigInt(input.maxSupply),
    max_per_user: BigInt(input.maxPerUser ?? 1),
    charges_per_token: BigInt(input.chargesPerToken ?? 1),
    active: input.active ?? true,
    image_url: input.imageUrl ?? null,
    starts_at: momentOf(input.startsAt),
    ends_at: momentOf(input.endsAt),
    updated_at: now,
  };
  checkWindow(fields.starts_at, fields.ends_at);
  let row: PerkRow;
  try {
    row = await deps.db.transaction().execute(async (trx) => {
      const inserted = await insertPerk(trx, {
        ...fields,
        brand_id: input.brandId,
        chain_status: 'pending',
        created_at: now,
      });
      await insertAuditEntry(trx, {
        actor: deps.actor ?? 'admin',
        action: 'perk.create',
        subject: inserted.id.toString(),
        details: { brandId: input.brandId, ...toPerkDetails(inserted) },
        at: now,
      });
      return inserted;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findPerkByName(deps.db, input.brandId, input.name);
    if (!existing) throw error;
    if (existing.chain_status === 'synced') {
      throw new AppError(
        'CONFLICT',
        `Brand ${input.brandId} already has a perk named "${existing.name}" (id ${existing.id}); change it with PATCH /admin/perks/${existing.id} or pick another name`,
        { field: 'name', value: input.name, perkId: Number(existing.id) },
      );
    }
    // A half-done create: finish it with this request's settings.
    row = await withPerkLock(chain, existing.id, async () => {
      const current = await findPerk(deps.db, existing.id);
      if (current?.chain_status === 'synced') return current;
      return (await updatePerkRow(deps.db, existing.id, fields)) as PerkRow;
    });
    if (row.chain_status === 'synced') return toPerk(row);
  }
  return toPerk(await withPerkLock(chain, row.id, () => syncRow(deps, chain, row.id)));
}

/**
 * Changes a perk. The row takes the new values marked `pending`, the collection is updated on-chain
 * (`updateCollection`, or `createCollection` when a create never finished), then the row is `synced`. A
 * contract refusal (e.g. `MaxSupplyBelowClaimed`) restores the previous values and answers 409; a chain
 * that does not answer leaves the row `pending` and a repeat of the PATCH finishes it.
 */
export async function updatePerk(deps: PerkServiceDeps, perkId: bigint, input: UpdatePerkInput): Promise<Perk> {
  const chain = writableChain(deps);
  return withPerkLock(chain, perkId, async () => {
    const previous = await findPerk(deps.db, perkId);
    if (!previous) throw perkNotFound(perkId);
    const now = deps.clock.now();
    const patch: PerkRowPatch = { updated_at: now, chain_status: 'pending' };
    if (input.name !== undefined) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (input.category !== undefined) patch.category = input.category;
    if (input.cost !== undefined) patch.cost = BigInt(input.cost);
    if (input.maxSupply !== undefined) patch.max_supply = input.maxSupply === null ? null : BigInt(input.maxSupply);
    if (input.maxPerUser !== undefined) patch.max_per_user = BigInt(input.maxPerUser);
    if (input.chargesPerToken !== undefined) patch.charges_per_token = BigInt(input.chargesPerToken);
    if (input.active !== undefined) patch.active = input.active;
    if (input.imageUrl !== undefined) patch.image_url = input.imageUrl;
    if (input.startsAt !== undefined) patch.starts_at = momentOf(input.startsAt);
    if (input.endsAt !== undefined) patch.ends_at = momentOf(input.endsAt);
    checkWindow(
      patch.starts_at === undefined ? previous.starts_at : (patch.starts_at as Date | null),
      patch.ends_at === undefined ? previous.ends_at : (patch.ends_at as Date | null),
    );
    await deps.db
      .transaction()
      .execute(async (trx) => {
        await updatePerkRow(trx, perkId, patch);
        await insertAuditEntry(trx, {
          actor: deps.actor ?? 'admin',
          action: 'perk.update',
          subject: perkId.toString(),
          details: { ...input },
          at: now,
        });
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) {
          throw new AppError('CONFLICT', `Brand ${previous.brand_id} already has a perk named "${input.name}"`, {
            field: 'name',
            value: input.name,
          });
        }
        throw error;
      });
    try {
      return toPerk(await syncRow(deps, chain, perkId));
    } catch (error) {
      // Refused by the contract before anything was sent: the previous values are still the chain's.
      if (error instanceof AppError && error.code === 'CONFLICT' && previous.chain_status === 'synced') {
        const { id: _id, created_at: _created, ...restore } = previous;
        await updatePerkRow(deps.db, perkId, { ...restore, last_error: error.message });
      }
      throw error;
    }
  });
}

/**
 * Archives (`archived` true) or restores a perk (docs/portal.md, "Undo"): archived, it leaves the public
 * catalogue, the bots' /perks and the agent's tools, and a redemption is refused with reason `archived`. An
 * active perk is also switched off (on chain too, through updatePerk), so no path that reads the collection
 * can sell it; a restored perk comes back inactive, offered again only when someone activates it. Its
 * redemptions stay. Audited as `perk.archive` or `perk.restore`; CONFLICT when already in the asked state.
 */
export async function archivePerk(deps: PerkServiceDeps, perkId: bigint, archived: boolean): Promise<Perk> {
  const now = deps.clock.now();
  const row = await deps.db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('perks').selectAll().where('id', '=', perkId).forUpdate().executeTakeFirst();
    if (!current) throw perkNotFound(perkId);
    if (archived === (current.archived_at !== null)) {
      throw new AppError(
        'CONFLICT',
        archived ? `"${current.name}" is already archived` : `"${current.name}" is not archived`,
        {
          field: 'perkId',
          value: perkId.toString(),
        },
      );
    }
    const row = await updatePerkRow(trx, perkId, { archived_at: archived ? now : null, updated_at: now });
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: archived ? 'perk.archive' : 'perk.restore',
      subject: perkId.toString(),
      details: { name: current.name, wasActive: current.active },
      at: now,
    });
    return row!;
  });
  if (archived && row.active) return updatePerk(deps, perkId, { active: false });
  return toPerk(row);
}

const momentOf = (value: string | null | undefined): Date | null => (value ? new Date(value) : null);

/** A window must end after it starts. */
function checkWindow(startsAt: Date | null, endsAt: Date | null): void {
  if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw new AppError('VALIDATION_ERROR', 'endsAt must be after startsAt', {
      field: 'endsAt',
      value: endsAt.toISOString(),
      errors: [`endsAt: must be after startsAt (${startsAt.toISOString()})`],
    });
  }
}

/** The brand's perks (all when no brand is given), oldest first. */
export async function listPerks(deps: Pick<PerkServiceDeps, 'db'>, brandId?: string): Promise<Perk[]> {
  if (brandId && !(await findBrandByAddress(deps.db, brandId))) throw brandNotFound(brandId);
  return (await listPerkRows(deps.db, { brandId })).map(toPerk);
}

/** One perk, or PERK_NOT_FOUND. */
export async function getPerk(deps: Pick<PerkServiceDeps, 'db'>, perkId: bigint): Promise<Perk> {
  const row = await findPerk(deps.db, perkId);
  if (!row) throw perkNotFound(perkId);
  return toPerk(row);
}

/** The perk, when it is `brandId`'s; PERK_NOT_FOUND otherwise (another brand's perk is not confirmed to exist). */
export async function getBrandPerk(deps: Pick<PerkServiceDeps, 'db'>, brandId: string, perkId: bigint): Promise<Perk> {
  const perk = await getPerk(deps, perkId);
  if (perk.brandId !== brandId) throw perkNotFound(perkId);
  return perk;
}

/**
 * The public catalogue of a brand: synced perks with their live claimed count (PerkNFT.totalClaimed).
 * `available` keeps only (true) or drops (false) perks that are active and not sold out.
 */
export async function listCatalogue(
  deps: PerkServiceDeps,
  brandId: string,
  filter: { category?: string | undefined; available?: boolean | undefined } = {},
): Promise<PerkCatalogueItem[]> {
  return (await catalogueOf(deps, brandId, filter)).map(({ item }) => item);
}

/**
 * listCatalogue with the member's claims of each perk (pending or confirmed redemptions), read in the same
 * statement as the perks: what judgeRedemption needs to tell which of them the member may still redeem.
 */
export function listMemberCatalogue(
  deps: PerkServiceDeps,
  brandId: string,
  member: Member,
  filter: { category?: string | undefined; available?: boolean | undefined } = {},
): Promise<{ item: PerkCatalogueItem; memberClaims: bigint }[]> {
  return catalogueOf(deps, brandId, filter, member);
}

async function catalogueOf(
  deps: PerkServiceDeps,
  brandId: string,
  filter: { category?: string | undefined; available?: boolean | undefined },
  member?: Member,
): Promise<{ item: PerkCatalogueItem; memberClaims: bigint }[]> {
  const exists = deps.brands ? await deps.brands.get(brandId) : await findBrandByAddress(deps.db, brandId);
  if (!exists) throw brandNotFound(brandId);
  const rows = await listPerkRows(deps.db, {
    brandId,
    category: filter.category,
    syncedOnly: true,
    member,
    hideArchived: true,
  });
  if (rows.length === 0) return [];
  if (!deps.perkChain) throw chainUnavailable('the perk contracts are not configured in this process');
  let claimed: bigint[];
  try {
    claimed = await deps.perkChain.totalClaimed(rows.map((row) => row.id));
  } catch (error) {
    if (error instanceof AppError) throw error;
    deps.logger?.warn({ err: error }, 'perk catalogue: chain read failed');
    throw chainUnavailable('the chain did not answer; retry shortly');
  }
  const items = rows.map((row, index) => ({
    item: toCatalogueItem(row, claimed[index] ?? 0n, deps.clock.now()),
    memberClaims: BigInt(row.member_claims ?? 0),
  }));
  return filter.available === undefined ? items : items.filter(({ item }) => item.available === filter.available);
}

/** 404 for an unknown perk id. */
export function perkNotFound(perkId: bigint | number | string): AppError {
  return new AppError(
    'PERK_NOT_FOUND',
    `No perk with id ${perkId}; \`pts perk list --brand ID\` shows a brand's perks`,
    {
      field: 'perkId',
      value: String(perkId),
    },
  );
}

/** The chain settings a row stands for (null supply = 0 = unlimited on-chain). */
export function collectionSettingsOf(row: PerkRow): Omit<CollectionSettings, 'brand'> {
  return {
    price: row.cost,
    maxSupply: row.max_supply ?? 0n,
    maxPerUser: row.max_per_user,
    chargesPerToken: row.charges_per_token,
    active: row.active,
  };
}

/** Brings the collection in line with the row (create or update, or nothing when equal) and marks it synced. */
async function syncRow(deps: PerkServiceDeps, chain: PerkChain, perkId: bigint): Promise<PerkRow> {
  const row = await findPerk(deps.db, perkId);
  if (!row) throw perkNotFound(perkId);
  const settings = collectionSettingsOf(row);
  let hash = row.chain_tx_hash;
  try {
    const existing = await chain.getCollection(row.id);
    if (!existing) {
      hash = await chain.createCollection(row.id, { ...settings, brand: row.brand_id as `0x${string}` });
    } else {
      if (existing.brand.toLowerCase() !== row.brand_id) {
        throw new AppError(
          'CONFLICT',
          `PerkNFT collection ${row.id} already exists for brand ${existing.brand.toLowerCase()}, not ${row.brand_id}: the database and the chain disagree (was one of them reset?)`,
          { perkId: Number(row.id) },
        );
      }
      if (!sameSettings(existing, settings)) hash = await chain.updateCollection(row.id, settings);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await updatePerkRow(deps.db, row.id, { last_error: message.slice(0, 500) });
    if (error instanceof AppError) throw error;
    deps.logger?.warn({ err: error, perkId: row.id.toString() }, 'perk collection sync failed');
    throw chainUnavailable(
      `the PerkNFT transaction did not complete (${message.split('\n')[0]}); perk ${row.id} stays pending — repeat the request to finish it`,
    );
  }
  const synced = (await updatePerkRow(deps.db, row.id, {
    chain_status: 'synced',
    chain_tx_hash: hash,
    last_error: null,
  })) as PerkRow;
  deps.changes?.emit({ kind: 'brand', brandId: row.brand_id });
  return synced;
}

function sameSettings(a: Omit<CollectionSettings, 'brand'>, b: Omit<CollectionSettings, 'brand'>): boolean {
  return (
    a.price === b.price &&
    a.maxSupply === b.maxSupply &&
    a.maxPerUser === b.maxPerUser &&
    a.chargesPerToken === b.chargesPerToken &&
    a.active === b.active
  );
}

function writableChain(deps: PerkServiceDeps): PerkChain {
  if (!deps.perkChain?.canWrite) {
    throw chainUnavailable(
      'no collection-admin key or PerkNFT address: set PTS_DEPLOYER_PRIVATE_KEY (and PTS_PERK_NFT_ADDRESS when the contracts are not deployed by this process)',
    );
  }
  return deps.perkChain;
}

function chainUnavailable(why: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', `Perk collections unavailable: ${why}`);
}

function toPerkDetails(row: PerkRow): Record<string, unknown> {
  const perk = toPerk(row);
  return { name: perk.name, cost: perk.cost, maxSupply: perk.maxSupply, maxPerUser: perk.maxPerUser };
}

/**
 * A perk as the catalogue shows it, with its supply from the chain (`totalClaimed`, from PerkNFT). With
 * `now`, a perk outside its redemption window is not `available`.
 */
export function toCatalogueItem(row: PerkRow, totalClaimed: bigint, now: Date): PerkCatalogueItem {
  const remaining = row.max_supply === null ? null : row.max_supply > totalClaimed ? row.max_supply - totalClaimed : 0n;
  return {
    id: Number(row.id),
    uuid: row.public_id,
    brandId: row.brand_id,
    name: row.name,
    description: row.description,
    category: row.category,
    cost: Number(row.cost),
    maxSupply: row.max_supply === null ? null : Number(row.max_supply),
    totalClaimed: Number(totalClaimed),
    remainingSupply: remaining === null ? null : Number(remaining),
    maxPerUser: Number(row.max_per_user),
    chargesPerToken: Number(row.charges_per_token),
    imageUrl: row.image_url,
    active: row.active,
    startsAt: row.starts_at ? new Date(row.starts_at).toISOString() : null,
    endsAt: row.ends_at ? new Date(row.ends_at).toISOString() : null,
    // The one rule every surface names a perk's status by (the catalogue lists synced perks only).
    available:
      perkStatusAt(
        { active: row.active, onChain: true, startsAt: row.starts_at, endsAt: row.ends_at, maxSupply: row.max_supply },
        totalClaimed,
        now,
      ) === 'active',
  };
}

/**
 * The perk catalogue: the admin API's create, change, list and read (audited as `admin`), and the public
 * catalogue of `/services/perks/:brandId`.
 */
/**
 * Who the audit log names for one change (a portal user, `portal:<email>`; the deps' actor when absent) and,
 * with `brandId` (the brand portal), the brand the perk must belong to: another brand's perk answers
 * PERK_NOT_FOUND, as an unknown one.
 */
export type PerkScope = { actor?: string | undefined; brandId?: string | undefined };

export interface PerkService {
  create(input: CreatePerkInput, options?: Pick<PerkScope, 'actor'>): Promise<Perk>;
  update(perkId: bigint, input: UpdatePerkInput, options?: PerkScope): Promise<Perk>;
  /** Archives (true) or restores (false) a perk: archived, it is in no catalogue and cannot be redeemed. */
  archive(perkId: bigint, archived: boolean, options?: PerkScope): Promise<Perk>;
  /** The brand's perks (all when no brand is given), oldest first. */
  list(brandId?: string): Promise<Perk[]>;
  get(perkId: bigint, options?: Pick<PerkScope, 'brandId'>): Promise<Perk>;
  /** The brand's latest redemptions of one perk, newest first. */
  redemptions(brandId: string, perkId: bigint): Promise<BrandRedemption[]>;
  /** The brand's public catalogue with live remaining supply. */
  catalogue(
    brandId: string,
    filter?: { category?: string | undefined; available?: boolean | undefined },
  ): Promise<PerkCatalogueItem[]>;
}

export function createPerkService(deps: PerkServiceDeps): PerkService {
  const as = (options: PerkScope = {}): PerkServiceDeps =>
    options.actor === undefined ? deps : { ...deps, actor: options.actor };
  return {
    create: (input, options) => createPerk(as(options), input),
    async update(perkId, input, options = {}) {
      if (options.brandId !== undefined) await getBrandPerk(deps, options.brandId, perkId);
      return updatePerk(as(options), perkId, input);
    },
    async archive(perkId, archived, options = {}) {
      if (options.brandId !== undefined) await getBrandPerk(deps, options.brandId, perkId);
      return archivePerk(as(options), perkId, archived);
    },
    list: (brandId) => listPerks(deps, brandId),
    get: (perkId, options = {}) =>
      options.brandId === undefined ? getPerk(deps, perkId) : getBrandPerk(deps, options.brandId, perkId),
    redemptions: (brandId, perkId) => listBrandRedemptions(deps.db, brandId, { perkId }),
    catalogue: (brandId, filter) => listCatalogue(deps, brandId, filter),
  };
}
