import type { AgentTool } from '../agent-tool.ts';
import { toolInputJsonSchema } from '../mcp/tool-arguments.ts';
import type { MentionedBrand } from './converse.repository.ts';

/** One tool call of a plan: flat arguments (`params ∪ query ∪ body`), as an MCP call takes them. */
export interface PlanStep {
  tool: string;
  input: Record<string, unknown>;
}

export interface PlannerInput {
  question: string;
  /** The tools the caller may have planned (read tools the principal may call). */
  tools: AgentTool[];
  /** Real brands the question names, in the order it names them. */
  brands: MentionedBrand[];
  /** The brands of the caller's key: the brand meant when the question names none and the key has one. */
  keyBrandIds: string[];
}

export interface Plan {
  steps: PlanStep[];
  /** What the planner could not do and why (a user not named, a tool missing). */
  notes: string[];
}

/** A plan never has more steps than this. */
export const MAX_PLAN_STEPS = 5;

const CATEGORIES = ['retail', 'gaming', 'dining', 'travel'] as const;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/gi;

interface Entities {
  brands: string[];
  /** A brand named or, failing that, the key's only brand. */
  brand: string | undefined;
  user: string | undefined;
  category: string | undefined;
  period: string | undefined;
  limit: number | undefined;
  /** A purchase amount in USD (`$25`, `25 USD`, `25 dollars`), as the decimal string the tools take. */
  amount: string | undefined;
}

type Need = 'brand' | 'user' | 'twoBrands' | 'amount';

interface Rule {
  /** What the rule answers, for the notes. */
  topic: string;
  when: RegExp;
  /** Candidate endpoints (`METHOD path` of spec 4.1), best first; the first present in the list is used. */
  endpoints: string[];
  needs?: Need[];
  args(e: Entities): Record<string, unknown>;
}

/**
 * The offline planner's rules (docs/agent-api/converse-mcp.md, "Offline planner"): keywords pick the
 * endpoint, entities found in the question fill its parameters. Tools are found by their spec 4.1 path, so
 * the rules hold whatever the tools are named; a rule whose tool is absent is skipped with a note.
 */
