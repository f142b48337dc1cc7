import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** Agent identities are left out of analytics by the module that owns them. */
export { notAgent } from '../../modules/analytics/analytics.repository.ts';

/** A brand's event rules as configured now. */
export interface BrandRule {
  eventId: string;
  eventType: string;
  rewardAmount: bigint;
  cooldownHours: number;
  maxClaimsPerUser: number;
  active: boolean;
}

/** The rules of `brandIds`, by brand then event type. */
export async function readBrandRules(db: Kysely<DB>, brandIds: string[]): Promise<Map<string, BrandRule[]>> {
  const rules = new Map<string, BrandRule[]>(brandIds.map((id) => [id, []]));
  if (brandIds.length === 0) return rules;
  const rows = await db
    .selectFrom('event_rules')
    .select(['id', 'brand_id', 'event_type', 'reward_amount', 'cooldown_hours', 'max_claims_per_user', 'active'])
    .where('brand_id', 'in', brandIds)
    .orderBy('brand_id')
    .orderBy('event_type')
    .execute();
  for (const r of rows) {
    rules.get(r.brand_id)?.push({
      eventId: r.id,
      eventType: r.event_type,
      rewardAmount: BigInt(r.reward_amount),
      cooldownHours: r.cooldown_hours,
      maxClaimsPerUser: r.max_claims_per_user,
      active: r.active,
    });
  }
  return rules;
}
