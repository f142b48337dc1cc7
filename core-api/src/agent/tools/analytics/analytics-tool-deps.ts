import type { AgentToolDeps } from '../../agent-tool-deps.ts';

/** Reads of windows through the answer cache (window-reads.ts): the analytics reads, the cache and the clock. */
export type WindowReadDeps = Pick<AgentToolDeps, 'analyticsReads' | 'agentAnswers' | 'settings' | 'clock'>;

/** A 404 for an unknown brand (requireKnownBrand): the event pipeline's brand cache. */
export type KnownBrandDeps = Pick<AgentToolDeps, 'events'>;

/** What the analytics tools use together (analytics.tools.ts); each tool's factory takes its own part. */
export type AnalyticsToolDeps = WindowReadDeps & KnownBrandDeps & Pick<AgentToolDeps, 'chain' | 'logger'>;
