import type { AgentTool } from '../agent-tool.ts';
import { toolInputJsonSchema } from '../mcp/tool-arguments.ts';
import { BRAND_CATEGORIES } from '../tools/discovery.tools.ts';
import type { MentionedBrand } from './converse.repository.ts';
import {
  calendarPeriod,
  forAllTime,
  type PeriodChoice,
  type RequestedPeriod,
  requestedPeriod,
  rollingPeriod,
} from './question-period.ts';

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

const EMAIL = /[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/gi;
/** A website domain written in the question (not part of an email). */
const DOMAIN = /(?<![@\w.-])((?:[a-z0-9-]+\.)+[a-z]{2,})\b/i;

interface Entities {
  brands: string[];
  /** A brand named or, failing that, the key's only brand. */
  brand: string | undefined;
  /** The brands to compare: those named, with the key's only brand first when one other is named. */
  comparison: string[];
  user: string | undefined;
  category: string | undefined;
  period: RequestedPeriod | undefined;
  limit: number | undefined;
  /** A purchase amount in USD (`$25`, `25 USD`, `25 dollars`), as the decimal string the tools take. */
  amount: string | undefined;
  /** A price ceiling in pts ("under 100 pts"). */
  maxPrice: number | undefined;
  /** A website domain or brand name to look up ("is shop.example on pts?"). */
  lookup: string | undefined;
  /** The leaderboard metric the question asks for. */
  metric: 'pts_earned' | 'streak' | 'activity';
}

type Need = 'brand' | 'user' | 'twoBrands' | 'amount' | 'lookup';

interface Rule {
  /** What the rule answers, for the notes. */
  topic: string;
  when: RegExp;
  /** Candidate endpoints (`METHOD path` of spec 4.1), best first; the first present in the list is used. */
  endpoints: string[] | ((e: Entities) => string[]);
  needs?: Need[];
  /** When a need is missing: ask for it (default), or stay silent so a broader topic answers. */
  whenMissing?: 'ask' | 'skip';
  /** How the tool takes a period: rolling windows (`7d`), calendar periods (`weekly`), or none (all time). */
  period?: 'rolling' | 'calendar' | 'none';
  /** Said instead of the generic note when the tool has no period and the question asked for one. */
  periodNote?: string;
  /** Topics this one answers more precisely: when it plans a step, those are not planned. */
  supersedes?: string[];
  /** Said whenever the rule plans a step (how to read its answer). */
  explain?: string;
  args(e: Entities): Record<string, unknown>;
}

const MEMBERS = '(members|users|people|customers|players|earners)';

/**
 * The offline planner's rules (docs/agent-api/converse-mcp.md, "Offline planner"): keywords pick the
 * endpoint, entities found in the question fill its parameters, periods are translated to the tool's
 * vocabulary. Tools are found by their spec 4.1 path, so the rules hold whatever the tools are named; a
 * rule whose tool is absent is skipped with a note. Order is the order of the plan's steps.
 */
const RULES: Rule[] = [
  {
    topic: 'cashback comparison',
    when: /\bcashback\b.*\b(compare|compared|vs\.?|versus|between|against)\b|\b(compare|compared)\b.*\bcashback\b/i,
    endpoints: ['GET /compare/cashback'],
    needs: ['twoBrands'],
    supersedes: ['comparison', 'commerce routing', 'deals'],
    args: (e) => ({
      brandIds: e.comparison.slice(0, 5).join(','),
      ...(e.amount ? { purchaseAmount: e.amount } : {}),
      ...(e.category ? { category: e.category } : {}),
    }),
  },
  {
    topic: 'comparison',
    when: /\b(compare|compared|comparing|comparison|versus|vs\.?|better than|against)\b/i,
    endpoints: ['GET /compare/brands'],
    needs: ['twoBrands'],
    period: 'rolling',
    supersedes: ['brand analytics', 'brand rankings'],
    args: (e) => ({ brandIds: e.comparison.slice(0, 5).join(',') }),
  },
  {
    topic: 'perk suggestions',
    when: /\b(new|more|other|additional)\b.*\bperks?\b|\bperks?\b.*\bshould (we|i|they|it) (add|offer|create|launch|introduce)\b|\bsuggest(ed|ions?)?\b.*\bperks?\b|\bperk (ideas|suggestions)\b/i,
    endpoints: ['GET /brands/:brandId/suggestions/perks'],
    needs: ['brand'],
    supersedes: ['perks', 'recommendations', 'perk analytics'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'event suggestions',
    when: /\b(new|more|other|additional)\b.*\b(events?|rules?|actions?|ways to earn)\b|\b(events?|rules?|actions?)\b.*\bshould (we|i|they|it) (add|offer|create|launch|introduce|reward)\b|\bsuggest(ed|ions?)?\b.*\b(events?|rules?|actions?)\b|\b(event|rule) (ideas|suggestions)\b/i,
    endpoints: ['GET /brands/:brandId/suggestions/events'],
    needs: ['brand'],
    supersedes: ['event analytics', 'recommendations', 'brand analytics'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'perk analytics',
    when: /\b(most|least|top|best)\b.*\b(redeemed|popular|claimed)\b.*\bperks?\b|\bperks?\b.*\b(redeemed|redemptions?|performance|performing|sell[- ]through|sold|popular)\b|\bperk (analytics|stats)\b/i,
    endpoints: ['GET /analytics/brands/:brandId/perks'],
    needs: ['brand'],
    period: 'none',
    periodNote:
      'get_brand_perk_analytics ranks perks by all-time redemptions; beside each perk are its redemptions in the last 7 and 30 days.',
    supersedes: ['perks', 'brand rankings', 'brand analytics', 'user stats'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'event analytics',
    when: /\bevent (types?|analytics|stats)\b|\b(which|what|most|top)\b.*\b(events?|actions?)\b.*\b(popular|common|accepted|rejected|refused|performing|used|earn)\b|\bevents?\b.*\b(accepted|rejected|refused|acceptance)\b/i,
    endpoints: ['GET /analytics/brands/:brandId/events'],
    needs: ['brand'],
    period: 'rolling',
    supersedes: ['brand analytics', 'brand rankings'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'members who earned',
    when: new RegExp(`\\bhow many ${MEMBERS}\\b.*\\b(earned|earn|earning|got (rewarded|pts|points)|scored)\\b`, 'i'),
    endpoints: ['GET /brands/:brandId/leaderboard'],
    needs: ['brand'],
    period: 'calendar',
    supersedes: ['member count', 'network statistics', 'user stats', 'leaderboard'],
    explain: "The leaderboard's total is the number of members who earned pts in the period.",
    args: (e) => ({ brandId: e.brand, metric: 'pts_earned' }),
  },
  {
    topic: 'member count',
    when: new RegExp(`\\bhow many\\b.*\\b(${MEMBERS.slice(1, -1)}|active|new)\\b|\\b(active|new) ${MEMBERS}\\b`, 'i'),
    endpoints: ['GET /analytics/brands/:brandId'],
    needs: ['brand'],
    whenMissing: 'skip',
    period: 'rolling',
    supersedes: ['network statistics', 'brand analytics'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'leaderboard',
    when: new RegExp(
      `\\b(leaderboard|top (\\d{1,3} )?${MEMBERS}|who (leads|is leading|is winning|is on top)|(best|most active|most loyal|biggest) ${MEMBERS}|longest streaks?|who has the (longest|best) streak)\\b`,
      'i',
    ),
    endpoints: ['GET /brands/:brandId/leaderboard'],
    needs: ['brand'],
    period: 'calendar',
    supersedes: ['brand rankings', 'user stats', 'member count'],
    args: (e) => ({
      brandId: e.brand,
      ...(e.metric !== 'pts_earned' ? { metric: e.metric } : {}),
      ...(e.limit ? { limit: Math.min(e.limit, 100) } : {}),
    }),
  },
  {
    topic: 'brand rankings',
    when: /\b(top|best|leading|ranking|rankings|ranked|most popular)\b(?!.*\b(members|users|players|customers|leaderboard|perks?|events?)\b)/i,
    endpoints: ['GET /brands/rankings', 'GET /brands'],
    period: 'none',
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
    topic: 'persona',
    when: /\b(persona|archetype|what kind of (member|user|customer|shopper))\b/i,
    endpoints: ['GET /intelligence/users/:userId/persona'],
    needs: ['user'],
    args: (e) => ({ userId: e.user }),
  },
  {
    topic: 'goals',
    when: /\b(how close|how far|goals?|saving (up )?for|until (i|they|he|she|\S+@\S+) can (get|redeem|afford))\b/i,
    endpoints: ['GET /users/:userId/goals'],
    needs: ['user'],
    supersedes: ['perks'],
    args: (e) => ({ userId: e.user, ...(e.brand ? { brandId: e.brand } : {}) }),
  },
  {
    topic: 'brand health',
    when: /\b(health|healthy|grade|weakness(es)?|strengths?|retention|churn)\b/i,
    endpoints: ['GET /analytics/brands/:brandId/health'],
    needs: ['brand'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'brand audience',
    when: /\b(audience|segments?|member base|who (are|is) (our|the|its|their) (members|customers|users))\b/i,
    endpoints: ['GET /intelligence/brands/:brandId/audience'],
    needs: ['brand'],
    supersedes: ['brand analytics'],
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'brand analytics',
    when: /\b(analytics|performance|performing|activity|pts issued|issued|how (is|are) .+ doing|how('s| is) .+ going|how (is|are) (we|it|they) doing)\b/i,
    endpoints: ['GET /analytics/brands/:brandId'],
    needs: ['brand'],
    period: 'rolling',
    args: (e) => ({ brandId: e.brand }),
  },
  {
    topic: 'network analytics',
    when: /\bnetwork (analytics|activity|performance|growth)\b/i,
    endpoints: ['GET /analytics/network'],
    period: 'rolling',
    supersedes: ['network statistics', 'brand analytics'],
    args: () => ({}),
  },
  {
    topic: 'network flows',
    when: /\b(flows?|move between|switch(ing)? between|cross[- ]brand|members? (also|shared))\b/i,
    endpoints: ['GET /network/flows'],
    period: 'rolling',
    supersedes: ['network statistics'],
    args: () => ({}),
  },
  {
    topic: 'trending',
    when: /\b(trending|trend|trends|hot|momentum)\b/i,
    endpoints: ['GET /network/trending'],
    period: 'rolling',
    supersedes: ['brand rankings'],
    args: (e) => ({ ...(e.limit ? { limit: Math.min(e.limit, 50) } : {}) }),
  },
  {
    topic: 'perks',
    when: /\b(perks?|redeem|rewards? (can|to|i can))\b/i,
    // A price ceiling or no brand: the catalogue-wide endpoint (it filters by brand too).
    endpoints: (e) =>
      e.maxPrice !== undefined || !e.brand ? ['GET /perks'] : ['GET /brands/:brandId/perks', 'GET /perks'],
    args: (e) => ({
      ...(e.brand ? { brandId: e.brand } : {}),
      ...(e.category ? { category: e.category } : {}),
      ...(e.maxPrice !== undefined ? { maxPrice: e.maxPrice } : {}),
    }),
  },
  {
    topic: 'recommendations',
    when: /\b(recommend|recommendations?|suggest (me|for)|what should (i|they|he|she|\S+@\S+) (redeem|get|do))\b/i,
    endpoints: ['GET /intelligence/users/:userId/recommendations'],
    needs: ['user'],
    supersedes: ['perks'],
    args: (e) => ({ userId: e.user, ...(e.limit ? { limit: Math.min(e.limit, 20) } : {}) }),
  },
  {
    topic: 'deals',
    when: /\b(deals?|offers|discounts?)\b/i,
    endpoints: ['GET /deals'],
    supersedes: ['perks'],
    args: (e) => ({ ...(e.category ? { category: e.category } : {}), ...(e.user ? { userId: e.user } : {}) }),
  },
  {
    topic: 'purchase stack',
    when: /\b(stack|what (would|will|do|does) (i|they|he|she|\S+@\S+) (earn|get|collect)\b.*\b(buy|buying|spend|spending|purchase))/i,
    endpoints: ['GET /commerce/stack'],
    needs: ['user', 'brand', 'amount'],
    supersedes: ['user stats', 'commerce routing'],
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
    supersedes: ['user stats'],
    args: () => ({}),
  },
  {
    topic: 'brand lookup',
    when: /\b(is|are) \S+ (on|in|part of|a member of) (pts|the network)\b|\bcheck (the )?(brand|domain|website)\b|\bis there a brand\b/i,
    endpoints: ['GET /brands/check'],
    needs: ['lookup'],
    supersedes: ['network statistics'],
    args: (e) => ({ query: e.lookup }),
  },
  {
    topic: 'network statistics',
    when: /\b(network|how many (brands|users|members)|platform stats|total rewards)\b/i,
    endpoints: ['GET /network/stats', 'GET /network/info'],
    args: () => ({}),
  },
];

/** Questions that ask converse to act: it reads only (docs/decisions.md, "converse and the MCP server"). */
const WRITE_REQUEST =
  /^\s*(please\s+)?(send|give|award|grant|mint|transfer|create|make|delete|remove|update|change|edit|rotate|revoke|redeem|claim|pay|add|set|pause)\b/i;

function extractEntities(input: PlannerInput): Entities {
  const text = input.question;
  const brands = input.brands.map((brand) => brand.brandId);
  const keyBrand = input.keyBrandIds.length === 1 ? input.keyBrandIds[0] : undefined;
  const user = (text.match(EMAIL) ?? [])[0]?.toLowerCase();
  const category = BRAND_CATEGORIES.find((name) => new RegExp(`\\b${name}\\b`, 'i').test(text));
  const limitMatch = text.match(/\btop\s+(\d{1,3})\b/i);
  const amountMatch =
    text.match(/\$\s?(\d{1,7}(?:\.\d{1,2})?)\b/) ?? text.match(/\b(\d{1,7}(?:\.\d{1,2})?)\s?(?:usd|dollars?)\b/i);
  const priceMatch = text.match(
    /\b(?:under|below|less than|at most|cheaper than|up to)\s+(\d{1,9})\s*(?:pts|points|tokens)?\b/i,
  );
  const domain = text.replace(EMAIL, ' ').match(DOMAIN)?.[1]?.toLowerCase();
  const comparison = brands.length === 1 && keyBrand && brands[0] !== keyBrand ? [keyBrand, ...brands] : brands;
  return {
    brands,
    brand: brands[0] ?? keyBrand,
    comparison,
    user,
    category,
    period: requestedPeriod(text),
    limit: limitMatch ? Number(limitMatch[1]) : undefined,
    amount: amountMatch?.[1],
    maxPrice: priceMatch ? Number(priceMatch[1]) : undefined,
    lookup: domain ?? input.brands[0]?.domain,
    metric: /\bstreaks?\b/i.test(text) ? 'streak' : /\b(active|activity)\b/i.test(text) ? 'activity' : 'pts_earned',
  };
}

const endpointOf = (tool: AgentTool) => `${tool.definition.method.toUpperCase()} ${tool.definition.path}`;

/** Keeps only the arguments the tool accepts (a rule may offer `period` to a tool without one). */
function argumentsFor(tool: AgentTool, args: Record<string, unknown>): Record<string, unknown> {
  const accepted = toolInputJsonSchema(tool).properties;
  return Object.fromEntries(Object.entries(args).filter(([name, value]) => value !== undefined && name in accepted));
}

/** The rolling windows a tool's `period` takes (its enum), or none. */
function periodWindows(tool: AgentTool): string[] {
  const property = toolInputJsonSchema(tool).properties.period as { enum?: unknown[] } | undefined;
  return (property?.enum ?? []).filter((value): value is string => typeof value === 'string');
}

/** The period argument for a step, and what to say when the tool cannot answer exactly the period asked. */
function choosePeriod(rule: Rule, tool: AgentTool, asked: RequestedPeriod | undefined): PeriodChoice {
  if (!asked || !rule.period) return { value: undefined, note: undefined };
  if (rule.period === 'calendar') return calendarPeriod(tool.name, asked);
  const windows = rule.period === 'rolling' ? periodWindows(tool) : [];
  if (windows.length > 0) return rollingPeriod(tool.name, asked, windows);
  const choice = forAllTime(tool.name, asked);
  return choice.note && rule.periodNote ? { value: undefined, note: rule.periodNote } : choice;
}

function isMissing(need: Need, e: Entities): boolean {
  if (need === 'brand') return !e.brand;
  if (need === 'user') return !e.user;
  if (need === 'amount') return !e.amount;
  if (need === 'lookup') return !e.lookup;
  return e.comparison.length < 2;
}

/**
 * The deterministic planner: each rule whose keywords appear in the question plans one step (in rule order,
 * at most MAX_PLAN_STEPS), except rules another planned rule supersedes; a question naming a brand and
 * matching no rule reads the brand's program; a request to act, or a question no tool answers, gets an
 * empty plan and a note that says so plainly.
 */
export function planOffline(input: PlannerInput): Plan {
  if (WRITE_REQUEST.test(input.question)) {
    return {
      steps: [],
      notes: [
        'converse only answers questions: it never spends, mints or changes a program. Call the tool for that ' +
          'action directly (for example process_event, redeem_perk, create_brand_event or create_brand_perk).',
      ],
    };
  }
  const entities = extractEntities(input);
  const byEndpoint = new Map(input.tools.map((tool) => [endpointOf(tool), tool]));
  const notes: string[] = [];
  const { planned, matched } = matchRules(input.question, entities, byEndpoint, notes);
  const superseded = new Set(planned.flatMap((step) => step.rule.supersedes ?? []));
  const steps: PlanStep[] = [];
  const add = (tool: AgentTool, args: Record<string, unknown>, note?: string) => {
    const step = { tool: tool.name, input: argumentsFor(tool, args) };
    if (steps.some((s) => s.tool === step.tool && JSON.stringify(s.input) === JSON.stringify(step.input))) return;
    if (steps.length >= MAX_PLAN_STEPS) return;
    steps.push(step);
    if (note) notes.push(note);
  };
  for (const step of planned) if (!superseded.has(step.rule.topic)) add(step.tool, step.args, step.note);

  if (!matched && entities.brands.length > 0) {
    const details = byEndpoint.get('GET /brands/:brandId');
    for (const brandId of entities.brands.slice(0, MAX_PLAN_STEPS)) if (details) add(details, { brandId });
  }
  // Said only when a step does read that brand (trending or network stats never do).
  const keyBrandUsed = entities.brands.length === 0 && entities.brand;
  if (keyBrandUsed && steps.some((step) => step.input.brandId === entities.brand)) {
    notes.unshift(`No brand named; using the key's brand ${entities.brand}.`);
  }
  if (entities.brands.length === 1 && entities.comparison.length === 2 && steps.some((s) => 'brandIds' in s.input)) {
    notes.unshift(`Comparing the key's brand ${entities.comparison[0]} with ${entities.brands[0]}.`);
  }
  if (steps.length === 0 && !matched) {
    notes.push(
      'No tool answers this question. The offline planner answers questions about: ' +
        `${RULES.map((rule) => rule.topic).join(', ')} (name brands by name, domain or address, users by their ` +
        'email-shaped id, and periods as today, this week, this month or the last 7, 30 or 90 days).',
    );
  }
  return { steps, notes };
}

type PlannedRule = { rule: Rule; tool: AgentTool; args: Record<string, unknown>; note?: string };

/**
 * The rules whose keywords appear in `question`, in rule order, each with its tool and arguments; a rule
 * missing what it needs, or whose tool is absent, adds a note instead. `matched`: some rule applied.
 */
function matchRules(
  question: string,
  entities: Entities,
  byEndpoint: Map<string, AgentTool>,
  notes: string[],
): { planned: PlannedRule[]; matched: boolean } {
  const planned: PlannedRule[] = [];
  let matched = false;
  for (const rule of RULES) {
    if (!rule.when.test(question)) continue;
    const missing = (rule.needs ?? []).filter((need) => isMissing(need, entities));
    if (missing.length > 0 && rule.whenMissing === 'skip') continue;
    matched = true;
    if (missing.length > 0) {
      notes.push(`For ${rule.topic}, name ${missing.map(describeNeed).join(' and ')} in the question.`);
      continue;
    }
    const endpoints = typeof rule.endpoints === 'function' ? rule.endpoints(entities) : rule.endpoints;
    const tool = endpoints.map((endpoint) => byEndpoint.get(endpoint)).find(Boolean);
    if (!tool) {
      notes.push(`No tool for ${rule.topic} is available (${endpoints.join(' or ')}).`);
      continue;
    }
    const period = choosePeriod(rule, tool, entities.period);
    const args = { ...rule.args(entities), ...(period.value ? { period: period.value } : {}) };
    planned.push({ rule, tool, args, note: [period.note, rule.explain].filter(Boolean).join(' ') || undefined });
  }
  return { planned, matched };
}

function describeNeed(need: Need): string {
  if (need === 'brand') return 'a brand (name, domain or address)';
  if (need === 'user') return 'the user (email-shaped id)';
  if (need === 'amount') return 'the purchase amount in USD ($25)';
  if (need === 'lookup') return 'the website domain or brand name to look up';
  return 'at least two brands';
}
