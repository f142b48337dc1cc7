import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { systemClock } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { agentTools } from '../agent-tools.ts';
import { agentMcpTools } from './agent-mcp-tools.ts';
import { createPtsMcpServer } from './mcp-server.ts';
import { OPERATOR_TOOL_NAMES, operatorMcpTools } from './operator-tools.ts';

// What an LLM host reads from `tools/list`, through a real MCP client and server: every argument described,
// closed sets as enums, and annotations that say truthfully what each tool does to the world.
const definitions = agentTools({ settings: { answerMaxAgeSeconds: 0 } } as unknown as AgentToolDeps);
const context = { principal: undefined, clock: systemClock, logger: pino({ level: 'silent' }) };
const entries = [
  ...agentMcpTools(definitions, context),
  ...operatorMcpTools({ apiUrl: 'http://127.0.0.1:9', brandId: `0x${'1'.repeat(40)}`, securityKey: 'unused' }),
];

let client: Client;
let listed: Tool[];

beforeAll(async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createPtsMcpServer(entries).connect(serverSide);
  client = new Client({ name: 'metadata-test', version: '1.0.0' });
  await client.connect(clientSide);
  listed = (await client.listTools()).tools;
});
afterAll(async () => {
  await client?.close();
});

const tool = (name: string) => {
  const found = listed.find((entry) => entry.name === name);
  if (!found) throw new Error(`${name} is not listed`);
  return found;
};
// An operator (seed) tool sharing an agent tool's name is listed after it (a server offers one of the two).
const operatorTool = (name: string) => {
  const found = listed.findLast((entry) => entry.name === name);
  if (!found || !OPERATOR_TOOL_NAMES.includes(name)) throw new Error(`${name} is not an operator tool`);
  return found;
};
const property = (name: string, argument: string, of = tool) =>
  (of(name).inputSchema.properties as Record<string, { description?: string; enum?: string[] }>)[argument];

describe('MCP tools/list', () => {
  it('lists every agent tool and every operator tool', () => {
    expect(listed.length).toBe(entries.length);
    expect(listed.length).toBeGreaterThan(definitions.length);
  });

  it('describes every argument of every tool', () => {
    const undocumented = listed.flatMap((entry) =>
      Object.entries(entry.inputSchema.properties ?? {})
        .filter(([, schema]) => !(schema as { description?: string }).description?.trim())
        .map(([argument]) => `${entry.name}.${argument}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('offers closed sets as enums', () => {
    expect(property('get_leaderboard', 'metric')?.enum).toEqual(['pts_earned', 'streak', 'activity']);
    expect(property('get_leaderboard', 'period')?.enum).toEqual(['daily', 'weekly', 'monthly', 'all_time']);
    expect(property('get_leaderboard', 'period', operatorTool)?.enum).toEqual([
      'daily',
      'weekly',
      'monthly',
      'all_time',
    ]);
    expect(property('get_leaderboard', 'metric', operatorTool)?.enum).toEqual([
      'pts_earned',
      'streak',
      'activity',
      'claims',
      'ltz_earned',
    ]);
    expect(property('resolve_user', 'platform', operatorTool)?.enum).toEqual(
      expect.arrayContaining(['discord', 'email']),
    );
    expect(property('get_brand_analytics', 'period')?.enum).toEqual(['7d', '30d', '90d']);
    expect(property('list_brands', 'category')?.enum).toEqual(['retail', 'gaming', 'dining', 'travel']);
    expect(property('claim_agent_reward', 'rewardType')?.enum).toEqual(expect.arrayContaining(['onboarding']));
    expect(property('manage_brand_keys', 'action')?.enum).toEqual(['rotate', 'revoke', 'status']);
    // A perk category is open (brands name their own): no enum that would refuse a real one.
    expect(property('browse_perks', 'category')?.enum).toBeUndefined();
  });

  it('annotates every tool, reads as read-only and writes truthfully', () => {
    expect(listed.filter((entry) => !entry.annotations).map((entry) => entry.name)).toEqual([]);
    for (const definition of definitions) {
      const { annotations } = tool(definition.name);
      if (definition.definition.method === 'get') {
        expect(annotations, definition.name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
    }
    expect(tool('converse').annotations?.readOnlyHint).toBe(true);
    for (const name of ['process_event', 'redeem_perk', 'create_brand_perk', 'onboard_brand']) {
      expect(tool(name).annotations?.readOnlyHint, name).toBe(false);
    }
    for (const name of ['redeem_perk', 'manage_brand_keys', 'update_brand_event']) {
      expect(tool(name).annotations?.destructiveHint, name).toBe(true);
    }
    // The seed tools: writes are writes, reads are reads, spending is destructive.
    const seedWrites = ['track_event', 'admin_reward', 'log_activity', 'create_drop', 'claim_drop'];
    for (const name of [...seedWrites, 'update_achievement_progress', 'process_third_party_event', 'redeem_perk']) {
      expect(operatorTool(name).annotations?.readOnlyHint, name).toBe(false);
      expect(operatorTool(name).annotations?.idempotentHint, name).toBe(false);
    }
    for (const name of ['calculate_reward', 'get_leaderboard', 'get_user_stats', 'check_eligibility', 'list_perks']) {
      expect(operatorTool(name).annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    for (const name of ['redeem_perk', 'relay_transaction']) {
      expect(operatorTool(name).annotations?.destructiveHint, name).toBe(true);
    }
    expect(operatorTool('update_leaderboard_stats').annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: true,
    });
    expect(tool('process_event').annotations?.idempotentHint).toBe(false);
    expect(tool('update_brand_perk').annotations?.idempotentHint).toBe(true);
    expect(listed.every((entry) => entry.annotations?.openWorldHint === false)).toBe(true);
  });
});
