import type { AgentToolDeps } from '../../agent-tool-deps.ts';

/** The directory and perk reads, remembered through the answer cache (public aggregates). */
export type DirectoryToolDeps = Pick<AgentToolDeps, 'discoveryReads' | 'agentAnswers' | 'settings'>;

/** Perk supply read live from the PerkNFT contract (catalogue-items.ts). */
export type SupplyDeps = Pick<AgentToolDeps, 'perkChain' | 'clock'>;

/** A brand's program and answers kept until a write: the brand cache and the kept member answers. */
export type BrandToolDeps = DirectoryToolDeps & Pick<AgentToolDeps, 'events' | 'memberAnswers'>;

/** What the discovery tools use together (discovery.tools.ts). */
export type DiscoveryToolDeps = BrandToolDeps & SupplyDeps;
