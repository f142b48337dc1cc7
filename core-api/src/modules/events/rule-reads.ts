import { UNLIMITED, UNLIMITED_CLAIMS } from '@pts/shared';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isMemberKey } from '../accounts/member-keys.ts';
import type { RuleRecord } from './events.repository.ts';

/**
 * Reads of the brands' event rules for the surfaces that show or compare them (the agent's directory,
 * analytics, suggestions and onboarding): the event path reads the same rows through its cache
 * (brand-cache.ts), and they are written by modules/brands alone.
 */

/** For a query over `brands`: the number of the brand's active event rules (a correlated subquery). */
export function activeRuleCount(eb: ExpressionBuilder<DB, 'brands'>) {
  return eb
    .selectFrom('event_rules')
    .select((inner) => inner.fn.countAll<string>().as('n'))
    .whereRef('event_rules.brand_id', '=', 'brands.address')
    .where('event_rules.active', '=', true);
}

/**
 * The running claim totals of a brand's rules `ruleIds` (rule id → total): what is left of a capped rule moves
 * with every member's event, so it is read live while the rest of a rule comes from the brand cache.
 */
export async function readRuleTotals(db: Kysely<DB>, brandId: string, ruleIds: string[]): Promise<Map<string, number>> {
  if (ruleIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('event_rules')
    .select(['id', 'total_claims'])
    .where('brand_id', '=', brandId)
    .where('id', 'in', ruleIds)
    .execute();
  return new Map(rows.map((row) => [row.id, row.total_claims]));
}

/** The rules (active or not) of `brandIds`, by brand then event type; every brand gets a list. */
export async function readRulesOfBrands(db: Kysely<DB>, brandIds: string[]): Promise<Map<string, RuleRecord[]>> {
  const rules = new Map<string, RuleRecord[]>(brandIds.map((id) => [id, []]));
  if (brandIds.length === 0) return rules;
  const rows = await db
    .selectFrom('event_rules')
    .selectAll()
    .where('brand_id', 'in', brandIds)
    .orderBy('brand_id')
    .orderBy('event_type')
    .execute();
  for (const row of rows) rules.get(row.brand_id)?.push(row);
  return rules;
}

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

/**
 * Every active event rule of the network with its accepted events and distinct members over [from, to)
 * (agent identities left out: isMemberKey): what the agent's event suggestions compare.
 */
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
         WHERE status = 'accepted' AND created_at >= ${from} AND created_at < ${to} AND ${isMemberKey(sql.ref('user_email'))}
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
