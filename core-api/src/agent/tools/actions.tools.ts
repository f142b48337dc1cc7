import type { AgentTool } from '../agent-tool.ts';
import type { ActionsToolDeps } from './actions/actions-tool-deps.ts';
import { getUserBalanceTool } from './actions/get-user-balance.ts';
import { getUserPortfolioTool } from './actions/get-user-portfolio.ts';
import { getUserStatsTool } from './actions/get-user-stats.ts';
import { processBulkEventsTool } from './actions/process-bulk-events.ts';
import { processEventTool } from './actions/process-event.ts';
import { redeemPerkTool } from './actions/redeem-perk.ts';

/**
 * The action tools of the agent API (spec 4.1): members' balances and stats, events and redemptions; one file
 * each under actions/.
 */
export function actionsTools(d: ActionsToolDeps): AgentTool[] {
  return [
    getUserBalanceTool(d),
    getUserStatsTool(d),
    getUserPortfolioTool(d),
    processEventTool(d),
    processBulkEventsTool(d),
    redeemPerkTool(d),
  ];
}
