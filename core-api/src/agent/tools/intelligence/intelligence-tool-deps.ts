import type { AgentToolDeps } from '../../agent-tool-deps.ts';

/** The intelligence reads a member tool uses. */
export type MemberReadDeps = Pick<AgentToolDeps, 'intelligenceReads'>;

/** The population figures are kept through the answer cache. */
export type EarningsDeps = Pick<AgentToolDeps, 'intelligenceReads' | 'agentAnswers' | 'settings'>;

/** What a member tool uses: the reads, the kept member answers, the wallets, the answer cache. */
export type MemberToolDeps = EarningsDeps & Pick<AgentToolDeps, 'memberAnswers' | 'walletBalances' | 'tiers'>;

/** What a brand's audience tool uses: the reads, the brand check, the answer cache. */
export type BrandToolDeps = Pick<AgentToolDeps, 'intelligenceReads' | 'events' | 'agentAnswers' | 'settings'>;
