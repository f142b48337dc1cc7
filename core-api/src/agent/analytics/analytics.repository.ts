import type { StoredRateTerms } from '@pts/shared';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { readRulesOfBrands } from '../../modules/events/rule-reads.ts';
import { ruleCapOut } from '../agent-limits.ts';

/** A brand's event rules as configured now. */
export interface BrandRule {
  eventId: string;
  eventType: string;
  /** The fixed reward; 0 for a rate rule. */
  rewardAmount: bigint;
  /** A rate rule's terms (pts per unit of the event's value), null for a fixed one. */
  rate: StoredRateTerms | null;
  cooldownHours: number;
  /** -1 = unlimited (agent-limits.ts ruleCapOut). */
  maxClaimsPerUser: number;
  active: boolean;
}

/** The rules of `brandIds`, by brand then event type (modules/events readRulesOfBrands). */
export async function readBrandRules(db: Kysely<DB>, brandIds: string[]): Promise<Map<string, BrandRule[]>> {
  const rows = await readRulesOfBrands(db, brandIds);
  return new Map(
    [...rows].map(([brandId, rules]) => [
      brandId,
      rules.map((r) => ({
        eventId: r.id,
        eventType: r.event_type,
        rewardAmount: BigInt(r.reward_amount),
        rate: r.rate,
        cooldownHours: r.cooldown_hours,
        maxClaimsPerUser: ruleCapOut(r.max_claims_per_user),
        active: r.active,
      })),
    ]),
  );
}
