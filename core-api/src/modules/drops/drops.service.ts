import { randomBytes, randomUUID } from 'node:crypto';
import {
  AppError,
  type ClaimDropRequest,
  type ClaimDropResponse,
  type Clock,
  type CreateDropRequest,
  type Drop,
  type EventRequest,
  isAppError,
  ruleInputSchema,
  type UpdateDropRequest,
  windowStatusAt,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { brandNotFound, requireBrandExists, setRule } from '../brands/brands.service.ts';
import { type EventService, restateAward, type ServerAward } from '../events/events.service.ts';

/** The event type drop claims are recorded and minted as; its amount is ignored (the drop's applies). */
export const DROP_CLAIM_EVENT_TYPE = 'drop_claim';

export interface DropDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  events: EventService;
  secrets: SecretBox;
  changes: ChangeNotifier;
  /**
   * Who the brand's audit log names for a drop change: `brand-key` (default: the brand-signed
   * `/services/drops/create`, the MCP `create_drop`) or `portal:<email>`.
   */
  actor?: string;
}

interface DropRow {
  id: string;
  brand_id: string;
  name: string;
  amount: bigint;
  total_supply: number;
  claimed: number;
  per_user_limit: number;
  starts_at: Date;
  ends_at: Date;
}

/** A drop as answered at `now` (the server's clock): its status is the one window rule the claims obey. */
function toDrop(row: DropRow, now: Date): Drop {
  return {
    dropId: row.id,
    brandId: row.brand_id,
    name: row.name,
    amount: Number(row.amount),
    totalSupply: row.total_supply,
    claimed: row.claimed,
    remaining: row.total_supply - row.claimed,
    perUserLimit: row.per_user_limit,
    startsAt: row.starts_at.toISOString(),
    endsAt: row.ends_at.toISOString(),
    status: dropStatus(row, now),
  };
}

/** Where the drop's claim window stands at `now`: scheduled, active or ended (shared/src/rules/windows.ts). */
function dropStatus(row: Pick<DropRow, 'starts_at' | 'ends_at'>, now: Date) {
  return windowStatusAt({ startsAt: row.starts_at, endsAt: row.ends_at }, now);
}

function claimFailed(message: string, reason: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('CLAIM_FAILED', message, { reason, ...details });
}

/**
 * `POST /services/drops/create`: stores the drop and makes sure the brand has an active `drop_claim` rule
 * (reward 0, no cooldown, unlimited claims: the drop's own supply and per-user limit govern), so claims go
 * through the event pipeline like every other reward.
 */
export async function createDrop(deps: DropDeps, input: CreateDropRequest): Promise<Drop> {
  const cached = await deps.events.brands.get(input.brandId);
  if (!cached) throw brandNotFound(input.brandId);
  const now = deps.clock.now();
  const startsAt = input.startsAt ? new Date(input.startsAt) : now;
  const endsAt = new Date(input.endsAt);
  if (endsAt.getTime() <= startsAt.getTime()) {
    throw new AppError('VALIDATION_ERROR', 'endsAt must be after startsAt (or after now when startsAt is absent)', {
      field: 'endsAt',
    });
  }
  if (endsAt.getTime() <= now.getTime()) {
    throw new AppError('VALIDATION_ERROR', 'endsAt is in the past: a drop must end in the future', { field: 'endsAt' });
  }
  if (!cached.rulesByType.get(DROP_CLAIM_EVENT_TYPE)?.active) {
    await setRule(
      { db: deps.db, secrets: deps.secrets, clock: deps.clock, changes: deps.changes, actor: 'drops' },
      input.brandId,
      ruleInputSchema.parse({ eventType: DROP_CLAIM_EVENT_TYPE, rewardAmount: 0, cooldownHours: 0, maxClaims: -1 }),
    );
  }
  const row = await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('drops')
      .values({
        id: `drop_${randomBytes(8).toString('hex')}`,
        brand_id: cached.brand.address,
        name: input.name,
        amount: BigInt(input.amount),
        total_supply: input.totalSupply,
        per_user_limit: input.perUserLimit,
        starts_at: startsAt,
        ends_at: endsAt,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const { brandId: _brand, ...details } = input;
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'brand-key',
      action: 'drop.create',
      subject: row.id,
      brandId: row.brand_id,
      details: { ...details, startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString() },
      at: now,
    });
    return row;
  });
  return toDrop(row, now);
}

/** What changing or ending a drop needs: no reward path, only the row, the clock and the audit actor. */
export type DropChangeDeps = Pick<DropDeps, 'db' | 'clock' | 'actor'>;

const dropConflict = (message: string, details: Record<string, unknown> = {}) =>
  new AppError('CONFLICT', message, details);

