import { UNLIMITED, UNLIMITED_CLAIMS } from '@pts/shared';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/**
 * Aggregate SQL of the suggestion tools (docs/agent-api/intelligence.md, "Suggestions"): what brands
 * configured and how members used it, in a fixed number of grouped queries. Agent identities excluded.
 */

/** One active event rule of a brand with its accepted events and distinct members in the window. */
export interface RuleEngagement {
  brandId: string;
  eventType: string;
  rewardAmount: number;
  cooldownHours: number;
  maxClaims: number;
  events: number;
  members: number;
}

/** Every active event rule of the network with its engagement over [from, to). */
export async function readRuleEngagement(db: Kysely<DB>, from: Date, to: Date): Promise<RuleEngagement[]> {
  const result = await sql<{
    brand_id: string;
    event_type: string;
    reward: string;
    cooldown: number;
    max_claims: number;
    events: number;
    members: number;
  }>`
    SELECT r.brand_id, r.event_type, r.reward_amount::text AS reward, r.cooldown_hours AS cooldown,
           r.max_claims_per_user AS max_claims, coalesce(e.events, 0)::int AS events,
           coalesce(e.members, 0)::int AS members
      FROM event_rules r
      LEFT JOIN (
        SELECT brand_id, event_type, count(*) AS events, count(DISTINCT user_email) AS members FROM events
         WHERE status = 'accepted' AND created_at >= ${from} AND created_at < ${to} AND user_email NOT LIKE 'agent:%'
         GROUP BY brand_id, event_type) e ON e.brand_id = r.brand_id AND e.event_type = r.event_type
     WHERE r.active
     ORDER BY r.brand_id, r.event_type`.execute(db);
  return result.rows.map((r) => ({
    brandId: r.brand_id,
    eventType: r.event_type,
    rewardAmount: Number(r.reward),
    cooldownHours: r.cooldown,
    // Unlimited as every agent tool takes it on input (a rule may store either sentinel of the spec).
    maxClaims: (UNLIMITED_CLAIMS as readonly number[]).includes(r.max_claims) ? UNLIMITED : r.max_claims,
    events: r.events,
    members: r.members,
  }));
}

/** One perk category across the network's active perks. */
export interface CategoryPerformance {
  category: string;
  perks: number;
  brands: number;
  redemptions: number;
  /** Lower median cost of the category's active perks. */
  medianCost: bigint;
  /** The asking brand has an active perk in it. */
  brandHas: boolean;
}

/** Active perks per category with their redemptions (pending or confirmed) over [from, to). */
export async function readCategoryPerformance(
  db: Kysely<DB>,
  brandId: string,
  from: Date,
  to: Date,
): Promise<CategoryPerformance[]> {
  const result = await sql<{
    category: string;
    perks: number;
    brands: number;
    redemptions: number;
    median_cost: string;
    brand_has: boolean;
  }>`
    SELECT p.category, count(*)::int AS perks, count(DISTINCT p.brand_id)::int AS brands,
           coalesce(sum(r.n), 0)::int AS redemptions,
           (percentile_disc(0.5) WITHIN GROUP (ORDER BY p.cost))::text AS median_cost,
           bool_or(p.brand_id = ${brandId}) AS brand_has
      FROM perks p
      LEFT JOIN (
        SELECT perk_id, count(*) AS n FROM perk_redemptions
         WHERE status IN ('pending', 'confirmed') AND created_at >= ${from} AND created_at < ${to}
           AND user_key NOT LIKE 'agent:%'
         GROUP BY perk_id) r ON r.perk_id = p.id
     WHERE p.active
     GROUP BY p.category`.execute(db);
  return result.rows.map((r) => ({
    category: r.category,
    perks: r.perks,
    brands: r.brands,
    redemptions: r.redemptions,
    medianCost: BigInt(r.median_cost),
    brandHas: Boolean(r.brand_has),
  }));
}
