import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import type { Address } from 'viem';
import type { z } from 'zod';
import type { AnswerCache } from '../caching/answer-cache.ts';
import type { ChainInfo } from '../chain/chain-info.ts';
import type { ChainReads } from '../chain/chain-reads.ts';
import type { RelayContracts } from '../chain/contract-addresses.ts';
import type { ChainPublicClient } from '../chain/deploy.ts';
import type { Config } from '../config.ts';
import { parseInput } from '../http/validate.ts';
import type { BalanceService } from '../modules/balances/balances.service.ts';
import type { ChangeNotifier } from '../modules/brands/brand-changes.ts';
import type { EventService } from '../modules/events/events.service.ts';
import type { MemberAnswers } from '../modules/ledger/member-answers.ts';
import type { PerkChain } from '../modules/perks/perk-chain.ts';
import type { RedemptionService } from '../modules/perks/redemption.service.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { ChatModel } from './converse/chat-model.ts';

/**
 * The agent API (spec 2 §1, 4.1) is a list of tools. One tool is one REST endpoint under `/api/v1`
 * (envelope `{data, meta:{tool,timestamp}}`), one MCP tool (same name, input schema = params ∪ query ∪ body)
 * and one step the `converse` planner may take. Each tool is declared once, here-shaped, and every surface
 * is generated from the list (agent/agent-tools.ts).
 */

export type AgentTier = 'free' | 'pro' | 'enterprise';

/** Who is calling: the verified agent key (docs/agent-api.md, "Keys"). */
export interface AgentPrincipal {
  keyId: string;
  name: string;
  /** Brands the key acts for; `canManageProgram` applies to these only. */
  brandIds: string[];
  canManageProgram: boolean;
  canOnboard: boolean;
  tier: AgentTier;
  /** Authenticated requests per minute allowed to this key (default 20). */
  ratePerMinute: number;
}

/**
 * Who may call a tool:
 * - `public`: anyone (100 requests/min per IP);
 * - `optional`: anyone; a signed call is personalised (`principal` set) and counts against the key;
 * - `key`: a valid agent signature (401 `auth_required` without);
 * - `manage`: `key` + `canManageProgram` + the path's `:brandId` among the key's brands (403 `forbidden`);
 * - `onboard`: `key` + `canOnboard`;
 * - `converse`: `key` + tier pro or enterprise.
 */
export type AgentAccess = 'public' | 'optional' | 'key' | 'manage' | 'onboard' | 'converse';

export interface AgentToolContext {
  /** Set for every access but `public` (and for `optional` only when the call was signed). */
  principal: AgentPrincipal | undefined;
  clock: Clock;
  logger: Logger;
}

type Schema = z.ZodType | undefined;
type Parsed<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

export interface AgentToolInput<P extends Schema, Q extends Schema, B extends Schema> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

export interface AgentToolDefinition<
  P extends Schema = undefined,
  Q extends Schema = undefined,
  B extends Schema = undefined,
> {
  /** snake_case; `meta.tool` of every answer and the MCP tool name: `get_network_info`. */
  name: string;
  method: 'get' | 'post' | 'patch';
  /** Relative to `/api/v1`, Express style: `/brands/:brandId/perks`. */
  path: string;
  /** One line, for humans and for the OpenAPI summary. */
  summary: string;
  /** What an AI client needs to decide to call it and to read the answer (units, periods, empty data). */
  description: string;
  access: AgentAccess;
  request?: { params?: P; query?: Q; body?: B };
  /** The shape of `data` (documented in OpenAPI and checked by the tool's tests). */
  result: z.ZodType;
  /** A happy-path call on the seeded fixture; the endpoint test calls every tool with it. */
  example: AgentToolExample;
  /**
   * Public aggregates only (access `public`): the answer for one input is computed at most once per
   * `PTS_AGENT_ANSWER_MAX_AGE_SECONDS`, served stale while it is recomputed (caching/answer-cache.ts;
   * docs/agent-api.md, "Freshness").
   */
  cached?: boolean;
  /** Answers `data`; throws AppError for 4xx (mapped to the agent error codes of spec 7). */
  handle(input: AgentToolInput<P, Q, B>, context: AgentToolContext): Promise<unknown>;
}

