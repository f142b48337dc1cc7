import { LEADERBOARD_PERIODS } from '@pts/shared';
import { BRAND_CATEGORIES } from '../tools/discovery.tools.ts';

/** What an argument means to a caller (an LLM host reads this), and its closed set of values, if any. */
export interface ArgumentDoc {
  description: string;
  enum?: readonly string[];
}

/**
 * The meaning of each argument of the agent tools, written once per name: `brandId` means the same in the 24
 * tools that take it. A tool's own zod `.describe()` wins; `TOOL_ARGUMENTS` below says what differs for one
 * tool. Applied wherever a tool's input is shown as JSON Schema (MCP `tools/list`, the converse planners).
 */
const ARGUMENTS: Record<string, ArgumentDoc> = {
  brandId: { description: "The brand's address (0x followed by 40 hex digits), as list_brands or check_brand give it" },
  brandIds: { description: 'Brand addresses separated by commas (2 to 5), e.g. 0xaaa…,0xbbb…' },
  brandAddress: { description: "The brand's address (0x followed by 40 hex digits)" },
  userId: {
    description:
      'The member: an email (ada@example.com) or a platform identity (discord_123@pts.example, telegram_42@pts.example)',
  },
  category: { description: "A brand category (the brand's line of business)", enum: BRAND_CATEGORIES },
  limit: { description: 'How many items to answer at most (see the bounds of this argument)' },
  offset: { description: 'How many items to skip, for paging' },
  period: { description: 'The window ending now that the figures cover', enum: ['7d', '30d', '90d'] },
  purchaseAmount: { description: 'The purchase amount in USD as a decimal string, e.g. "25" or "25.50"' },
  query: { description: 'The text to look for' },
  eventType: { description: "The rule's event type, e.g. account_creation or first_purchase (get_brand lists them)" },
  eventId: { description: "The rule's event id (get_brand lists them); give it or eventType" },
  externalId: { description: 'Your idempotency key (an order or post id): the same one is never rewarded twice' },
  metadata: { description: 'Free JSON kept with the event (at most 10 KB)' },
  collectionId: { description: 'The perk: its integer collection id or its uuid (get_brand_perks lists both)' },
  perkId: { description: 'The perk: its integer collection id or its uuid (get_brand_perks lists both)' },
  targetPerkId: { description: 'A perk to measure the goal against: its integer collection id' },
  rewardAmount: { description: 'The pts a member gets for each accepted event (a whole number)' },
  value: {
    description:
      'What the event is worth, e.g. an order total: {"amount": "12.50", "currency": "USD"} (a decimal string in the brand\'s currency); a rate rule pays by it',
  },
  rate: {
    description:
      'Pay by the event\'s value instead of a fixed amount: {"pts": 2, "per": "1.00", "currency": "USD"} = 2 pts per 1 USD (rounding down unless "nearest" or "up")',
  },
  minValue: { description: 'With a rate: events worth less than this decimal amount earn nothing' },
  maxReward: { description: 'With a rate: the most pts one event pays' },
  maxClaims: { description: 'How many times one member may be rewarded for this event; -1 (or null) for unlimited' },
  cooldownHours: { description: 'Hours a member must wait between two rewarded events of this type (0 = none)' },
  enabled: { description: 'false pauses the rule (events are refused), true resumes it' },
  isActive: { description: 'false takes the perk off sale, true puts it back' },
  name: { description: 'The name members see' },
  description: { description: 'A description members see (plain text)' },
  priceInPoints: { description: 'The perk’s cost in pts (a whole number)' },
  maxSupply: { description: 'How many can be redeemed in all; -1 (or null) for unlimited' },
  maxPrice: { description: 'Only perks costing at most this many pts' },
  budget: { description: 'Only perks costing at most this many pts' },
  intent: { description: 'What the shopper wants, in words (matched against perk and brand names and categories)' },
  businessName: { description: "The business's name" },
  contactEmail: { description: 'Where the business can be reached' },
  website: { description: "The business's website (https://…); its domain becomes the brand's domain" },
  monthlyCustomers: { description: 'Customers the business serves in a month' },
  averageOrderValue: { description: 'The average order value in USD' },
  events: { description: 'The events to send (1 to 100), each judged like process_event' },
  action: {
    description:
      'rotate: a new security key (shown once); revoke: no key verifies any more; status: whether the keys are valid and when they were issued, rotated or revoked',
  },
  rewardType: { description: 'The reward to claim (docs/agent-api/rewards.md says what each needs)' },
};

const perkCategory: ArgumentDoc = {
  description: "A perk category: 1 to 50 lowercase letters, digits, _ or - (get_brand_perks shows the brand's)",
};

/** Where one tool's argument means something narrower than the name alone says. */
const TOOL_ARGUMENTS: Record<string, Record<string, ArgumentDoc>> = {
  get_brand_perks: { category: perkCategory },
  browse_perks: { category: perkCategory },
  create_brand_perk: { category: perkCategory },
  update_brand_perk: { category: perkCategory },
  get_leaderboard: {
    metric: {
      description: 'What members are ranked by: pts_earned (default), streak (current daily streak) or activity',
      enum: ['pts_earned', 'streak', 'activity'],
    },
    period: {
      description: 'A calendar period in UTC (daily, weekly from Monday, monthly) or all_time (default)',
      enum: LEADERBOARD_PERIODS,
    },
  },
  converse: { query: { description: 'The question, in plain language (at most 1,000 characters)' } },
  check_brand: { query: { description: 'A website domain, URL or brand name to look up' } },
  claim_agent_reward: {
    brandAddress: { description: 'The brand the reward is about: its address or its website domain' },
  },
};

/** The documentation of one argument of one tool, or undefined when none is written. */
export function argumentDoc(tool: string, argument: string): ArgumentDoc | undefined {
  return TOOL_ARGUMENTS[tool]?.[argument] ?? ARGUMENTS[argument];
}
