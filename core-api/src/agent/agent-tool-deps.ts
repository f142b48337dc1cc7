import type { SimulatorService } from '../modules/simulator/simulator.service.ts';
import type { TierService } from '../modules/tiers/tiers.service.ts';
import type { ActionsReads } from './actions/actions-reads.ts';
import type { AgentToolPorts } from './agent-tool.ts';
import type { AnalyticsReads } from './analytics/analytics-reads.ts';
import type { CommerceReads } from './commerce/commerce-reads.ts';
import type { ConverseReads } from './converse/converse.repository.ts';
import type { DiscoveryReads } from './discovery/discovery-reads.ts';
import type { GrowthService } from './growth/growth.service.ts';
import type { IntelligenceReads } from './intelligence/intelligence-reads.ts';
import type { NetworkReads } from './network/network-stats.repository.ts';
import type { AgentOnboardingService } from './onboarding/onboarding.service.ts';
import type { AgentProgramService } from './program/program.service.ts';
import type { AgentRewardsService } from './rewards/agent-rewards.service.ts';

/**
 * What tool factories get: the ports and the named services they read and write through — never the
 * database handle (issue 23 §2); the services hold it (agent/agent-services.ts), and compose.ts builds each
 * once (`composeAgentToolDeps`). Apart from agent-tool.ts so that the services, which import agent-tool.ts,
 * are not imported back by it (no import cycle).
 */
export interface AgentToolDeps extends AgentToolPorts {
  /** Members' accounts, ledgers, streaks and achievements for the member actions (actions.tools.ts). */
  actionsReads: ActionsReads;
  /** Brand and network analytics (analytics.tools.ts). */
  analyticsReads: AnalyticsReads;
  /** Offers, balances and earnings around a purchase (commerce.tools.ts). */
  commerceReads: CommerceReads;
  /** The brand directory, perk browsing and leaderboards (discovery.tools.ts). */
  discoveryReads: DiscoveryReads;
  /** The brands a converse question names (converse.tools.ts). */
  converseReads: ConverseReads;
  /** ROI peers and growth leads (growth.tools.ts, /admin/growth-leads). */
  growth: GrowthService;
  /** Audience and perk intelligence (intelligence.tools.ts). */
  intelligenceReads: IntelligenceReads;
  /** Network-wide counts (network.tools.ts). */
  networkReads: NetworkReads;
  /** Brand onboarding and key rotation through the agent API (onboarding.tools.ts). */
  onboarding: AgentOnboardingService;
  /** Rules and perks an agent key manages (program.tools.ts). */
  program: AgentProgramService;
  /** Agent rewards: claims and their standing (rewards.tools.ts). */
  rewards: AgentRewardsService;
  /** VIP tiers: a member's standing and the brand's table (tiers.tools.ts, docs/tiers.md). */
  tiers: Pick<TierService, 'member' | 'table' | 'distribution'>;
  /** The what-if simulator (simulator.tools.ts, docs/simulator.md). */
  simulator: Pick<SimulatorService, 'simulate'>;
}
