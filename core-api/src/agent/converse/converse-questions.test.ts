import { describe, expect, it } from 'vitest';
import type { AgentPrincipal } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { agentTools } from '../agent-tools.ts';
import type { MentionedBrand } from './converse.repository.ts';
import { plannableTools } from './converse.service.ts';
import { type PlanStep, planOffline } from './offline-planner.ts';

// The offline planner over the REAL tool list as converse serves it (read tools a key may call), so a tool's
// path, arguments and period vocabulary are the ones an agent meets. The planner reads definitions only.
const tools = plannableTools(agentTools({ settings: { answerMaxAgeSeconds: 0 } } as unknown as AgentToolDeps), {
  brandIds: [],
} as unknown as AgentPrincipal);

const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const C = '0xcccccccccccccccccccccccccccccccccccccccc';
const acme: MentionedBrand = { brandId: A, name: 'Acme', domain: 'acme.example' };
const globex: MentionedBrand = { brandId: B, name: 'Globex', domain: 'globex.example' };
const initech: MentionedBrand = { brandId: C, name: 'Initech', domain: 'initech.example' };

interface Case {
  question: string;
  /** Brands the question names (what findMentionedBrands finds in the database). */
  named?: MentionedBrand[];
  /** The caller's key is a brand manager's key for this brand. */
  keyBrand?: string;
  steps: PlanStep[];
  /** Each must appear in one of the plan's notes (what the planner says plainly). */
  says?: string[];
}

const step = (tool: string, input: Record<string, unknown> = {}): PlanStep => ({ tool, input });

