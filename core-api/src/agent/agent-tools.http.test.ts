import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentKeyCredentials,
  agentRequest,
  exampleRequest,
  type SeededAgentFixture,
  seedAgentFixture,
} from '../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { STALE_FACTOR } from '../caching/answer-cache.ts';
import type { AgentAccess, AgentTool } from './agent-tool.ts';
import { agentTools } from './agent-tools.ts';

// Every tool of agentTools() over HTTP with its own example: 200, the envelope, `data` parsing with the
// tool's `result`; and the access rules of its level. New tools are covered as they join the list.

let platform: TestPlatform;
let fixture: SeededAgentFixture;
let tools: AgentTool[];

const keyFor = (access: AgentAccess): AgentKeyCredentials | undefined => {
  if (access === 'public') return undefined;
  if (access === 'manage') return fixture.keys.manage;
  if (access === 'onboard') return fixture.keys.onboard;
  if (access === 'converse') return fixture.keys.pro;
  return fixture.keys.free;
};

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  fixture = await seedAgentFixture(platform);
  tools = agentTools(platform.services.agent.toolDeps);
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

// Before the every-tool pass below, whose examples add events and redemptions.
describe('get_network_stats', () => {
  it('counts brands, users and rewards from the real tables', async () => {
    const res = await agentRequest(platform, { method: 'GET', path: '/network/stats' });
    expect(res.status).toBe(200);
    const db = platform.deps.db;
    const brands = await db.selectFrom('brands').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const mints = await db.selectFrom('reward_mints').select(['amount', 'status']).execute();
    const confirmed = mints.filter((m) => m.status === 'confirmed').reduce((sum, m) => sum + BigInt(m.amount), 0n);
    // The fixture: member 3×100 + check-in 10, peer 100, at the other brand 100 + 100 → 610 pts.
    expect(confirmed).toBe(610n);
    expect(res.body.data).toMatchObject({
      brands: Number(brands.n),
      rewards: { confirmed: '610', pending: '0', failed: '0', totalIssued: '610', count: mints.length },
    });
    // The member, the peer and the other brand's member.
    const users = await db.selectFrom('users').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(res.body.data.users).toBe(Number(users.n));
    expect(res.body.data.users).toBe(3);
    // An agent identity does not count as a user.
    const before = res.body.data.users;
    await db
      .insertInto('users')
      .values({ email: 'agent_ak_test@agents.pts', created_at: platform.clock.now() })
      .execute();
    await db.insertInto('users').values({ email: 'agentx@example.com', created_at: platform.clock.now() }).execute();
    // Aggregates are answered from the answer cache for PTS_AGENT_ANSWER_MAX_AGE_SECONDS: still the old
    // count at once; a fresh one once the answer is older than its stale limit (STALE_FACTOR × max age).
    const cached = await agentRequest(platform, { method: 'GET', path: '/network/stats' });
    expect(cached.body.data.users).toBe(before);
    platform.clock.advance(STALE_FACTOR * platform.deps.config.PTS_AGENT_ANSWER_MAX_AGE_SECONDS * 1000);
    const after = await agentRequest(platform, { method: 'GET', path: '/network/stats' });
    expect(after.body.data.users).toBe(before + 1);
  });

  it('describes the chain and the purchase rate', async () => {
    const res = await agentRequest(platform, { method: 'GET', path: '/network/info' });
    expect(res.body.data).toMatchObject({
      chain: { id: platform.deps.chain.chainId, mode: 'local' },
      contracts: { rewardToken: platform.deps.chain.contracts.rewardToken },
      exchangeRates: { ptsPerUsd: 1000, usdPerPts: '0.001' },
    });
  });
});

describe('every agent tool over HTTP', () => {
  it('has unique names and unique method + path', () => {
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    const routes = tools.map((t) => `${t.definition.method} ${t.definition.path}`);
    expect(new Set(routes).size).toBe(routes.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it('answers each example with a 200 envelope whose data fits the result schema', async () => {
    for (const tool of tools) {
      // A fresh timestamp: examples that change something are new requests, not replays.
      platform.clock.advance(1_000);
      const key = keyFor(tool.definition.access);
      const res = await agentRequest(platform, exampleRequest(tool, fixture, key));
      expect(res.status, `${tool.name}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.meta).toEqual({ tool: tool.name, timestamp: platform.clock.now().toISOString() });
      const parsed = tool.definition.result.safeParse(res.body.data);
      expect(parsed.success, `${tool.name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it('refuses unsigned calls to signed tools (401) and keys without the permission (403)', async () => {
    for (const tool of tools) {
      const { access } = tool.definition;
      if (access === 'public' || access === 'optional') continue;
      platform.clock.advance(1_000);
      const unsigned = await agentRequest(platform, exampleRequest(tool, fixture));
      expect(unsigned.status, tool.name).toBe(401);
      expect(unsigned.body.error.code).toBe('auth_required');
      if (access === 'key') continue;
      // The free key has no brands, no permissions and the free tier.
      const denied = await agentRequest(platform, exampleRequest(tool, fixture, fixture.keys.free));
      expect(denied.status, tool.name).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
    }
  });
});

describe('docs', () => {
  it('names every tool in docs/agent-api.md or docs/agent-api/*.md', () => {
    const root = join(import.meta.dirname, '../../../docs');
    const dir = join(root, 'agent-api');
    let text = readFileSync(join(root, 'agent-api.md'), 'utf8');
    try {
      for (const file of readdirSync(dir)) if (file.endsWith('.md')) text += readFileSync(join(dir, file), 'utf8');
    } catch {
      // no per-area docs yet
    }
    const missing = tools.map((t) => t.name).filter((name) => !text.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
