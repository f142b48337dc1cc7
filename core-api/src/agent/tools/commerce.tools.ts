import type { AgentTool } from '../agent-tool.ts';
import type { CommerceToolDeps } from './commerce/commerce-tool-deps.ts';
import { findDealsTool } from './commerce/find-deals.ts';
import { routeCommerceTool } from './commerce/route-commerce.ts';
import { stackCommerceTool } from './commerce/stack-commerce.ts';

export { intentTerms } from './commerce/commerce-schemas.ts';

/**
 * The commerce tools (spec 4.1): `find_deals`, `route_commerce`, `stack_commerce`, one file each under
 * commerce/ (docs/agent-api/commerce.md).
 */
export function commerceTools(d: CommerceToolDeps): AgentTool[] {
  return [findDealsTool(d), routeCommerceTool(d), stackCommerceTool(d)];
}