const RULES: Rule[] = [
  {
    topic: 'comparison',
    when: /\b(compare|comparison|versus|vs\.?|better than)\b/i,
    endpoints: ['GET /compare/brands'],
    needs: ['twoBrands'],
    args: (e) => ({ brandIds: e.brands.slice(0, 5).join(','), ...(e.period ? { period: e.period } : {}) }),
  },
  {
    topic: 'brand rankings',
    when: /\b(top|best|leading|ranking|rankings|ranked|most popular)\b(?!.*\b(members|users|players|leaderboard)\b)/i,
    endpoints: ['GET /brands/rankings', 'GET /brands'],
    args: (e) => ({ ...(e.category ? { category: e.category } : {}), limit: Math.min(e.limit ?? 10, 10) }),
  },
  {
    topic: 'balance',
    when: /\b(balance|how many (points|pts|tokens)|points do)\b/i,
    endpoints: ['GET /users/:userId/brands/:brandId/balance'],
    needs: ['user', 'brand'],
    args: (e) => ({ userId: e.user, brandId: e.brand }),
  },
  {
    topic: 'user stats',
    when: /\b(stats|statistics|earned|redeemed|earnings)\b/i,
    endpoints: ['GET /users/:userId/brands/:brandId/stats'],
    needs: ['user', 'brand'],
    args: (e) => ({ userId: e.user, brandId: e.brand }),
  },
  {
    topic: 'portfolio',
    when: /\b(portfolio|across (all )?brands|all (of )?(my|their|his|her) (brands|points))\b/i,
    endpoints: ['GET /users/:userId/portfolio'],
    needs: ['user'],
    args: (e) => ({ userId: e.user }),
  },
  {
    topic: 'brand health',
    when: /\b(health|healthy|grade|weakness(es)?|strengths?)\b/i,
    endpoints: ['GET /analytics/brands/:brandId/health'],
    needs: ['brand'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'brand analytics',
    when: /\b(analytics|performance|performing|how is .+ doing)\b/i,
    endpoints: ['GET /analytics/brands/:brandId'],
    needs: ['brand'],
    args: (e) => ({ brandId: e.brand, ...(e.period ? { period: e.period } : {}) }),
  },
  {
    topic: 'trending',
    when: /\b(trending|trend|hot|momentum)\b/i,
    endpoints: ['GET /network/trending'],
    args: (e) => ({ ...(e.period ? { period: e.period } : {}), ...(e.limit ? { limit: Math.min(e.limit, 50) } : {}) }),
  },
  {
    topic: 'perks',
    when: /\b(perks?|redeem|rewards? (can|to|i can))\b/i,
    endpoints: ['GET /brands/:brandId/perks', 'GET /perks'],
    args: (e) => ({
      ...(e.brand ? { brandId: e.brand } : {}),
      ...(e.category ? { category: e.category } : {}),
    }),
  },
  {
    topic: 'leaderboard',
    when: /\b(leaderboard|top (members|users|players)|who (leads|is leading))\b/i,
    endpoints: ['GET /brands/:brandId/leaderboard'],
    needs: ['brand'],
    args: (e) => ({ brandId: e.brand, ...(e.limit ? { limit: Math.min(e.limit, 100) } : {}) }),
  },
  {
    topic: 'recommendations',
    when: /\b(recommend|recommendations?|suggest (me|for))\b/i,
    endpoints: ['GET /intelligence/users/:userId/recommendations'],
    needs: ['user'],
    args: (e) => ({ userId: e.user, ...(e.limit ? { limit: Math.min(e.limit, 20) } : {}) }),
  },
  {
    topic: 'deals',
    when: /\b(deals?|offers?|discounts?)\b/i,
    endpoints: ['GET /deals'],
    args: (e) => ({ ...(e.category ? { category: e.category } : {}), ...(e.user ? { userId: e.user } : {}) }),
  },
  {
    topic: 'purchase stack',
    when: /\b(stack|what (would|will|do|does) (i|they|he|she|\S+@\S+) (earn|get|collect)\b.*\b(buy|buying|spend|spending|purchase))/i,
    endpoints: ['GET /commerce/stack'],
    needs: ['user', 'brand', 'amount'],
    args: (e) => ({ brandId: e.brand, userId: e.user, purchaseAmount: e.amount }),
  },
  {
    topic: 'commerce routing',
    when: /\b(where (should|to|can|could) (i|we|they|he|she) (buy|shop|purchase|spend)|best (place|brand|store) to (buy|shop|spend)|most cashback|earn the most)\b/i,
    endpoints: ['GET /commerce/route'],
    needs: ['amount'],
    args: (e) => ({
      purchaseAmount: e.amount,
      ...(e.category ? { category: e.category } : {}),
      ...(e.user ? { userId: e.user } : {}),
    }),
  },
  {
    topic: 'agent rewards',
    when: /\b(agent rewards?|my (agent )?(earnings|rewards)|rewards? (i|we) (earned|can claim)|claimable)\b/i,
    endpoints: ['GET /agent/rewards'],
    args: () => ({}),
  },
  {
    topic: 'network statistics',
    when: /\b(network|how many (brands|users|members)|platform stats|total rewards)\b/i,
    endpoints: ['GET /network/stats', 'GET /network/info'],
    args: () => ({}),
  },
];

function extractEntities(input: PlannerInput): Entities {
  const text = input.question;
  const brands = input.brands.map((brand) => brand.brandId);
  const user = (text.match(EMAIL) ?? [])[0]?.toLowerCase();
  const category = CATEGORIES.find((name) => new RegExp(`\\b${name}\\b`, 'i').test(text));
  const periodMatch = text.match(/\b(7|30|90)[ -]?(d|days?)\b/i) ?? text.match(/\b(week|month|quarter)\b/i);
  const period = periodMatch
    ? ({ week: '7d', month: '30d', quarter: '90d' }[periodMatch[1]?.toLowerCase() ?? ''] ?? `${periodMatch[1]}d`)
    : undefined;
  const limitMatch = text.match(/\btop\s+(\d{1,3})\b/i);
  const amountMatch =
    text.match(/\$\s?(\d{1,7}(?:\.\d{1,2})?)\b/) ?? text.match(/\b(\d{1,7}(?:\.\d{1,2})?)\s?(?:usd|dollars?)\b/i);
  return {
    brands,
    brand: brands[0] ?? (input.keyBrandIds.length === 1 ? input.keyBrandIds[0] : undefined),
    user,
    category,
    period,
    limit: limitMatch ? Number(limitMatch[1]) : undefined,
    amount: amountMatch?.[1],
  };
}

const endpointOf = (tool: AgentTool) => `${tool.definition.method.toUpperCase()} ${tool.definition.path}`;

/** Keeps only the arguments the tool accepts (a rule may offer `period` to a tool without one). */
function argumentsFor(tool: AgentTool, args: Record<string, unknown>): Record<string, unknown> {
  const accepted = toolInputJsonSchema(tool).properties;
  return Object.fromEntries(Object.entries(args).filter(([name, value]) => value !== undefined && name in accepted));
}

/**
 * The deterministic planner: each rule whose keywords appear in the question adds one step (in rule order,
 * at most MAX_PLAN_STEPS); a question naming a brand and matching no rule reads the brand's program; a
 * question matching nothing gets an empty plan and a note listing what can be asked.
 */
export function planOffline(input: PlannerInput): Plan {
  const entities = extractEntities(input);
  const byEndpoint = new Map(input.tools.map((tool) => [endpointOf(tool), tool]));
  const steps: PlanStep[] = [];
  const notes: string[] = [];
  const add = (tool: AgentTool, args: Record<string, unknown>) => {
    const step = { tool: tool.name, input: argumentsFor(tool, args) };
    if (steps.some((s) => s.tool === step.tool && JSON.stringify(s.input) === JSON.stringify(step.input))) return;
    if (steps.length < MAX_PLAN_STEPS) steps.push(step);
  };
  let matched = false;
  for (const rule of RULES) {
    if (!rule.when.test(input.question)) continue;
    matched = true;
    const missing = (rule.needs ?? []).filter((need) =>
      need === 'brand'
        ? !entities.brand
        : need === 'user'
          ? !entities.user
          : need === 'amount'
            ? !entities.amount
            : entities.brands.length < 2,
    );
    if (missing.length > 0) {
      notes.push(`For ${rule.topic}, name ${missing.map(describeNeed).join(' and ')} in the question.`);
      continue;
    }
    // `GET /brands/:brandId/perks` needs a brand; without one the catalogue-wide endpoint answers.
    const candidates = rule.endpoints.filter((endpoint) => !endpoint.includes(':brandId') || entities.brand);
    const tool = candidates.map((endpoint) => byEndpoint.get(endpoint)).find(Boolean);
    if (!tool) {
      notes.push(`No tool for ${rule.topic} is available (${rule.endpoints.join(' or ')}).`);
      continue;
    }
    add(tool, rule.args(entities));
  }
  if (!matched && entities.brands.length > 0) {
    const details = byEndpoint.get('GET /brands/:brandId');
    for (const brandId of entities.brands.slice(0, MAX_PLAN_STEPS)) if (details) add(details, { brandId });
  }
  // Said only when a step does read that brand (trending or network stats never do).
  if (entities.brands.length === 0 && entities.brand && steps.some((step) => step.input.brandId === entities.brand)) {
    notes.unshift(`No brand named; using the key's brand ${entities.brand}.`);
  }
  if (steps.length === 0 && !matched) {
    notes.push(
      `The question matched no topic the offline planner knows: ${RULES.map((rule) => rule.topic).join(', ')}` +
        ' (name brands by name, domain or address and users by their email-shaped id).',
    );
  }
  return { steps, notes };
}

function describeNeed(need: Need): string {
  if (need === 'brand') return 'a brand (name, domain or address)';
  if (need === 'user') return 'the user (email-shaped id)';
  if (need === 'amount') return 'the purchase amount in USD ($25)';
  return 'at least two brands';
}
