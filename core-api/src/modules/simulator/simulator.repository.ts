import { type CurrencyCode, formatMinorUnits } from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { TIER_ENTRY_EVENT_TYPE } from '../tiers/tiers.repository.ts';
import type { ReplayCampaign, ReplayEvent } from './simulator-replay.ts';

/**
 * The simulator's reads (docs/simulator.md): the window's events page by page in the order they were judged,
 * and the state at the window's start (claim counters, tier bases) from the one ledger. Nothing is written.
 */

/** Where a page ends: the next page starts after this (created_at, refused, id). */
export interface ReplayCursor {
  createdAt: Date;
  refused: boolean;
  id: string;
}

interface EventRow {
  id: string;
  event_type: string;
  user_email: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  source: string | null;
  sent_by: string | null;
  metadata: Record<string, unknown> | string;
  reward_amount: string;
  value_minor: string | null;
  value_currency: string | null;
  external_id: string | null;
  created_at: Date;
}

/**
 * One page of the brand's events in [from, to], after `cursor`, in the order the judge saw them: by time, and
 * within one batch's instant the accepted before the refused (a refusal moves no counter, so the accepted of a
 * batch keep the claims they had), then by id. Each with its externalId, found by the key's event index.
 */
export async function readReplayPage(
  db: Database,
  query: { brandId: string; from: Date; to: Date; cursor: ReplayCursor | undefined; limit: number },
): Promise<{ events: ReplayEvent[]; cursor: ReplayCursor | undefined }> {
  const { brandId, from, to, cursor, limit } = query;
  // The plain `created_at >=` bound lets the (brand_id, created_at) index start each page at the cursor (the row
  // comparison alone, over an expression, is no index bound: every page would scan the window from its start).
  const after = cursor
    ? sql`AND e.created_at >= ${cursor.createdAt}
          AND (e.created_at, e.status <> 'accepted', e.id) > (${cursor.createdAt}, ${cursor.refused}, ${cursor.id}::uuid)`
    : sql``;
  const result = await sql<EventRow>`
    SELECT e.id, e.event_type, e.user_email, e.status, e.reason, e.source, e.sent_by, e.metadata,
           e.reward_amount::text AS reward_amount, e.value_minor::text AS value_minor, e.value_currency,
           x.external_id, e.created_at
      FROM events e
      LEFT JOIN event_external_ids x ON x.event_id = e.id AND x.brand_id = e.brand_id
     WHERE e.brand_id = ${brandId} AND e.created_at >= ${from} AND e.created_at <= ${to} ${after}
     ORDER BY e.created_at, e.status <> 'accepted', e.id
     LIMIT ${limit}`.execute(db);
  const events = result.rows.map(toReplayEvent);
  const last = events[events.length - 1];
  return {
    events,
    cursor:
      last && events.length === limit
        ? { createdAt: last.createdAt, refused: last.status !== 'accepted', id: last.id }
        : undefined,
  };
}

function toReplayEvent(row: EventRow): ReplayEvent {
  const valueMinor = row.value_minor === null ? null : BigInt(row.value_minor);
  return {
    id: row.id,
    eventType: row.event_type,
    member: row.user_email,
    status: row.status,
    reason: row.reason,
    source: row.source,
    sentBy: row.sent_by,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : (row.metadata ?? {}),
    rewardAmount: BigInt(row.reward_amount),
    value:
      valueMinor !== null && row.value_currency
        ? {
            amount: formatMinorUnits(valueMinor, row.value_currency as CurrencyCode),
            currency: row.value_currency as CurrencyCode,
          }
        : undefined,
    valueMinor,
    externalId: row.external_id ?? undefined,
    createdAt: new Date(row.created_at),
  };
}

/**
 * The claim counters at `before`, from the accepted events before it: per member and event type, and per member
 * and campaign (`campaign:<id>`, signed events naming a campaign) — what the batcher's counters held then.
 */
export async function readCountersBefore(
  db: Database,
  brandId: string,
  before: Date,
): Promise<{ member: string; eventType: string; claims: number; lastClaimAt: Date }[]> {
  const result = await sql<{
    user_email: string;
    event_type: string;
    campaign_id: string | null;
    claims: number;
    last_claim_at: Date;
  }>`
    SELECT user_email, event_type,
           CASE WHEN sent_by IS NOT NULL THEN metadata->>'campaign_id' END AS campaign_id,
           count(*)::int AS claims, max(created_at) AS last_claim_at
      FROM events
     WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at < ${before}
     GROUP BY 1, 2, 3`.execute(db);
  const counters = new Map<string, { member: string; eventType: string; claims: number; lastClaimAt: Date }>();
  const add = (member: string, eventType: string, claims: number, at: Date) => {
    const key = `${member}\u0000${eventType}`;
    const counter = counters.get(key);
    if (!counter) counters.set(key, { member, eventType, claims, lastClaimAt: at });
    else {
      counter.claims += claims;
      if (at > counter.lastClaimAt) counter.lastClaimAt = at;
    }
  };
  for (const row of result.rows) {
    const at = new Date(row.last_claim_at);
    add(row.user_email, row.event_type, row.claims, at);
    if (row.campaign_id) add(row.user_email, `campaign:${row.campaign_id}`, row.claims, at);
  }
  return [...counters.values()];
}

/** Each member's tier bases over [since, before): pts earned and value spent (entry rewards left out). */
export async function readTierBasesBefore(
  db: Database,
  brandId: string,
  since: Date,
  before: Date,
): Promise<Map<string, { earned: bigint; spent: bigint }>> {
  const result = await sql<{ user_email: string; earned: string; spent: string }>`
    SELECT user_email, coalesce(sum(reward_amount), 0)::text AS earned, coalesce(sum(value_minor), 0)::text AS spent
      FROM events
     WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at >= ${since} AND created_at < ${before}
       AND event_type <> ${TIER_ENTRY_EVENT_TYPE}
     GROUP BY user_email`.execute(db);
  return new Map(result.rows.map((r) => [r.user_email, { earned: BigInt(r.earned), spent: BigInt(r.spent) }]));
}

/** The brand's hashtag campaigns, by id. */
export async function readBrandCampaigns(db: Database, brandId: string): Promise<Map<string, ReplayCampaign>> {
  const rows = await db
    .selectFrom('hashtag_campaigns')
    .select(['id', 'reward', 'reward_multiplier', 'max_claims_per_user', 'start_date', 'end_date'])
    .where('brand_id', '=', brandId)
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        reward: row.reward,
        rewardMultiplier: row.reward_multiplier === null ? null : Number(row.reward_multiplier),
        maxClaimsPerUser: row.max_claims_per_user,
        startDate: new Date(row.start_date),
        endDate: new Date(row.end_date),
      },
    ]),
  );
}
