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

/** Quartiles of the brand's members' ledger balances and how many members hold at least each. */
export interface BalanceQuartiles {
  members: number;
  quartiles: { quantile: 0.25 | 0.5 | 0.75; balance: bigint; atLeast: number }[];
}

/**
 * Members of the brand (an accepted event there) and the 25th, 50th and 75th percentiles (`percentile_disc`:
 * an actual member's balance) of their ledger balances (accepted rewards network-wide − redemptions not
 * failed, floored at 0), with the number of members whose balance reaches each.
 */
export async function readBalanceQuartiles(db: Kysely<DB>, brandId: string, now: Date): Promise<BalanceQuartiles> {
  const result = await sql<{ n: number; p25: string; p50: string; p75: string; a25: number; a50: number; a75: number }>`
    WITH m AS (
      SELECT DISTINCT user_email AS k FROM events
       WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at < ${now} AND user_email NOT LIKE 'agent:%'),
    earned AS (
      SELECT user_email AS k, sum(reward_amount) AS s FROM events
       WHERE status = 'accepted' AND created_at < ${now} AND user_email IN (SELECT k FROM m)
       GROUP BY user_email),
    spent AS (
      SELECT user_key AS k, sum(cost) AS s FROM perk_redemptions
       WHERE status IN ('pending', 'confirmed') AND created_at < ${now} AND user_key IN (SELECT k FROM m)
       GROUP BY user_key),
    b AS (
      SELECT greatest(0, coalesce(earned.s, 0) - coalesce(spent.s, 0)) AS bal
        FROM m LEFT JOIN earned ON earned.k = m.k LEFT JOIN spent ON spent.k = m.k),
    q AS (
      SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY bal) AS p25,
             percentile_disc(0.5) WITHIN GROUP (ORDER BY bal) AS p50,
             percentile_disc(0.75) WITHIN GROUP (ORDER BY bal) AS p75
        FROM b)
    SELECT count(*)::int AS n, q.p25::text AS p25, q.p50::text AS p50, q.p75::text AS p75,
           count(*) FILTER (WHERE b.bal >= q.p25)::int AS a25,
           count(*) FILTER (WHERE b.bal >= q.p50)::int AS a50,
           count(*) FILTER (WHERE b.bal >= q.p75)::int AS a75
      FROM b CROSS JOIN q
     GROUP BY q.p25, q.p50, q.p75`.execute(db);
  const r = result.rows[0];
  if (!r || r.n === 0) return { members: 0, quartiles: [] };
  return {
    members: r.n,
    quartiles: [
      { quantile: 0.25, balance: BigInt(r.p25), atLeast: r.a25 },
      { quantile: 0.5, balance: BigInt(r.p50), atLeast: r.a50 },
      { quantile: 0.75, balance: BigInt(r.p75), atLeast: r.a75 },
    ],
  };
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
