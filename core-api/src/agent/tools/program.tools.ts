import { randomUUID } from 'node:crypto';
import {
  AppError,
  brandIdSchema,
  cleanString,
  decimalAmountSchema,
  eventTypeSchema,
  limitSchema,
  type Perk,
  perkCategorySchema,
  perkRefSchema,
  perkSchema,
  rateSchema,
  ruleSchema,
} from '@pts/shared';
import { z } from 'zod';
import { agentPerkLimits } from '../agent-limits.ts';
import { type AgentPrincipal, type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';

/** What the program tools use: the agent's program service, nothing else of the agent surface. */
export type ProgramToolDeps = Pick<AgentToolDeps, 'program'>;

// Program management (spec 4.1, access `manage`): a brand's event rules and perks, changed by an agent key
// through the admin API's own services (docs/agent-api/program.md).

/** The largest value an `integer` column holds (claim limits are stored as such). */
const INT32_MAX = 2_147_483_647;
const wholeNumber = (max: number) =>
  z.number().int('must be a whole number').min(0, 'must be ≥ 0').max(max, `must be at most ${max}`);

const agentRuleSchema = ruleSchema
  .pick({
    eventId: true,
    brandId: true,
    eventType: true,
    rewardAmount: true,
    rate: true,
    minValue: true,
    maxReward: true,
    cooldownHours: true,
  })
  .extend({
    maxClaims: z
      .number()
      .int()
      .describe('Most accepted events per user; -1 = unlimited (what create_brand_event and every tool take)'),
    enabled: z.boolean(),
  });

const agentPerkSchema = perkSchema.extend({
  /** The PerkNFT collection id (= perkId), the path's `:collectionId`. */
  collectionId: z.number().int(),
  priceInPoints: z.number().int(),
  isActive: z.boolean(),
});

/** The perk as the agent API answers it: its limits -1 when unlimited (agent-limits.ts). */
function toAgentPerk(perk: Perk) {
  return { ...agentPerkLimits(perk), collectionId: perk.perkId, priceInPoints: perk.cost, isActive: perk.active };
}

const brandParams = z.object({ brandId: brandIdSchema });

function keyIdOf(principal: AgentPrincipal | undefined): string {
  if (!principal) throw new AppError('UNAUTHORIZED', 'Managing a program needs an agent key (X-PTS-Agent-Key)');
  return principal.keyId;
}

/** A rule's reward by value, on create_brand_event and update_brand_event (docs/shop-program.md). */
const rateFields = {
  rate: rateSchema
    .optional()
    .describe(
      'Pay by the event\'s value instead of a fixed rewardAmount: {"pts": 2, "per": "1.00", "currency": "USD"} pays 2 pts per 1 USD (the brand\'s currency), rounding "down" (default), "nearest" or "up"',
    ),
  minValue: decimalAmountSchema
    .optional()
    .describe('With a rate: events worth less than this (e.g. "5.00") earn nothing'),
  maxReward: wholeNumber(1_000_000_000)
    .min(1, 'must be at least 1')
    .optional()
    .describe('With a rate: the most pts one event pays'),
};

function createBrandEventTool(d: ProgramToolDeps): AgentTool {
  return defineAgentTool({
    name: 'create_brand_event',
    method: 'post',
    path: '/brands/:brandId/events',
    summary: 'Create an event rule of a brand this key manages',
    description:
      'Adds a rewarded event to the brand: users get `rewardAmount` pts per accepted event (or, with `rate` ' +
      'instead, pts per amount of the event\'s value: "2 pts per $1", optionally from `minValue` and at most ' +
      '`maxReward`; events then send `value`), at most `maxClaims` ' +
      'times each (-1 or null = unlimited, as on every tool; 0 is read as unlimited too), at least `cooldownHours` apart. The rule is live for the very next event ' +
      '(process_event, the event API, bots). 409 when the brand already has this event type (use ' +
      'update_brand_event); 403 unless the key has canManageProgram and acts for the brand.',
    access: 'manage',
    request: {
      params: brandParams,
      body: z.object({
        eventType: eventTypeSchema,
        rewardAmount: wholeNumber(1_000_000_000).optional(),
        ...rateFields,
        maxClaims: limitSchema(INT32_MAX).describe(
          'Most accepted events per user; -1 (or null) = unlimited, the value suggest_brand_events gives',
        ),
        cooldownHours: wholeNumber(87_600),
      }),
    },
    result: agentRuleSchema,
    example: (fixture) => ({
      params: { brandId: fixture.brandId },
      body: {
        eventType: `agent_example_${randomUUID().slice(0, 8)}`,
        rewardAmount: 25,
        maxClaims: -1,
        cooldownHours: 24,
      },
    }),
    handle: ({ params, body }, context) => d.program.createBrandEvent(keyIdOf(context.principal), params.brandId, body),
  });
}

function updateBrandEventTool(d: ProgramToolDeps): AgentTool {
  return defineAgentTool({
    name: 'update_brand_event',
    method: 'patch',
    path: '/brands/:brandId/events/:eventId',
    summary: "Change an event rule's reward or switch it on or off",
    description:
      "Changes the rule's reward (`rewardAmount` for a fixed one, or `rate` with `minValue` / `maxReward` for " +
      "one by the event's value; either replaces the other) and/or `enabled`; its other settings (cooldown, claim limits, " +
      'channels) and its claim counters stay. A disabled rule refuses events at once (400 unknown event type) ' +
      'until enabled again. `eventId` is from get_brand or create_brand_event. 404 for an eventId the brand ' +
      'does not have.',
    access: 'manage',
    request: {
      params: brandParams.extend({ eventId: cleanString(z.string().min(1, 'must not be empty').max(100)) }),
      body: z
        .object({ rewardAmount: wholeNumber(1_000_000_000).optional(), ...rateFields, enabled: z.boolean().optional() })
        .refine((body) => Object.values(body).some((field) => field !== undefined), {
          message: 'give rewardAmount and/or enabled (or rate, minValue, maxReward)',
        }),
    },
    result: agentRuleSchema,
    // The fixture's `earn` rule, set to what it already is: the other examples still earn 100.
    example: (fixture) => ({
      params: { brandId: fixture.brandId, eventId: fixture.eventId },
      body: { rewardAmount: 100, enabled: true },
    }),
    handle: ({ params, body }, context) =>
      d.program.updateBrandEvent(keyIdOf(context.principal), params.brandId, params.eventId, body),
  });
}

function createBrandPerkTool(d: ProgramToolDeps): AgentTool {
  return defineAgentTool({
    name: 'create_brand_perk',
    method: 'post',
    path: '/brands/:brandId/perks',
    summary: 'Create a perk of a brand this key manages (with its on-chain collection)',
    description:
      'Adds a perk users can redeem for `priceInPoints` pts; `maxSupply` caps how many can ever be claimed and ' +
      '`maxPerUser` how many one member may hold (default 1); for either, -1 or null = unlimited (as on every ' +
      'tool; 0 is read as unlimited too). The PerkNFT collection is created on chain before the answer ' +
      '(`chainStatus` synced). `category` is 1 to 50 lowercase letters, digits, _ or - (default general). ' +
      '409 when the brand has a perk of that name.',
    access: 'manage',
    request: {
      params: brandParams,
      body: z.object({
        name: cleanString(z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters')),
        description: cleanString(z.string().max(2000, 'must be at most 2000 characters')).default(''),
        priceInPoints: wholeNumber(Number.MAX_SAFE_INTEGER),
        maxSupply: limitSchema(Number.MAX_SAFE_INTEGER)
          .default(null)
          .describe('How many can ever be claimed; -1 or null (the default) = unlimited'),
        maxPerUser: limitSchema(Number.MAX_SAFE_INTEGER)
          .default(1)
          .describe('How many one member may hold; default 1; -1 or null = unlimited'),
        category: perkCategorySchema.default('general'),
      }),
    },
    result: agentPerkSchema,
    example: (fixture) => ({
      params: { brandId: fixture.brandId },
      body: {
        name: `Agent example perk ${randomUUID().slice(0, 8)}`,
        description: 'A coffee on the house',
        priceInPoints: 250,
        maxSupply: 100,
        maxPerUser: 2,
        category: 'dining',
      },
    }),
    async handle({ params, body }, context) {
      return toAgentPerk(await d.program.createBrandPerk(keyIdOf(context.principal), params.brandId, body));
    },
  });
}

function updateBrandPerkTool(d: ProgramToolDeps): AgentTool {
  return defineAgentTool({
    name: 'update_brand_perk',
    method: 'patch',
    path: '/brands/:brandId/perks/:collectionId',
    summary: "Change a perk's price or switch it on or off",
    description:
      "Changes the perk's `priceInPoints`, `isActive` (an inactive perk cannot be redeemed), `maxSupply` and/or " +
      '`maxPerUser` (-1 or null = unlimited, as on every tool), on chain too. `collectionId` is the perk id or uuid (get_brand_perks). 404 for a perk that is not the brand’s.',
    access: 'manage',
    request: {
      params: brandParams.extend({ collectionId: perkRefSchema }),
      body: z
        .object({
          priceInPoints: wholeNumber(Number.MAX_SAFE_INTEGER).optional(),
          isActive: z.boolean().optional(),
          maxSupply: limitSchema(Number.MAX_SAFE_INTEGER)
            .optional()
            .describe('How many can ever be claimed (not below those claimed); -1 or null = unlimited'),
          maxPerUser: limitSchema(Number.MAX_SAFE_INTEGER)
            .optional()
            .describe('How many one member may hold; -1 or null = unlimited'),
        })
        .refine((body) => Object.values(body).some((value) => value !== undefined), {
          message: 'give priceInPoints, isActive, maxSupply and/or maxPerUser',
        }),
    },
    result: agentPerkSchema,
    // The fixture's perk at the price it already has (30): the redemption examples still afford it.
    example: (fixture) => ({
      params: { brandId: fixture.brandId, collectionId: fixture.perkId },
      body: { priceInPoints: 30, isActive: true },
    }),
    async handle({ params, body }, context) {
      const perk = await d.program.updateBrandPerk(
        keyIdOf(context.principal),
        params.brandId,
        params.collectionId,
        body,
      );
      return toAgentPerk(perk);
    },
  });
}

/** The program management tools of the agent API (spec 4.1): a brand's events and perks. */
export function programTools(d: ProgramToolDeps): AgentTool[] {
  return [createBrandEventTool(d), updateBrandEventTool(d), createBrandPerkTool(d), updateBrandPerkTool(d)];
}
