import { randomUUID } from 'node:crypto';
import {
  AppError,
  type Campaign,
  type Clock,
  type CreateCampaignRequest,
  type UpdateCampaignRequest,
  windowStatusAt,
} from '@pts/shared';
import type { Kysely, Selectable } from 'kysely';
import type { DB, HashtagCampaignsTable } from '../../db/schema.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { requireBrandExists } from '../brands/brands.service.ts';

type CampaignRow = Selectable<HashtagCampaignsTable>;

export interface CampaignDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** Who the audit log names for campaign changes (default `admin`: the admin token, the CLI). */
  actor?: string;
}

const DEFAULT_MAX_CLAIMS_PER_USER = 1;

/** Creates a hashtag campaign for the brand (input already validated: one reward kind, end after start). */
export async function createCampaign(
  deps: CampaignDeps,
  brandId: string,
  input: CreateCampaignRequest,
): Promise<Campaign> {
  await requireBrandExists(deps.db, brandId);
  const now = deps.clock.now();
  const row = await deps.db
    .insertInto('hashtag_campaigns')
    .values({
      id: randomUUID(),
      brand_id: brandId,
      hashtag: input.hashtag,
      reward: input.reward ?? null,
      reward_multiplier: input.rewardMultiplier ?? null,
      start_date: new Date(input.startDate),
      end_date: new Date(input.endDate),
      max_claims_per_user: input.maxClaimsPerUser ?? DEFAULT_MAX_CLAIMS_PER_USER,
      exclude_brand_posts: input.excludeBrandPosts ?? true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await auditCampaign(deps, brandId, 'campaign.create', row.id, { ...input });
  return toCampaign(row, deps.clock.now());
}

/** A campaign change in the brand's audit log. */
function auditCampaign(
  deps: CampaignDeps,
  brandId: string,
  action: string,
  campaignId: string,
  details: Record<string, unknown>,
) {
  return insertAuditEntry(deps.db, {
    actor: deps.actor ?? 'admin',
    action,
    subject: campaignId,
    brandId,
    details,
    at: deps.clock.now(),
  });
}

/** The brand's campaigns, newest start first. */
export async function listCampaigns(deps: CampaignDeps, brandId: string): Promise<Campaign[]> {
  await requireBrandExists(deps.db, brandId);
  const rows = await deps.db
    .selectFrom('hashtag_campaigns')
    .selectAll()
    .where('brand_id', '=', brandId)
    .orderBy('start_date', 'desc')
    .orderBy('id')
    .execute();
  const now = deps.clock.now();
  return rows.map((row) => toCampaign(row, now));
}

/** One campaign of the brand, or 404. */
export async function getCampaign(deps: CampaignDeps, brandId: string, campaignId: string): Promise<Campaign> {
  return toCampaign(await findCampaign(deps.db, brandId, campaignId), deps.clock.now());
}

/**
 * Changes some fields; the merged campaign must still have exactly one reward kind and end after it starts
 * (setting `reward` clears `rewardMultiplier` and the other way round unless both are given).
 */
export async function updateCampaign(
  deps: CampaignDeps,
  brandId: string,
  campaignId: string,
  input: UpdateCampaignRequest,
): Promise<Campaign> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const existing = await findCampaign(trx, brandId, campaignId, true);
    let reward = existing.reward;
    let multiplier = existing.reward_multiplier;
    if (input.reward !== undefined) {
      reward = input.reward;
      if (input.rewardMultiplier === undefined && input.reward !== null) multiplier = null;
    }
    if (input.rewardMultiplier !== undefined) {
      multiplier = input.rewardMultiplier;
      if (input.reward === undefined && input.rewardMultiplier !== null) reward = null;
    }
    if ((reward === null) === (multiplier === null)) {
      throw new AppError('VALIDATION_ERROR', 'Invalid request body: give exactly one of reward and rewardMultiplier', {
        errors: ['reward: give exactly one of reward and rewardMultiplier'],
        field: 'reward',
      });
    }
    const start = input.startDate !== undefined ? new Date(input.startDate) : existing.start_date;
    const end = input.endDate !== undefined ? new Date(input.endDate) : existing.end_date;
    if (end.getTime() <= start.getTime()) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Invalid request body: endDate (${end.toISOString()}) must be after startDate (${start.toISOString()})`,
        { errors: ['endDate: must be after startDate'], field: 'endDate' },
      );
    }
    return trx
      .updateTable('hashtag_campaigns')
      .set({
        hashtag: input.hashtag ?? existing.hashtag,
        reward,
        reward_multiplier: multiplier,
        start_date: start,
        end_date: end,
        max_claims_per_user: input.maxClaimsPerUser ?? existing.max_claims_per_user,
        exclude_brand_posts: input.excludeBrandPosts ?? existing.exclude_brand_posts,
        updated_at: deps.clock.now(),
      })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  await auditCampaign(deps, brandId, 'campaign.update', row.id, { ...input });
  return toCampaign(row, deps.clock.now());
}

/**
 * Ends a campaign now by the server's clock (the portal's _End now_, `POST …/campaigns/:campaignId/end`):
 * posts from this moment earn nothing. A campaign that has not started yet ends unstarted. 409 for a campaign
 * that already ended. Audited as `campaign.end` with the end it had.
 */
export async function endCampaign(deps: CampaignDeps, brandId: string, campaignId: string): Promise<Campaign> {
  const now = deps.clock.now();
  const { row, previous } = await deps.db.transaction().execute(async (trx) => {
    const existing = await findCampaign(trx, brandId, campaignId, true);
    if (windowStatusAt({ startsAt: existing.start_date, endsAt: existing.end_date }, now) === 'ended') {
      throw new AppError('CONFLICT', `The campaign already ended at ${existing.end_date.toISOString()}`, {
        reason: 'ended',
      });
    }
    // The end stays after the start: an unstarted campaign's window shrinks to the moment before now.
    const start = existing.start_date < now ? existing.start_date : new Date(now.getTime() - 1);
    const row = await trx
      .updateTable('hashtag_campaigns')
      .set({ start_date: start, end_date: now, updated_at: now })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, previous: existing.end_date };
  });
  await auditCampaign(deps, brandId, 'campaign.end', row.id, {
    endDate: now.toISOString(),
    previous: { endDate: previous.toISOString() },
  });
  return toCampaign(row, now);
}

/**
 * Campaigns active at `at` (spec 3): a campaign becomes active when time reaches `start_date` and inactive
 * when time reaches `end_date`: the one window rule of drops and perks (`shared/src/rules/windows.ts`).
 */
export async function activeCampaigns(deps: CampaignDeps, brandId: string, at: Date): Promise<Campaign[]> {
  await requireBrandExists(deps.db, brandId);
  const rows = await deps.db
    .selectFrom('hashtag_campaigns')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('start_date', '<=', at)
    .where('end_date', '>', at)
    .orderBy('start_date')
    .orderBy('id')
    .execute();
  const now = deps.clock.now();
  return rows.map((row) => toCampaign(row, now));
}

/** Campaigns whose window [start, end) overlaps [from, to], oldest start first. */
export async function campaignsOverlapping(
  deps: CampaignDeps,
  brandId: string,
  from: Date,
  to: Date,
): Promise<Campaign[]> {
  await requireBrandExists(deps.db, brandId);
  const rows = await deps.db
    .selectFrom('hashtag_campaigns')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('start_date', '<=', to)
    .where('end_date', '>', from)
    .orderBy('start_date')
    .orderBy('id')
    .execute();
  const now = deps.clock.now();
  return rows.map((row) => toCampaign(row, now));
}

/** One campaign of the brand, or undefined (the event path's campaign reward). */
export async function findBrandCampaign(
  db: Kysely<DB>,
  brandId: string,
  campaignId: string,
  now: Date,
): Promise<Campaign | undefined> {
  const row = await db
    .selectFrom('hashtag_campaigns')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('id', '=', campaignId)
    .executeTakeFirst();
  return row ? toCampaign(row, now) : undefined;
}

async function findCampaign(db: Kysely<DB>, brandId: string, campaignId: string, lock = false): Promise<CampaignRow> {
  let query = db
    .selectFrom('hashtag_campaigns')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('id', '=', campaignId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) {
    await requireBrandExists(db, brandId);
    throw new AppError('NOT_FOUND', `No campaign ${campaignId} for brand ${brandId}; list them with GET …/campaigns`, {
      field: 'campaignId',
      value: campaignId,
    });
  }
  return row;
}

/** A campaign as answered, with its status by the server's clock at `now`. */
function toCampaign(row: CampaignRow, now: Date): Campaign {
  return {
    id: row.id,
    brandId: row.brand_id,
    hashtag: row.hashtag,
    reward: row.reward,
    rewardMultiplier: row.reward_multiplier === null ? null : Number(row.reward_multiplier),
    startDate: row.start_date.toISOString(),
    endDate: row.end_date.toISOString(),
    status: windowStatusAt({ startsAt: row.start_date, endsAt: row.end_date }, now),
    maxClaimsPerUser: row.max_claims_per_user,
    excludeBrandPosts: row.exclude_brand_posts,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
