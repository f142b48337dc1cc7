import type { Database } from '../../db/database.ts';
import { resolveMember } from '../../modules/accounts/accounts.service.ts';
import {
  readCategoryPerformance,
  readPerkActivities,
  readPerkActivity,
  readPerkRedeemers,
} from '../../modules/analytics/perk-activity.ts';
import { readRuleEngagement } from '../../modules/events/rule-reads.ts';
import {
  readAffordCounts,
  readBalanceQuartiles,
  readEarningsTotals,
  readMemberActivity,
  readMemberRedemptions,
} from '../../modules/ledger/member-activity.ts';
import { findBrandPerk } from '../../modules/perks/redemption.service.ts';
import { type BoundToDatabase, bindDatabase } from '../agent-services.ts';
import { readBrandMembers, readPlatformSplit } from './audience.repository.ts';

const intelligenceReadFunctions = {
  readCategoryPerformance,
  readPerkActivities,
  readPerkActivity,
  readPerkRedeemers,
  readRuleEngagement,
  readAffordCounts,
  readBalanceQuartiles,
  readEarningsTotals,
  resolveMember,
  readMemberActivity,
  readMemberRedemptions,
  findBrandPerk,
  readBrandMembers,
  readPlatformSplit,
};

/**
 * The intelligence tools' reads (intelligence.tools.ts): perk activity, members' ledgers and activity, rule
 * engagement and a brand's audience — the modules' read models, bound to the handle by compose.ts.
 */
export type IntelligenceReads = BoundToDatabase<typeof intelligenceReadFunctions>;

export function createIntelligenceReads(db: Database): IntelligenceReads {
  return bindDatabase(db, intelligenceReadFunctions);
}
