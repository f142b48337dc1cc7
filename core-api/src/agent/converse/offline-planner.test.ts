import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import { summarize } from './converse.service.ts';
import { planOffline } from './offline-planner.ts';

/** Planner input only: the planner reads names, methods, paths and schemas, never runs a tool. */
function endpoint(name: string, path: string, shape: { params?: string[]; query?: string[] } = {}): AgentTool {
  const object = (names: string[] = []) => z.object(Object.fromEntries(names.map((n) => [n, z.string().optional()])));
  return defineAgentTool({
    name,
    method: 'get',
    path,
    summary: name,
    description: name,
    access: 'public',
    request: { params: object(shape.params), query: object(shape.query) },
    result: z.unknown(),
    example: () => ({}),
    handle: async () => {
      throw new Error('the planner never runs tools');
    },
  });
}

const ALL = [
  endpoint('list_brands', '/brands', { query: ['category', 'limit', 'offset'] }),
  endpoint('get_brand_rankings', '/brands/rankings', { query: ['category', 'limit'] }),
  endpoint('get_brand', '/brands/:brandId', { params: ['brandId'] }),
  endpoint('get_brand_perks', '/brands/:brandId/perks', { params: ['brandId'], query: ['category'] }),
  endpoint('browse_perks', '/perks', { query: ['category', 'maxPrice', 'brandId', 'limit'] }),
  endpoint('get_user_balance', '/users/:userId/brands/:brandId/balance', { params: ['userId', 'brandId'] }),
  endpoint('get_brand_health', '/analytics/brands/:brandId/health', { params: ['brandId'] }),
  endpoint('get_trending', '/network/trending', { query: ['period', 'limit'] }),
  endpoint('get_leaderboard', '/brands/:brandId/leaderboard', {
    params: ['brandId'],
    query: ['metric', 'period', 'limit'],
  }),
  endpoint('compare_brands', '/compare/brands', { query: ['brandIds', 'period'] }),
  endpoint('get_network_stats', '/network/stats'),
  endpoint('route_commerce', '/commerce/route', { query: ['intent', 'category', 'purchaseAmount', 'userId'] }),
  endpoint('stack_commerce', '/commerce/stack', { query: ['brandId', 'purchaseAmount', 'userId'] }),
  endpoint('get_agent_rewards', '/agent/rewards'),
];
const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const brands = {
  acme: { brandId: A, name: 'Acme', domain: 'acme.example' },
  globex: { brandId: B, name: 'Globex', domain: 'globex.example' },
};

describe('planOffline', () => {
  // The phrased-question table over the real tools is converse-questions.test.ts.
  it("uses the key's only brand when the question names none, and says so", () => {
    const plan = planOffline({ question: 'what is the health score?', tools: ALL, brands: [], keyBrandIds: [A] });
    expect(plan.steps).toEqual([{ tool: 'get_brand_health', input: { brandId: A } }]);
    expect(plan.notes).toEqual([`No brand named; using the key's brand ${A}.`]);
  });

  it("does not claim to use the key's brand for a question no step reads a brand for", () => {
    for (const question of ['What is trending this week?', 'How many brands are on the network?']) {
      const plan = planOffline({ question, tools: ALL, brands: [], keyBrandIds: [A] });
      expect(plan.steps.length, question).toBe(1);
      expect(plan.steps[0]?.input, question).not.toHaveProperty('brandId');
      expect(plan.notes.join(' '), question).not.toContain("key's brand");
    }
  });

  it('the offline answer names list items by their label field (event type, archetype), never as "…"', () => {
    const answer = summarize(
      [
        {
          tool: 'get_brand_analytics',
          ok: true,
          data: {
            topEventTypes: [
              { eventType: 'coffee_purchase', accepted: 3 },
              { eventType: 'account_creation', accepted: 1 },
            ],
            personas: [{ archetype: 'newcomer', members: 2 }],
          },
        },
        {
          tool: 'get_leaderboard',
          ok: true,
          data: { leaderboard: [{ userIdentifier: 'zo***@example.com', username: 'zo***', value: 150, rank: 1 }] },
        },
      ],
      [],
      null,
    );
    expect(answer).toContain('leaderboard: 1 (zo***)');
    expect(answer).toContain('topEventTypes: 2 (coffee_purchase, account_creation)');
    expect(answer).toContain('personas: 1 (newcomer)');
    expect(answer).not.toContain('…');
  });

  it('asks for what is missing: a user, two brands to compare', () => {
    const plan = planOffline({
      question: 'compare my balance at Acme',
      tools: ALL,
      brands: [brands.acme],
      keyBrandIds: [],
    });
    expect(plan.steps).toEqual([]);
    expect(plan.notes).toEqual([
      'For comparison, name at least two brands in the question.',
      'For balance, name the user (email-shaped id) in the question.',
    ]);
  });

  it('asks for the purchase amount before routing a purchase', () => {
    const plan = planOffline({ question: 'Where should I buy sneakers?', tools: ALL, brands: [], keyBrandIds: [] });
    expect(plan.steps).toEqual([]);
    expect(plan.notes.join(' ')).toContain('the purchase amount in USD');
  });

  it('never plans more than 5 steps', () => {
    const plan = planOffline({
      question:
        'top brands, trending, network stats, Acme health, Acme perks, Acme leaderboard, compare Acme and Globex',
      tools: ALL,
      brands: [brands.acme, brands.globex],
      keyBrandIds: [],
    });
    expect(plan.steps).toHaveLength(5);
  });

  it('answers an unknown topic with an empty plan and the list of topics', () => {
    const plan = planOffline({ question: 'what is the weather?', tools: ALL, brands: [], keyBrandIds: [] });
    expect(plan.steps).toEqual([]);
    expect(plan.notes[0]).toContain('No tool answers this question');
  });
});
