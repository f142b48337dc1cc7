import type { AgentToolDeps } from '../../agent-tool-deps.ts';
import type { MemberEarningsDeps } from '../../commerce/member-earnings.ts';

/** Population reads remembered through the answer cache, and member answers kept until a write. */
type KeptAnswers = Pick<AgentToolDeps, 'agentAnswers' | 'settings' | 'memberAnswers'>;

/** find_deals: the offered perks, their supply on chain, the member's wallet. */
export type DealsToolDeps = KeptAnswers &
  Pick<AgentToolDeps, 'commerceReads' | 'walletBalances' | 'perkChain' | 'clock'>;

/** route_commerce: the brands' purchase rules and the member's earnings at them. */
export type RoutesToolDeps = KeptAnswers & MemberEarningsDeps;

/** stack_commerce: one brand's earnings for the member, its perks and the member's wallet. */
export type StackToolDeps = KeptAnswers &
  MemberEarningsDeps &
  Pick<AgentToolDeps, 'walletBalances' | 'perkChain' | 'clock'>;

/** What the commerce tools use together (commerce.tools.ts). */
export type CommerceToolDeps = DealsToolDeps & RoutesToolDeps & StackToolDeps;