/** The brand's drop under its row lock (claims wait behind it), or 404. */
async function lockDrop(trx: Database, brandId: string, dropId: string): Promise<DropRow> {
  const row = await trx
    .selectFrom('drops')
    .selectAll()
    .where('id', '=', dropId)
    .where('brand_id', '=', brandId.toLowerCase())
    .forUpdate()
    .executeTakeFirst();
  if (!row) {
    throw new AppError('NOT_FOUND', `No drop ${dropId} for brand ${brandId}; list the brand's drops first`, {
      field: 'dropId',
      value: dropId,
    });
  }
  return row;
}

/** The merged window and amount of an update, or the reason it is not safe (docs/portal.md, "Changing a drop"). */
function checkDropUpdate(row: DropRow, input: UpdateDropRequest, now: Date) {
  if (dropStatus(row, now) === 'ended') {
    throw dropConflict(`The drop ended at ${row.ends_at.toISOString()}: an ended drop cannot be changed`, {
      reason: 'ended',
    });
  }
  if (input.amount !== undefined && input.amount !== Number(row.amount) && row.claimed > 0) {
    throw new AppError(
      'CONFLICT',
      `amount cannot change once the drop is claimed (${row.claimed} claimed at ${row.amount} pts): end it and create a new one`,
      { field: 'amount', reason: 'claimed' },
    );
  }
  const startsAt = input.startsAt !== undefined ? new Date(input.startsAt) : row.starts_at;
  if (startsAt.getTime() !== row.starts_at.getTime() && dropStatus(row, now) !== 'scheduled') {
    throw new AppError('CONFLICT', `startsAt cannot change: the drop opened at ${row.starts_at.toISOString()}`, {
      field: 'startsAt',
      reason: 'started',
    });
  }
  const endsAt = input.endsAt !== undefined ? new Date(input.endsAt) : row.ends_at;
  if (endsAt.getTime() <= now.getTime()) {
    throw new AppError('VALIDATION_ERROR', 'endsAt is in the past: to end the drop now, use End now', {
      field: 'endsAt',
    });
  }
  if (endsAt.getTime() <= startsAt.getTime()) {
    throw new AppError('VALIDATION_ERROR', 'endsAt must be after startsAt', { field: 'endsAt' });
  }
  const totalSupply = input.totalSupply ?? row.total_supply;
  if (totalSupply < row.claimed) {
    throw new AppError('VALIDATION_ERROR', `totalSupply must be at least ${row.claimed}, the units already claimed`, {
      field: 'totalSupply',
    });
  }
  return { startsAt, endsAt, totalSupply };
}

/**
 * Changes a drop (portal, `PATCH /admin/brands/:brandId/drops/:dropId`, `pts drop update`) under its row lock,
 * so a concurrent claim sees either the old or the new drop. Only what is safe changes: an ended drop not at
 * all, the amount only before the first claim, the start only before it opens, the supply never below what is
 * claimed. Audited as `drop.update` with the fields changed and their previous values.
 */
export async function updateDrop(
  deps: DropChangeDeps,
  brandId: string,
  dropId: string,
  input: UpdateDropRequest,
): Promise<Drop> {
  const now = deps.clock.now();
  const row = await deps.db.transaction().execute(async (trx) => {
    const before = await lockDrop(trx, brandId, dropId);
    const { startsAt, endsAt, totalSupply } = checkDropUpdate(before, input, now);
    const row = await trx
      .updateTable('drops')
      .set({
        name: input.name ?? before.name,
        amount: input.amount !== undefined ? BigInt(input.amount) : before.amount,
        total_supply: totalSupply,
        per_user_limit: input.perUserLimit ?? before.per_user_limit,
        starts_at: startsAt,
        ends_at: endsAt,
      })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const previous = toDrop(before, now);
    const after = toDrop(row, now);
    const fields = ['name', 'amount', 'totalSupply', 'perUserLimit', 'startsAt', 'endsAt'] as const;
    const changed = fields.filter((field) => previous[field] !== after[field]);
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'drop.update',
      subject: row.id,
      brandId: row.brand_id,
      details: {
        ...Object.fromEntries(changed.map((field) => [field, after[field]])),
        previous: Object.fromEntries(changed.map((field) => [field, previous[field]])),
      },
      at: now,
    });
    return row;
  });
  return toDrop(row, now);
}

/**
 * Ends a drop now (the portal's _End now_, `POST …/drops/:dropId/end`, `pts drop end`): claims from this
 * moment are refused as `ended`; what was claimed stays paid. A drop that has not opened yet ends unopened.
 * 409 for a drop that already ended. Audited as `drop.end` with the end it had.
 */