/** A tool with its input types erased, as the list holds it. */
export interface AgentTool {
  readonly name: string;
  readonly definition: AgentToolDefinition<Schema, Schema, Schema>;
}

export function defineAgentTool<
  P extends Schema = undefined,
  Q extends Schema = undefined,
  B extends Schema = undefined,
>(definition: AgentToolDefinition<P, Q, B>): AgentTool {
  return { name: definition.name, definition: definition as unknown as AgentToolDefinition<Schema, Schema, Schema> };
}

/**
 * The plain values and shared services every tool factory and every agent service gets, each built once by
 * the composition root (compose.ts, `composeAgentToolDeps`), never the process's whole container. The tools
 * get them with their named services (AgentToolDeps, agent-tool-deps.ts).
 */
export interface AgentToolPorts {
  clock: Clock;
  logger: Logger;
  /** Brand security keys at rest (onboarding, key rotation). */
  secrets: SecretBox;
  chain: ChainInfo;
  /** The four relay targets (chain/contract-addresses.ts): never a brand's address. */
  contracts: RelayContracts;
  /** The relayer's signing address: never a brand's address either. */
  relayerAddress: Address;
  publicClient: ChainPublicClient;
  chainReads: ChainReads | undefined;
  perkChain: PerkChain | undefined;
  /**
   * Members' wallets as of the newest block this process caught up with (modules/balances over chain
   * reads): for answers that show a balance; a spend checks the chain live in its own service.
   */
  walletBalances: BalanceService;
  /** The event pipeline shared with /pts-api (its brand cache is `events.brands`). */
  events: EventService;
  changes: ChangeNotifier;
  /** The process's one redemption service, shared with /services/perks/redeem. */
  redemption: RedemptionService;
  agentAnswers: AnswerCache;
  /** Member answers kept until a write touches the member (modules/ledger/member-answers.ts). */
  memberAnswers: MemberAnswers;
  /** The PTS_LLM_* model for converse; the offline planner without one. */
  chatModel: ChatModel | undefined;
  settings: AgentToolSettings;
}

/** The few configured values the tools read. */
export interface AgentToolSettings {
  /** PTS_CHAIN: `local` (anvil) or `rpc`. */
  chainMode: Config['PTS_CHAIN'];
  /** PTS_AGENT_ANSWER_MAX_AGE_SECONDS (0: cached tools compute every answer). */
  answerMaxAgeSeconds: number;
  /** PTS_DEFAULT_COOLDOWN_HOURS for event rules created through the agent API. */
  defaultCooldownHours: number;
}

/**
 * The seeded world every tool's example runs against (core-api/test/agent-fixture.ts): one brand with rules,
 * perks, members with events, redemptions and streaks, and an agent key for it.
 */
export interface AgentFixture {
  brandId: string;
  /** A second brand, for comparisons. */
  otherBrandId: string;
  /** A member of `brandId` with earnings, a redemption and a streak (email-shaped). */
  userId: string;
  /** A perk collection of `brandId` that `userId` can afford. */
  perkId: string;
  /** An event rule id of `brandId`. */
  eventId: string;
}

/** A happy-path call of a tool on the fixture; the per-tool HTTP test calls each tool with it. */
export type AgentToolExample = (fixture: AgentFixture) => {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
};

/**
 * Runs one tool on raw input: params, query and body parsed by the tool's own schemas (a 400
 * VALIDATION_ERROR naming the field when they do not fit), then `handle`. The REST route, the MCP tool and
 * the converse executor all call tools through this, so they validate alike.
 */
export async function invokeAgentTool(
  tool: AgentTool,
  raw: { params?: unknown; query?: unknown; body?: unknown },
  context: AgentToolContext,
): Promise<unknown> {
  const { request = {} } = tool.definition;
  const input = {
    params: request.params ? parseInput(request.params, raw.params ?? {}, 'path') : undefined,
    query: request.query ? parseInput(request.query, raw.query ?? {}, 'query') : undefined,
    body: request.body ? parseInput(request.body, raw.body ?? {}) : undefined,
  };
  return tool.definition.handle(input, context);
}
