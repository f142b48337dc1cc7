import type { AgentToolDeps } from '../../agent-tool-deps.ts';

/** Events through the pipeline's one entry (process_event, process_bulk_events). */
export type EventToolDeps = Pick<AgentToolDeps, 'events'>;

/** A member's accounts, ledgers and streaks at a known brand. */
export type MemberReadDeps = Pick<AgentToolDeps, 'actionsReads' | 'events'>;

/** A member tool: the reads and the kept member answers. */
export type MemberToolDeps = MemberReadDeps & Pick<AgentToolDeps, 'memberAnswers' | 'tiers'>;

/** redeem_perk: the process's one redemption service, the members and the brand check. */
export type RedeemToolDeps = MemberReadDeps & Pick<AgentToolDeps, 'redemption'>;

/** What the action tools use together (actions.tools.ts). */
export type ActionsToolDeps = MemberToolDeps & RedeemToolDeps;