export async function endDrop(deps: DropChangeDeps, brandId: string, dropId: string): Promise<Drop> {
  const now = deps.clock.now();
  const row = await deps.db.transaction().execute(async (trx) => {
    const before = await lockDrop(trx, brandId, dropId);
    if (dropStatus(before, now) === 'ended') {
      throw dropConflict(`The drop already ended at ${before.ends_at.toISOString()}`, { reason: 'ended' });
    }
    // ends_at > starts_at is a table constraint: an unopened drop's window shrinks to the moment before now.
    const startsAt = before.starts_at < now ? before.starts_at : new Date(now.getTime() - 1);
    const row = await trx
      .updateTable('drops')
      .set({ starts_at: startsAt, ends_at: now })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'drop.end',
      subject: row.id,
      brandId: row.brand_id,
      details: { endsAt: now.toISOString(), previous: { endsAt: before.ends_at.toISOString() }, claimed: row.claimed },
      at: now,
    });
    return row;
  });
  return toDrop(row, now);
}

/** The brand's drops, newest first (at most `limit`), with what is claimed and left. */
export async function listDrops(db: Database, brandId: string, now: Date, limit = 200): Promise<Drop[]> {
  const rows = await db
    .selectFrom('drops')
    .selectAll()
    .where('brand_id', '=', brandId.toLowerCase())
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => toDrop(row, now));
}

/** The brand a drop belongs to (a drop id is unique across brands), or undefined for an unknown id. */
export async function findDropBrand(db: Database, dropId: string): Promise<string | undefined> {
  const row = await db.selectFrom('drops').select('brand_id').where('id', '=', dropId).executeTakeFirst();
  return row?.brand_id;
}

/**
 * `POST /services/drops/claim`. The claim is reserved behind the drop's row lock (window, supply and the
 * user's limit checked and the counter moved in one transaction), so concurrent claims never exceed either;
 * the reward then goes through the event pipeline (ledger, wallet, mint). If a rule of the brand refuses the
 * reward, the reservation is released.
 */
export async function claimDrop(deps: DropDeps, input: ClaimDropRequest): Promise<ClaimDropResponse> {
  const accountKey = await resolveAccountKey(deps.db, input.userIdentifier);
  const eventId = randomUUID();
  const eventInput: EventRequest = {
    brandId: input.brandId,
    eventType: DROP_CLAIM_EVENT_TYPE,
    userEmail: input.userIdentifier,
    metadata: { ...input.metadata, source: 'drop_claim', dropId: input.dropId },
  };
  // The pipeline's lock-free checks (brand, automation, rule) before anything is reserved; the amount is
  // the drop's, known once the drop row is read.
  const award: ServerAward = { kind: 'server', input: eventInput, eventId, amount: 0n };
  await deps.events.checkAward(award);
  const now = deps.clock.now();

  const reserved = await deps.db.transaction().execute(async (trx) => {
    const drop = await trx
      .selectFrom('drops')
      .selectAll()
      .where('id', '=', input.dropId)
      .where('brand_id', '=', input.brandId)
      .forUpdate()
      .executeTakeFirst();
    if (!drop)
      throw new AppError('NOT_FOUND', `Drop ${input.dropId} does not exist for this brand`, { field: 'dropId' });
    const status = dropStatus(drop, now);
    if (status === 'scheduled') {
      throw claimFailed(`The drop opens at ${drop.starts_at.toISOString()}`, 'not_started', {
        startsAt: drop.starts_at.toISOString(),
      });
    }
    if (status === 'ended') {
      throw claimFailed(`The drop ended at ${drop.ends_at.toISOString()}`, 'ended', {
        endsAt: drop.ends_at.toISOString(),
      });
    }
    if (drop.claimed >= drop.total_supply) {
      throw new AppError('SOLD_OUT', 'Every unit of this drop has been claimed', { totalSupply: drop.total_supply });
    }
    const mine = await trx
      .selectFrom('drop_claims')
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('seq').as('last')])
      .where('drop_id', '=', drop.id)
      .where('user_key', '=', accountKey)
      .executeTakeFirstOrThrow();
    const count = Number(mine.n);
    if (count >= drop.per_user_limit) {
      // A unit reserved by a process that died before recording its reward is paid now, not refused.
      const orphan = await findOrphanClaim(trx, drop.id, accountKey, now);
      if (orphan) return { drop, remaining: drop.total_supply - drop.claimed, eventId: orphan };
      throw claimFailed(
        `This user already claimed this drop ${count} time(s); the limit is ${drop.per_user_limit}`,
        'already_claimed',
        { perUserLimit: drop.per_user_limit },
      );
    }
    await trx
      .insertInto('drop_claims')
      // After the last seq, not the count: a released claim leaves a gap.
      .values({
        drop_id: drop.id,
        user_key: accountKey,
        seq: Number(mine.last ?? 0) + 1,
        event_id: eventId,
        claimed_at: now,
      })
      .execute();
    await trx
      .updateTable('drops')
      .set((eb) => ({ claimed: eb('claimed', '+', 1) }))
      .where('id', '=', drop.id)
      .execute();
    return { drop, remaining: drop.total_supply - drop.claimed - 1, eventId };
  });

  let paid: Awaited<ReturnType<EventService['award']>>;
  try {
    paid = await deps.events.award(
      restateAward(award, { eventId: reserved.eventId, amount: BigInt(reserved.drop.amount) }),
    );
  } catch (error) {
    // A re-driven unit whose original event committed meanwhile: the events key let only one through.
    if (reserved.eventId !== eventId && isUniqueViolation(error)) {
      throw claimFailed('This claim was already paid', 'already_claimed', {
        perUserLimit: reserved.drop.per_user_limit,
      });
    }
    await releaseClaim(deps.db, reserved.drop.id, reserved.eventId);
    if (isAppError(error)) deps.logger.info({ dropId: reserved.drop.id, code: error.code }, 'drop reward refused');
    throw error;
  }
  const completed = await deps.events.completeEvent(paid);
  return {
    success: true,
    dropId: reserved.drop.id,
    amount: paid.rewardAmount,
    remaining: reserved.remaining,
    eventId: paid.eventId,
    walletAddress: paid.walletAddress,
    ...(completed.transactionHash ? { transactionHash: completed.transactionHash } : {}),
    mintStatus: completed.mintStatus,
  };
}

