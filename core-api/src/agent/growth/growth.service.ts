import type { Database } from '../../db/database.ts';
import { readCategoryActivity } from '../../modules/analytics/analytics.repository.ts';
import { countBrandsInCategory } from '../../modules/brands/brands.repository.ts';
import { type BoundToDatabase, bindDatabase } from '../agent-services.ts';
import { listGrowthLeads, recordGrowthLead } from './growth.repository.ts';

const growthFunctions = { readCategoryActivity, countBrandsInCategory, recordGrowthLead, listGrowthLeads };

/**
 * The growth area (docs/agent-api/growth.md): ROI peers of a category, and the leads `request_growth_info`
 * records and `/admin/growth-leads` lists; bound to the handle by compose.ts.
 */
export type GrowthService = BoundToDatabase<typeof growthFunctions>;

export function createGrowthService(db: Database): GrowthService {
  return bindDatabase(db, growthFunctions);
}
