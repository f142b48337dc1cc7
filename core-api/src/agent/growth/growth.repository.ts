import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { memberOfBrand, notAgent } from '../../modules/analytics/analytics.repository.ts';
import type { TimeWindow } from '../analytics/formulas.ts';

/**
 * SQL of the growth tools (docs/agent-api/growth.md): the activity of a category's brands over one window
 * (the ROI estimate's peers) and the growth leads table.
 */

/** One brand of the category over the window. Agent identities are left out, as in the analytics tools. */
export interface PeerActivity {
  brandId: string;
  /** Distinct members with an accepted event. */
  members: number;
  acceptedEvents: number;
  /** pts of accepted events. */
  ptsIssued: bigint;
  /** Distinct members active in the window with a pending or confirmed redemption there (members only). */
  redeemers: number;
  ptsRedeemed: bigint;
}

/** Every brand of `category` (active or not) with its activity in `[from, to)`; two grouped scans. */
export async function readCategoryActivity(
  db: Database,
  category: string,
  window: TimeWindow,
): Promise<PeerActivity[]> {
  const { from, to } = window;
  const result = await sql<{
    brand_id: string;
    members: number;
    events: number;
    issued: string;
    redeemers: number;
    redeemed: string;
  }>`
    SELECT b.address AS brand_id, coalesce(e.members, 0)::int AS members, coalesce(e.events, 0)::int AS events,
           coalesce(e.issued, 0)::text AS issued, coalesce(r.redeemers, 0)::int AS redeemers,
           coalesce(r.redeemed, 0)::text AS redeemed
      FROM brands b
      LEFT JOIN (SELECT brand_id, count(DISTINCT user_email) AS members, count(*) AS events,
                        sum(reward_amount) AS issued
                   FROM events
                  WHERE status = 'accepted' AND ${notAgent(sql.ref('user_email'))}
                    AND created_at >= ${from} AND created_at < ${to}
                  GROUP BY brand_id) e ON e.brand_id = b.address
      LEFT JOIN (SELECT brand_id, count(DISTINCT user_key) FILTER (WHERE active) AS redeemers, sum(cost) AS redeemed
                   FROM (SELECT r.brand_id, r.user_key, r.cost, ${memberOfBrand(to, from)} AS active
                           FROM perk_redemptions r
                          WHERE r.status IN ('pending', 'confirmed') AND ${notAgent(sql.ref('r.user_key'))}
                            AND r.created_at >= ${from} AND r.created_at < ${to}) x
                  GROUP BY brand_id) r ON r.brand_id = b.address
     WHERE b.category = ${category}
     ORDER BY b.address`.execute(db);
  return result.rows.map((r) => ({
    brandId: r.brand_id,
    members: r.members,
    acceptedEvents: r.events,
    ptsIssued: BigInt(r.issued),
    redeemers: r.redeemers,
    ptsRedeemed: BigInt(r.redeemed),
  }));
}

export interface GrowthLeadInput {
  businessName: string;
  /** Lower-cased. */
  contactEmail: string;
  website: string;
  industry: string;
}

export interface GrowthLead extends GrowthLeadInput {
  leadId: string;
  requestCount: number;
  createdAt: Date;
  lastRequestedAt: Date;
}

/**
 * Records a lead, or — when the same contact asked for the same business (case-insensitive) less than
 * `windowMs` ago — bumps that lead's count instead. A transaction-scoped advisory lock per contact email
 * makes two simultaneous identical requests one lead.
 */
export async function recordGrowthLead(
  db: Database,
  input: GrowthLeadInput,
  now: Date,
  windowMs: number,
): Promise<{ lead: GrowthLead; duplicate: boolean }> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`growth-lead:${input.contactEmail}`}, 0))`.execute(trx);
    const recent = await trx
      .selectFrom('growth_leads')
      .selectAll()
      .where('contact_email', '=', input.contactEmail)
      .where(sql<boolean>`lower(business_name) = lower(${input.businessName})`)
      .where('last_requested_at', '>', new Date(now.getTime() - windowMs))
      .orderBy('last_requested_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (recent) {
      const bumped = await trx
        .updateTable('growth_leads')
        .set({ request_count: sql`request_count + 1`, last_requested_at: now })
        .where('id', '=', recent.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { lead: toLead(bumped), duplicate: true };
    }
    const created = await trx
      .insertInto('growth_leads')
      .values({
        business_name: input.businessName,
        contact_email: input.contactEmail,
        website: input.website,
        industry: input.industry,
        created_at: now,
        last_requested_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { lead: toLead(created), duplicate: false };
  });
}

/** Leads, newest first, optionally created at or after `since`. */
export async function listGrowthLeads(db: Database, filter: { limit: number; since?: Date | undefined }) {
  let query = db.selectFrom('growth_leads').selectAll();
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map(toLead);
}

type LeadRow = {
  id: string;
  business_name: string;
  contact_email: string;
  website: string;
  industry: string;
  request_count: number;
  created_at: Date;
  last_requested_at: Date;
};

function toLead(row: LeadRow): GrowthLead {
  return {
    leadId: row.id,
    businessName: row.business_name,
    contactEmail: row.contact_email,
    website: row.website,
    industry: row.industry,
    requestCount: Number(row.request_count),
    createdAt: new Date(row.created_at),
    lastRequestedAt: new Date(row.last_requested_at),
  };
}