/**
 * A claim row commits before its reward event (two transactions). If the process died in between, the
 * unit stays reserved with no event; the user's next claim finds it (once it is this old, so a merely slow
 * original is not raced) and pays it with the same event id, so the events primary key lets only one of
 * the two commit. Nothing is lost and nothing is paid twice.
 */
export const DROP_REDRIVE_AFTER_MS = 30_000;

/** The user's oldest reserved unit of this drop that has no event and is old enough to re-drive. */
async function findOrphanClaim(
  trx: Database,
  dropId: string,
  accountKey: string,
  now: Date,
): Promise<string | undefined> {
  const row = await trx
    .selectFrom('drop_claims')
    .select('drop_claims.event_id')
    .where('drop_claims.drop_id', '=', dropId)
    .where('drop_claims.user_key', '=', accountKey)
    .where('drop_claims.claimed_at', '<=', new Date(now.getTime() - DROP_REDRIVE_AFTER_MS))
    .where(({ not, exists, selectFrom }) =>
      // events.id is a uuid, drop_claims.event_id its text (always a uuid): cast so the primary key is used.
      not(
        exists(
          selectFrom('events').select('events.id').where('events.id', '=', sql<string>`drop_claims.event_id::uuid`),
        ),
      ),
    )
    .orderBy('drop_claims.seq')
    .executeTakeFirst();
  return row?.event_id;
}

/** Gives a reserved unit back (its reward was refused or failed before it was recorded). */
async function releaseClaim(db: Database, dropId: string, eventId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const removed = await trx.deleteFrom('drop_claims').where('event_id', '=', eventId).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) return;
    await trx
      .updateTable('drops')
      .set((eb) => ({ claimed: eb('claimed', '-', 1) }))
      .where('id', '=', dropId)
      .execute();
  });
}

/**
 * Drops (docs/compatibility.md): the brand-signed create and claim of `/services/drops`, the admin API's list,
 * change and end (audited as `admin`), and the brand portal's (audited as the portal user).
 */
export interface DropService {
  /** Also creates the brand's `drop_claim` rule when it has no active one. */
  create(input: CreateDropRequest, options?: DropActor): Promise<Drop>;
  claim(input: ClaimDropRequest): Promise<ClaimDropResponse>;
  /** The brand's drops, newest first, with what is claimed and left, or BRAND_NOT_FOUND. */
  list(brandId: string): Promise<Drop[]>;
  update(brandId: string, dropId: string, input: UpdateDropRequest, options?: DropActor): Promise<Drop>;
  end(brandId: string, dropId: string, options?: DropActor): Promise<Drop>;
}

/** Who the audit log names for one change: a portal user (`portal:<email>`); the deps' actor when absent. */
export type DropActor = { actor?: string | undefined };

export function createDropService(deps: DropDeps): DropService {
  const as = (options: DropActor = {}): DropDeps =>
    options.actor === undefined ? deps : { ...deps, actor: options.actor };
  return {
    create: (input, options) => createDrop(as(options), input),
    claim: (input) => claimDrop(deps, input),
    list: async (brandId) => {
      await requireBrandExists(deps.db, brandId);
      return listDrops(deps.db, brandId, deps.clock.now());
    },
    update: (brandId, dropId, input, options) => updateDrop(as(options), brandId, dropId, input),
    end: (brandId, dropId, options) => endDrop(as(options), brandId, dropId),
  };
}