// A brand manager's questions first (the key of brand A), then members', agents' and the network's.
const CASES: Case[] = [
  // Comparisons
  {
    question: 'How are we doing compared to Globex?',
    named: [globex],
    keyBrand: A,
    steps: [step('compare_brands', { brandIds: `${A},${B}` })],
    says: ["Comparing the key's brand"],
  },
  {
    question: 'Compare Acme vs Globex',
    named: [acme, globex],
    steps: [step('compare_brands', { brandIds: `${A},${B}` })],
  },
  {
    question: 'How does Acme compare to Globex and Initech over the last 90 days?',
    named: [acme, globex, initech],
    steps: [step('compare_brands', { brandIds: `${A},${B},${C}`, period: '90d' })],
  },
  {
    question: 'Compare us against Globex this month',
    named: [globex],
    keyBrand: A,
    steps: [step('compare_brands', { brandIds: `${A},${B}`, period: '30d' })],
    says: ['"this month" is taken as the last 30 days'],
  },
  {
    question: 'Compare the cashback of Acme and Globex on a $50 purchase',
    named: [acme, globex],
    steps: [step('compare_cashback', { brandIds: `${A},${B}`, purchaseAmount: '50' })],
  },
  { question: 'compare Acme', named: [acme], steps: [], says: ['For comparison, name at least two brands'] },
  // Leaderboards and rankings of members
  {
    question: 'Top members this week',
    keyBrand: A,
    steps: [step('get_leaderboard', { brandId: A, period: 'weekly' })],
  },
  {
    question: 'Who are our top 5 members this month?',
    keyBrand: A,
    steps: [step('get_leaderboard', { brandId: A, period: 'monthly', limit: 5 })],
  },
  { question: 'Show the Acme leaderboard', named: [acme], steps: [step('get_leaderboard', { brandId: A })] },
  {
    question: 'Who has the longest streak at Acme?',
    named: [acme],
    steps: [step('get_leaderboard', { brandId: A, metric: 'streak' })],
  },
  {
    question: 'Most active members today',
    keyBrand: A,
    steps: [step('get_leaderboard', { brandId: A, metric: 'activity', period: 'daily' })],
  },
  {
    question: 'Top members over the last 30 days',
    keyBrand: A,
    steps: [step('get_leaderboard', { brandId: A, period: 'monthly' })],
    says: ['counts calendar periods, not the last 30 days; this answers this calendar month'],
  },
  {
    question: 'Who leads the leaderboard of all time at Globex?',
    named: [globex],
    steps: [step('get_leaderboard', { brandId: B, period: 'all_time' })],
  },
  { question: 'top members', steps: [], says: ['For leaderboard, name a brand'] },
  // Counting members
  {
    question: 'How many members earned today?',
    keyBrand: A,
    steps: [step('get_leaderboard', { brandId: A, metric: 'pts_earned', period: 'daily' })],
    says: ["The leaderboard's total is the number of members who earned"],
  },
  {
    question: 'How many members earned pts at Acme this week?',
    named: [acme],
    steps: [step('get_leaderboard', { brandId: A, metric: 'pts_earned', period: 'weekly' })],
  },
  {
    question: 'How many active members do we have this month?',
    keyBrand: A,
    steps: [step('get_brand_analytics', { brandId: A, period: '30d' })],
  },
  {
    question: 'How many new members did Acme get in the last 7 days?',
    named: [acme],
    steps: [step('get_brand_analytics', { brandId: A, period: '7d' })],
  },
  {
    question: 'How many members joined today?',
    keyBrand: A,
    steps: [step('get_brand_analytics', { brandId: A, period: '7d' })],
    says: ['has no window for today'],
  },
  // Perks a brand offers and how they do
  {
    question: 'Most redeemed perks this month',
    keyBrand: A,
    steps: [step('get_brand_perk_analytics', { brandId: A })],
    says: ['ranks perks by all-time redemptions'],
  },
  {
    question: 'Which perks are performing best at Acme?',
    named: [acme],
    steps: [step('get_brand_perk_analytics', { brandId: A })],
  },
  { question: 'What new perks should we add?', keyBrand: A, steps: [step('suggest_brand_perks', { brandId: A })] },
  { question: 'Suggest perks for Globex', named: [globex], steps: [step('suggest_brand_perks', { brandId: B })] },
  {
    question: 'What events should we reward next?',
    keyBrand: A,
    steps: [step('suggest_brand_events', { brandId: A })],
  },
  {
    question: 'Which events are most popular at Acme this week?',
    named: [acme],
    steps: [step('get_brand_event_analytics', { brandId: A, period: '7d' })],
    says: ['"this week" is taken as the last 7 days'],
  },
  {
    question: 'How many events were rejected at Acme over the last 30 days?',
    named: [acme],
    steps: [step('get_brand_event_analytics', { brandId: A, period: '30d' })],
  },
  // A brand's analytics and health
  {
    question: 'How is Acme doing this quarter?',
    named: [acme],
    steps: [step('get_brand_analytics', { brandId: A, period: '90d' })],
  },
  {
    question: 'How are we doing?',
    keyBrand: A,
    steps: [step('get_brand_analytics', { brandId: A })],
    says: ["No brand named; using the key's brand"],
  },
  {
    question: 'Brand performance over the last 30 days',
    keyBrand: A,
    steps: [step('get_brand_analytics', { brandId: A, period: '30d' })],
  },
  {
    question: 'Acme analytics all time',
    named: [acme],
    steps: [step('get_brand_analytics', { brandId: A, period: '90d' })],
    says: ['has no all-time window'],
  },
  { question: 'How healthy is Acme?', named: [acme], steps: [step('get_brand_health', { brandId: A })] },
  { question: 'What is our retention like?', keyBrand: A, steps: [step('get_brand_health', { brandId: A })] },
  { question: "Who is Globex's audience?", named: [globex], steps: [step('get_brand_audience', { brandId: B })] },
  { question: 'Tell me about Acme', named: [acme], steps: [step('get_brand', { brandId: A })] },
  // Members
  {
    question: 'Balance of bo@example.com at Globex',
    named: [globex],
    steps: [step('get_user_balance', { userId: 'bo@example.com', brandId: B })],
  },
  {
    question: 'What has mia@example.com earned and redeemed at Acme?',
    named: [acme],
    steps: [step('get_user_stats', { userId: 'mia@example.com', brandId: A })],
  },
  {
    question: "mia@example.com's portfolio across brands",
    steps: [step('get_user_portfolio', { userId: 'mia@example.com' })],
  },
  {
    question: 'What kind of member is mia@example.com?',
    steps: [step('get_user_persona', { userId: 'mia@example.com' })],
  },
  {
    question: 'How close is mia@example.com to a perk at Acme?',
    named: [acme],
    steps: [step('get_user_goals', { userId: 'mia@example.com', brandId: A })],
  },
  {
    question: 'What should mia@example.com redeem?',
    steps: [step('get_user_recommendations', { userId: 'mia@example.com' })],
  },
  {
    question: 'compare my balance at Acme',
    named: [acme],
    steps: [],
    says: ['For comparison, name at least two brands', 'For balance, name the user'],
  },
  // Perks and deals for shoppers
  { question: 'What perks does Acme offer?', named: [acme], steps: [step('get_brand_perks', { brandId: A })] },
  { question: 'Any travel perks under 200 pts?', steps: [step('browse_perks', { category: 'travel', maxPrice: 200 })] },
  {
    question: 'Dining deals for mia@example.com',
    steps: [step('find_deals', { category: 'dining', userId: 'mia@example.com' })],
  },
  {
    question: 'Where should I shop for dining with $40?',
    steps: [step('route_commerce', { purchaseAmount: '40', category: 'dining' })],
  },
  {
    question: 'What would mia@example.com earn buying 25.50 USD at Acme?',
    named: [acme],
    steps: [step('stack_commerce', { brandId: A, userId: 'mia@example.com', purchaseAmount: '25.50' })],
  },
  { question: 'Where should I buy sneakers?', steps: [], says: ['the purchase amount in USD'] },
  // The network
  { question: 'Top 3 gaming brands', steps: [step('get_brand_rankings', { category: 'gaming', limit: 3 })] },
  { question: 'What is trending this month?', steps: [step('get_trending', { period: '30d' })] },
  {
    question: 'What is trending today?',
    steps: [step('get_trending', { period: '7d' })],
    says: ['has no window for today'],
  },
  { question: 'How many brands are on the network?', steps: [step('get_network_stats')] },
  { question: 'Network activity over the last 90 days', steps: [step('get_network_analytics', { period: '90d' })] },
  { question: 'How do members flow between brands this month?', steps: [step('get_network_flows', { period: '30d' })] },
  { question: 'Is shop.example on pts?', steps: [step('check_brand', { query: 'shop.example' })] },
  { question: 'Show my agent rewards', steps: [step('get_agent_rewards')] },
  // Nothing answers, or converse is asked to act
  { question: "What's the weather in Paris?", steps: [], says: ['No tool answers this question'] },
  { question: 'Send 100 pts to bo@example.com', steps: [], says: ['converse only answers questions'] },
  {
    question: 'Create a perk called Free coffee for Acme',
    named: [acme],
    steps: [],
    says: ['it never spends, mints or changes a program'],
  },
];

describe('converse: the offline planner on phrased questions', () => {
  it('is tested on at least 40 questions', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(CASES)('$question', ({ question, named = [], keyBrand, steps, says = [] }) => {
    const plan = planOffline({ question, tools, brands: named, keyBrandIds: keyBrand ? [keyBrand] : [] });
    expect(plan.steps).toEqual(steps);
    for (const words of says) expect(plan.notes.join('\n')).toContain(words);
  });

  it('says every time it answers a period other than the one asked', () => {
    for (const { question, named = [], keyBrand } of CASES) {
      const plan = planOffline({ question, tools, brands: named, keyBrandIds: keyBrand ? [keyBrand] : [] });
      const askedToday = /\btoday\b/i.test(question);
      const answeredToday = plan.steps.some((s) => s.input.period === 'daily' || s.input.period === '1d');
      if (askedToday && plan.steps.length > 0 && !answeredToday) {
        expect(plan.notes.join('\n'), question).toMatch(/no window for today/);
      }
    }
  });
});
