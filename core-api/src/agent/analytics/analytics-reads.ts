import type { Database } from '../../db/database.ts';
import {
  readActivityByBrand,
  readBrandNames,
  readEventTypeActivity,
  readMemberFlows,
  readPerkNames,
  readPerkRedemptionTotals,
  readProgramSize,
  readRetainedMembers,
  readStreakTotals,
  readTrendCounts,
  readWindowTotals,
} from '../../modules/analytics/analytics.repository.ts';
import { readBrandAnalytics } from '../../modules/analytics/brand-analytics.ts';
import { readPerkActivity } from '../../modules/analytics/perk-activity.ts';
import { type BoundIntoDeps, type BoundToDatabase, bindDatabase, bindDatabaseIntoDeps } from '../agent-services.ts';
import { listDirectoryBrands } from '../discovery/brand-directory.repository.ts';
import { readBrandRules } from './analytics.repository.ts';

const analyticsReadFunctions = {
  readActivityByBrand,
  readBrandNames,
  readEventTypeActivity,
  readMemberFlows,
  readPerkNames,
  readPerkRedemptionTotals,
  readProgramSize,
  readRetainedMembers,
  readStreakTotals,
  readTrendCounts,
  readWindowTotals,
  readPerkActivity,
  readBrandRules,
  listDirectoryBrands,
};
const analyticsDepsFunctions = { readBrandAnalytics };

/**
 * The analytics tools' reads (analytics.tools.ts): brand analytics, windows, trends and flows, the analytics
 * module's own read models (modules/analytics), bound to the handle by compose.ts.
 */
export type AnalyticsReads = BoundToDatabase<typeof analyticsReadFunctions> &
  BoundIntoDeps<typeof analyticsDepsFunctions>;

export function createAnalyticsReads(db: Database): AnalyticsReads {
  return { ...bindDatabase(db, analyticsReadFunctions), ...bindDatabaseIntoDeps(db, analyticsDepsFunctions) };
}
