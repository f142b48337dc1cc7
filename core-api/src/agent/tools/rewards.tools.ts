import { cleanString } from '@pts/shared';
import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { AGENT_REWARD_DAILY_CLAIMS, AGENT_REWARD_TYPES } from '../rewards/agent-rewards.service.ts';

// Agent rewards (spec 4.1, access `key`): what the network pays a key for the brands it brings
// (docs/agent-api/rewards.md).

const rewardTypeSchema = z.enum(AGENT_REWARD_TYPES, { message: 'must be discovery or onboarding' });

const allowanceSchema = z.object({
  period: z.literal('utc_day'),
  limit: z.number().int(),
  used: z.number().int(),
  remaining: z.number().int(),
  resetsAt: z.string(),
});

const claimSchema = z.object({
  brandId: z.string(),
  brandName: z.string(),
  rewardType: rewardTypeSchema,
  amount: z.number().int(),
  eventId: z.string(),
  claimedAt: z.string(),
  /** `paying`: recorded, its reward event not yet (a claim again after 30 s pays it). */
  status: z.enum(['paid', 'paying']),
  mintStatus: z.enum(['none', 'pending', 'submitted', 'confirmed', 'failed']).nullable(),
  transactionHash: z.string().nullable(),
});

const caps = Object.entries(AGENT_REWARD_DAILY_CLAIMS)
  .map(([tier, n]) => `${tier} ${n}`)
  .join(', ');

function getAgentRewardsTool(d: Pick<AgentToolDeps, 'memberAnswers' | 'rewards'>): AgentTool {
  return defineAgentTool({
    name: 'get_agent_rewards',
    method: 'get',
    path: '/agent/rewards',
    summary: "This key's reward wallet, earnings, claims, claimable rewards and daily claim allowance",
    description:
      'The wallet the key is paid to (`identity` agent_<keyId>@agents.pts, its `address`, the live on-chain ' +
      '`balance` and `pending` rewards not yet confirmed, in pts), earnings by reward type, every claim with ' +
      'its mint state, the agent activity that earns rewards (accepted events brought with process_event, ' +
      'brands onboarded), `claimable` (rewards whose evidence is met and not yet claimed: pass them to ' +
      `claim_agent_reward), \`allowance\`: claims per UTC day (${caps} by tier), used, remaining, resetsAt, ` +
      "and `rateLimit`: the key's requests per minute (the X-RateLimit-* headers tell what is left).",
    access: 'key',
    result: z.object({
      keyId: z.string(),
      tier: z.enum(['free', 'pro', 'enterprise']),
      wallet: z.object({
        identity: z.string(),
        address: z.string().nullable(),
        balance: z.number(),
        pending: z.number(),
      }),
      earnings: z.object({
        total: z.number().int(),
        discovery: z.number().int(),
        onboarding: z.number().int(),
        claims: z.number().int(),
      }),
      rates: z.object({ discovery: z.number().int(), onboarding: z.number().int() }),
      activity: z.object({
        acceptedEvents: z.number().int(),
        brandsWithEvents: z.number().int(),
        onboardedBrands: z.number().int(),
      }),
      claimable: z.array(z.object({ brandId: z.string(), rewardType: rewardTypeSchema, amount: z.number().int() })),
      claims: z.array(claimSchema),
      allowance: allowanceSchema,
      rateLimit: z.object({ requestsPerMinute: z.number().int() }),
    }),
    example: () => ({}),
    handle: (_input, context) => d.rewards.readAgentRewards(d.memberAnswers, context.principal),
  });
}

function claimAgentRewardTool(d: Pick<AgentToolDeps, 'memberAnswers' | 'rewards'>): AgentTool {
  return defineAgentTool({
    name: 'claim_agent_reward',
    method: 'post',
    path: '/agent/rewards/claim',
    summary: 'Claim the network’s reward for a brand this key brought: discovery 100 pts, onboarding 500 pts',
    description:
      '`brandAddress` is the Brand ID (0x…) or exactly the brand’s domain. `discovery` (100 pts): a brand this ' +
      'key acts for, once the key sent at least one accepted event of it with process_event. `onboarding` ' +
      '(500 pts): a brand this key created with onboard_brand, once the brand took an accepted event of its own ' +
      '(its site or server, not this key) since. Paid once per key, brand and type to the key’s wallet ' +
      '(get_agent_rewards shows it), minted on chain like any reward. Refusals: 403 evidence not met ' +
      '(`details.reason` says what to do) or brand outside the key, 404 unknown brand, 409 already claimed ' +
      `(\`details.claim\` is the claim), 429 after the day’s claims (${caps} by tier; \`resetsAt\`).`,
    access: 'key',
    request: {
      body: z.object({
        rewardType: rewardTypeSchema,
        brandAddress: cleanString(
          z.string().min(1, 'must not be empty').max(253, 'must be a Brand ID or a domain (at most 253 characters)'),
        ),
      }),
    },
    result: z.object({
      claim: claimSchema,
      wallet: z.object({ identity: z.string(), address: z.string() }),
      allowance: allowanceSchema,
    }),
    // The every-tool test runs process_event's example (this key, this brand) earlier in the list: the
    // discovery evidence.
    example: (fixture) => ({ body: { rewardType: 'discovery', brandAddress: fixture.brandId } }),
    handle: ({ body }, context) => d.rewards.claimAgentReward(context.principal, body),
  });
}

/** The agent reward tools (spec 4.1): read the key's rewards, claim one. */
export function rewardsTools(d: Pick<AgentToolDeps, 'memberAnswers' | 'rewards'>): AgentTool[] {
  return [getAgentRewardsTool(d), claimAgentRewardTool(d)];
}
