import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/**
 * SQL of the growth tools (docs/agent-api/growth.md): the growth leads table. The activity of a category's
 * brands (the ROI estimate's peers) is brand analytics: modules/analytics readCategoryActivity.
 */

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
