import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type CreatedBrand, signAgentRequest } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import { actionsTools } from '../tools/actions.tools.ts';
import { converseTools } from '../tools/converse.tools.ts';
import { discoveryTools } from '../tools/discovery.tools.ts';
import { agentMcpTools } from './agent-mcp-tools.ts';
import { createPtsMcpServer } from './mcp-server.ts';
import { OPERATOR_TOOL_NAMES } from './operator-tools.ts';

const ROOT = resolve(import.meta.dirname, '../../../..');
const LEGACY_BODY = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });

let platform: TestPlatform;
let brand: CreatedBrand;
let tools: AgentTool[];

const proKey: AgentPrincipal = {
  keyId: 'ak_mcp',
  name: 'mcp test',
  brandIds: [],
  canManageProgram: false,
  canOnboard: false,
  tier: 'pro',
  ratePerMinute: 20,
};

// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Result = any;
/** The JSON of a tool result's text content. */
const json = (result: Result) => JSON.parse(result.content[0].text);

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000' });
  brand = await platform.createBrand({
    name: 'Orbit Books',
    domain: 'orbit-books.example',
    rules: [
      { eventType: 'first_purchase', rewardAmount: 70, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'streak_milestone', rewardAmount: 0, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  // The key acts for the brand: member reads are scoped to a key's brands.
  proKey.brandIds.push(brand.brandId);
  const d = platform.services.agent.toolDeps;
  tools = [...discoveryTools(d), ...actionsTools(d), ...converseTools(d, () => tools)];
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** An SDK client connected in memory to a server offering the agent tools for `principal`. */
async function inMemoryClient(principal: AgentPrincipal): Promise<Client> {
  const server = createPtsMcpServer(
    agentMcpTools(tools, { principal, clock: platform.clock, logger: pino({ level: 'silent' }) }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('agent tools as MCP tools', () => {
  it('lists each agent tool with its description and params ∪ query ∪ body as one object schema', async () => {
    const client = await inMemoryClient(proKey);
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    const balance = listed.find((tool) => tool.name === 'get_user_balance');
    expect(balance?.inputSchema).toMatchObject({
      type: 'object',
      properties: { userId: { type: 'string' }, brandId: { type: 'string' } },
      required: ['userId', 'brandId'],
    });
    expect(listed.find((tool) => tool.name === 'converse')?.inputSchema).toMatchObject({
      properties: { query: { type: 'string', maxLength: 1000 } },
      required: ['query'],
    });
    await client.close();
  });

  it('reads real state: the balance rises after an event', async () => {
    const client = await inMemoryClient(proKey);
    const before = await client.callTool({
      name: 'get_user_balance',
      arguments: { userId: 'ivy@example.com', brandId: brand.brandId },
    });
    // Nobody the brand knows yet.
    expect(before.isError).toBe(true);
    expect(json(before).error).toMatchObject({ code: 'not_found', status: 404 });
    const event = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'first_purchase', userEmail: 'ivy@example.com' },
      brand.securityKey,
    );
    expect(event.status).toBe(200);
    await waitForMintsSettled(platform);
    const after = await client.callTool({
      name: 'get_user_balance',
      arguments: { userId: 'IVY@example.com', brandId: brand.brandId.toUpperCase().replace('0X', '0x') },
    });
    expect(after.isError).toBeFalsy();
    expect(json(after)).toMatchObject({ balance: 70, totalEarned: 70, totalRedeemed: 0 });
    await client.close();
  });

  it('answers invalid input, unknown resources, unknown tools and missing permissions as isError content', async () => {
    const client = await inMemoryClient(proKey);
    const invalid = await client.callTool({
      name: 'get_user_balance',
      arguments: { userId: 'nope', brandId: brand.brandId },
    });
    expect(invalid.isError).toBe(true);
    expect(json(invalid).error).toMatchObject({ code: 'validation', status: 400, reason: 'VALIDATION_ERROR' });
    expect(json(invalid).error.message).toContain('userId');

    const missing = await client.callTool({ name: 'get_brand', arguments: { brandId: `0x${'12'.repeat(20)}` } });
    expect(json(missing).error).toMatchObject({ code: 'not_found', status: 404 });

    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(json(unknown).error.code).toBe('not_found');
    await client.close();

    const free = await inMemoryClient({ ...proKey, tier: 'free' });
    const refused = await free.callTool({ name: 'converse', arguments: { query: 'top brands' } });
    expect(json(refused).error).toMatchObject({ code: 'forbidden', status: 403 });
    await free.close();
  });

  it('runs converse as an MCP tool', async () => {
    const client = await inMemoryClient(proKey);
    const result = await client.callTool({
      name: 'converse',
      arguments: { query: 'What is the balance of ivy@example.com at Orbit Books?' },
    });
    expect(result.isError).toBeFalsy();
    expect(json(result)).toMatchObject({
      planner: 'offline',
      plan: [{ tool: 'get_user_balance', input: { userId: 'ivy@example.com', brandId: brand.brandId } }],
      steps: [{ ok: true, data: { balance: 70 } }],
    });
    await client.close();
  });
});

/** `npm run -s mcp` spawned with `env`, as an MCP client configuration runs it. */
async function stdioClient(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: 'npm',
    args: ['run', '-s', 'mcp'],
    cwd: ROOT,
    env: { ...getDefaultEnvironment(), PTS_API_URL: platform.url, LOG_LEVEL: 'info', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'stdio-test', version: '1' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('MCP over stdio: brand operator (seed) tools', () => {
  let client: Client;
  let stderr: () => string;

  beforeAll(async () => {
    ({ client, stderr } = await stdioClient({
      PTS_BRAND_ID: brand.brandId,
      PTS_BRAND_SECURITY_KEY: brand.securityKey,
    }));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  it('lists every operator tool with a description and an object schema', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual([...OPERATOR_TOOL_NAMES]);
    for (const tool of listed) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(listed.find((tool) => tool.name === 'track_event')?.inputSchema.required).toEqual([
      'eventType',
      'userIdentifier',
    ]);
    // Logs went to stderr; stdout carried only MCP messages (the client would have failed otherwise). The two
    // pipes are not ordered with each other: the log line may arrive after the first answer.
    await expect.poll(() => stderr(), { timeout: 10_000 }).toContain('pts MCP server on stdio');
    expect(stderr()).not.toContain(brand.securityKey);
  });

  it('tracks an event: the balance rises by the rule amount', async () => {
    const user = 'stdio.user@example.com';
    const before = json(await client.callTool({ name: 'get_user_balance', arguments: { userEmail: user } }));
    expect(before).toMatchObject({ balance: 0, pending: 0 });

    const tracked = await client.callTool({
      name: 'track_event',
      arguments: { eventType: 'first_purchase', userIdentifier: { email: user }, externalId: 'order-1' },
    });
    expect(tracked.isError, JSON.stringify(tracked)).toBeFalsy();
    expect(json(tracked)).toMatchObject({ success: true, rewardAmount: 70, reward: { amount: 70 } });
    await waitForMintsSettled(platform);

    const after = json(await client.callTool({ name: 'get_user_balance', arguments: { userEmail: user } }));
    expect(after).toMatchObject({ balance: 70, pending: 0 });
    const row = await platform.deps.db
      .selectFrom('events')
      .select(['brand_id', 'event_type'])
      .where('user_email', '=', user)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ brand_id: brand.brandId, event_type: 'first_purchase' });

    // The same order again is a duplicate, not a second reward.
    const again = await client.callTool({
      name: 'track_event',
      arguments: { eventType: 'first_purchase', userIdentifier: { email: user }, externalId: 'order-1' },
    });
    expect(json(again)).toMatchObject({ duplicate: true });
    await waitForMintsSettled(platform);
    expect(json(await client.callTool({ name: 'get_user_balance', arguments: { userEmail: user } }))).toMatchObject({
      balance: 70,
    });
  });

  it('checks in, reads the streak and the leaderboard, the event config and the health', async () => {
    const user = 'streaker@example.com';
    const checkin = await client.callTool({ name: 'streak_checkin', arguments: { userId: user, platform: 'web' } });
    expect(checkin.isError, JSON.stringify(checkin)).toBeFalsy();
    const status = json(await client.callTool({ name: 'get_streak_status', arguments: { userIdentifier: user } }));
    expect(status).toMatchObject({ currentStreak: 1 });
    const repeat = json(
      await client.callTool({ name: 'streak_checkin', arguments: { userId: user, platform: 'web' } }),
    );
    expect(repeat).toMatchObject({ alreadyClaimed: true });

    const board = json(
      await client.callTool({ name: 'get_leaderboard', arguments: { metric: 'ltz_earned', period: 'all_time' } }),
    );
    expect(board.rankings.map((entry: { userIdentifier: string }) => entry.userIdentifier)).toContain(
      'stdio.user@example.com',
    );
    const config = json(await client.callTool({ name: 'get_event_config', arguments: {} }));
    expect(config.events.map((event: { eventType: string }) => event.eventType)).toContain('first_purchase');
    const health = json(await client.callTool({ name: 'brand_health', arguments: {} }));
    expect(health).toHaveProperty('status');
  });

  it('resolves a user, lists perks and redeems one: the balance falls by the price', async () => {
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Bookmark', cost: 30, maxPerUser: 1, category: 'merch' },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = 'stdio.user@example.com';
    const resolved = json(
      await client.callTool({ name: 'resolve_user', arguments: { platform: 'email', platformUserId: user } }),
    );
    expect(resolved).toMatchObject({ success: true, isNew: false, userIdentifier: user });
    const perks = json(await client.callTool({ name: 'list_perks', arguments: {} }));
    const perk = perks.perks.find((p: { name: string }) => p.name === 'Bookmark');
    expect(perk).toBeDefined();
    const eligibility = json(
      await client.callTool({
        name: 'check_perk_eligibility',
        arguments: { perkId: perk.uuid, userIdentifier: user, platform: 'web' },
      }),
    );
    expect(eligibility).toMatchObject({ eligible: true });

    const redeemed = await client.callTool({
      name: 'redeem_perk',
      arguments: { perkId: perk.uuid, userIdentifier: user, platform: 'web' },
    });
    expect(redeemed.isError, JSON.stringify(redeemed)).toBeFalsy();
    expect(json(redeemed)).toMatchObject({ success: true });
    expect(json(await client.callTool({ name: 'get_user_balance', arguments: { userEmail: user } }))).toMatchObject({
      balance: 40,
    });
    const achievements = await client.callTool({ name: 'get_user_achievements', arguments: { userIdentifier: user } });
    expect(achievements.isError).toBeFalsy();
  });

  it('reports server refusals and bad input as isError content', async () => {
    const unknownType = await client.callTool({
      name: 'track_event',
      arguments: { eventType: 'no_such_event', userIdentifier: { email: 'x@example.com' } },
    });
    expect(unknownType.isError).toBe(true);
    expect(json(unknownType).error).toMatchObject({ code: 'validation', status: 400, reason: 'UNKNOWN_EVENT_TYPE' });

    const milestone = await client.callTool({
      name: 'claim_streak_milestone',
      arguments: { userIdentifier: 'streaker@example.com', platform: 'web', milestoneDays: 7 },
    });
    expect(json(milestone).error).toMatchObject({ status: 400, reason: 'CLAIM_FAILED' });

    const bad = await client.callTool({ name: 'get_streak_status', arguments: {} });
    expect(json(bad).error).toMatchObject({ code: 'validation', status: 400 });

    const relay = await client.callTool({
      name: 'relay_transaction',
      arguments: {
        privyAccessToken: 'not-a-real-token',
        to: `0x${'11'.repeat(20)}`,
        data: '0x12345678',
        userAddress: `0x${'22'.repeat(20)}`,
      },
    });
    expect(json(relay).error).toMatchObject({ code: 'auth_required', status: 401 });
  });

  it('with a wrong brand key, every brand call is refused (401), nothing is recorded', async () => {
    const wrong = await stdioClient({ PTS_BRAND_ID: brand.brandId, PTS_BRAND_SECURITY_KEY: 'x'.repeat(43) });
    const result = await wrong.client.callTool({
      name: 'track_event',
      arguments: { eventType: 'first_purchase', userIdentifier: { email: 'intruder@example.com' } },
    });
    expect(json(result).error).toMatchObject({ code: 'auth_required', status: 401, reason: 'INVALID_SIGNATURE' });
    const rows = await platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('user_email', '=', 'intruder@example.com')
      .execute();
    expect(rows).toEqual([]);
    await wrong.client.close();
  }, 60_000);
});

/**
 * `/mcp` on an HTTP server, authenticated by agent-key signatures. Until the agent-key store is merged the
 * verifier here checks the HMAC of one key (the scheme of docs/agent-api/converse-mcp.md) and refuses reuse.
 */
describe('MCP over streamable HTTP (/mcp, agent-signed)', () => {
  const key = { keyId: 'ak_http', secret: 'http-secret-0123456789abcdef' };
  let server: import('node:http').Server;
  let url: string;
  const seen = new Set<string>();

  beforeAll(async () => {
    const express = (await import('express')).default;
    const { AppError, computeSignature, signatureMatches } = await import('@pts/shared');
    const { createMcpRouter } = await import('./mcp.routes.ts');
    const app = express();
    app.use(
      createMcpRouter({
        clock: platform.clock,
        logger: pino({ level: 'silent' }),
        serviceDomain: 'pts.local',
        listTools: () => tools,
        verifyBrandKey: platform.services.agent.verifyBrandKey,
        authenticate: async (req) => {
          const timestamp = Number(req.get('x-pts-timestamp'));
          const signature = String(req.get('x-pts-signature') ?? '');
          const expected = computeSignature({
            securityKey: key.secret,
            timestamp,
            nonce: req.get('x-pts-nonce'),
            method: req.method,
            pathWithQuery: req.originalUrl,
            body: req.rawBody ?? Buffer.alloc(0),
          });
          if (
            req.get('x-pts-agent-key') !== key.keyId ||
            !signatureMatches(expected, signature) ||
            seen.has(signature)
          ) {
            throw new AppError('UNAUTHORIZED', 'agent signature required');
          }
          seen.add(signature);
          return { ...proKey, keyId: key.keyId };
        },
      }),
    );
    app.use(
      (error: { status?: number; message: string }, _req: unknown, res: import('express').Response, _next: unknown) => {
        res.status(error.status ?? 500).json({ error: { message: error.message } });
      },
    );
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('lists and calls the agent tools with the SDK client over a signing fetch', async () => {
    const { connectRemoteMcp } = await import('./remote-mcp.ts');
    const client = await connectRemoteMcp(url, key);
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    const balance = await client.callTool({
      name: 'get_user_balance',
      arguments: { userId: 'ivy@example.com', brandId: brand.brandId },
    });
    expect(json(balance)).toMatchObject({ balance: 70 });
    await client.close();
  });

  it('refuses unsigned and replayed requests, and GET', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const unsigned = await fetch(`${url}/mcp`, { method: 'POST', headers, body });
    expect(unsigned.status).toBe(401);

    const { agentSigningFetch } = await import('./remote-mcp.ts');
    const recorded: RequestInit[] = [];
    const signed = agentSigningFetch(key, {
      fetch: (input, init) => {
        recorded.push(init ?? {});
        return fetch(input, init);
      },
    });
    const first = await signed(`${url}/mcp`, { method: 'POST', headers, body });
    expect(first.status).toBe(200);
    // The same bytes with the same headers again: a replay.
    const replay = await fetch(`${url}/mcp`, { method: 'POST', headers: recorded[0]?.headers as Headers, body });
    expect(replay.status).toBe(401);

    const get = await signed(`${url}/mcp`, { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
  });

  it('bridges the agent tools over stdio (npm run -s mcp with an agent key)', async () => {
    const { client, stderr } = await stdioClient({
      PTS_API_URL: url,
      PTS_AGENT_KEY_ID: key.keyId,
      PTS_AGENT_SECRET: key.secret,
    });
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    const answer = await client.callTool({
      name: 'converse',
      arguments: { query: 'What is the balance of ivy@example.com at Orbit Books?' },
    });
    expect(json(answer)).toMatchObject({
      planner: 'offline',
      steps: [{ tool: 'get_user_balance', ok: true, data: { balance: 70 } }],
    });
    await expect.poll(() => stderr(), { timeout: 10_000 }).toContain('pts MCP server on stdio');
    expect(stderr()).not.toContain(key.secret);
    await client.close();
  }, 60_000);
});

describe('core-api /mcp (mounted in the app, real agent keys)', () => {
  it('three MCP SDK clients on one key connect and work at once, signing in the same second; a replay is refused', async () => {
    const { createAgentKey } = await import('../keys/agent-keys.service.ts');
    const { agentSigningFetch } = await import('./remote-mcp.ts');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const keys = { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets };
    const shared = await createAgentKey(keys, { name: 'shared by hosts', tier: 'pro', ratePerMinute: 1000 });
    // Every host signs in the same second: the collision the hosts hit when started together.
    const second = platform.clock.now().getTime();
    const recorded: { url: string; init: RequestInit }[] = [];
    const hosts = Array.from({ length: 3 }, (_, i) => {
      const client = new Client({ name: `host-${i}`, version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', platform.url), {
        fetch: agentSigningFetch(shared, {
          now: () => second,
          fetch: (url, init) => {
            recorded.push({ url: String(url), init: init ?? {} });
            return fetch(url, init);
          },
        }),
      });
      return { client, transport };
    });
    await Promise.all(hosts.map(({ client, transport }) => client.connect(transport)));
    const listed = await Promise.all(hosts.map(({ client }) => client.listTools()));
    for (const { tools: names } of listed) expect(names.map((tool) => tool.name)).toContain('get_network_stats');
    const stats = await Promise.all(
      hosts.map(({ client }) => client.callTool({ name: 'get_network_stats', arguments: {} })),
    );
    for (const result of stats) expect(result.isError, JSON.stringify(result)).toBeFalsy();

    // The exact bytes and headers of a request already served, sent again: refused, nothing is run twice.
    const initialized = recorded.find(({ init }) => String(init.body).includes('notifications/initialized'));
    expect(initialized).toBeDefined();
    const replay = await fetch(initialized!.url, initialized!.init);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ error: { code: 'auth_required' } });
    // A changed nonce under the old signature does not verify.
    const headers = new Headers(initialized!.init.headers);
    headers.set('x-pts-nonce', 'another-nonce-123');
    const forged = await fetch(initialized!.url, { ...initialized!.init, headers });
    expect(forged.status).toBe(401);
    // A client without a nonce (the old signature) still works.
    const legacy = await fetch(`${platform.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...signAgentRequest({
          keyId: shared.keyId,
          secret: shared.secret,
          method: 'POST',
          pathWithQuery: '/mcp',
          timestamp: Math.floor(second / 1000),
          body: LEGACY_BODY,
        }),
      },
      body: LEGACY_BODY,
    });
    expect(legacy.status).toBe(200);
    await Promise.all(hosts.map(({ client }) => client.close()));
  }, 60_000);

  it('serves the app’s agent tools and, with brand headers, the brand tools; unsigned and free-tier calls are refused', async () => {
    const { createAgentKey } = await import('../keys/agent-keys.service.ts');
    const { connectRemoteMcp } = await import('./remote-mcp.ts');
    const keys = { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets };
    const pro = await createAgentKey(keys, { name: 'mcp pro', tier: 'pro', ratePerMinute: 1000 });
    const client = await connectRemoteMcp(platform.url, pro, {
      headers: { 'X-PTS-Brand-Id': brand.brandId, 'X-PTS-Brand-Key': brand.securityKey },
    });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['get_network_stats', 'converse', ...OPERATOR_TOOL_NAMES]));

    const stats = await client.callTool({ name: 'get_network_stats', arguments: {} });
    expect(stats.isError, JSON.stringify(stats)).toBeFalsy();
    const answer = json(
      await client.callTool({ name: 'converse', arguments: { query: 'How many brands are on the network?' } }),
    );
    expect(answer.plan).toEqual([{ tool: 'get_network_stats', input: {} }]);
    expect(answer.steps[0].ok).toBe(true);

    const user = 'http.user@example.com';
    const tracked = await client.callTool({
      name: 'track_event',
      arguments: { eventType: 'first_purchase', userIdentifier: { email: user } },
    });
    expect(tracked.isError, JSON.stringify(tracked)).toBeFalsy();
    await waitForMintsSettled(platform);
    expect(json(await client.callTool({ name: 'get_user_balance', arguments: { userEmail: user } }))).toMatchObject({
      balance: 70,
    });
    await client.close();

    const unsigned = await fetch(`${platform.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ error: { code: 'auth_required', status: 401 } });

    const wrongBrandKey = connectRemoteMcp(platform.url, pro, {
      headers: { 'X-PTS-Brand-Id': brand.brandId, 'X-PTS-Brand-Key': 'not-the-key' },
    });
    await expect(wrongBrandKey).rejects.toThrow();

    const free = await createAgentKey(keys, { name: 'mcp free', tier: 'free', ratePerMinute: 1000 });
    const freeClient = await connectRemoteMcp(platform.url, free);
    const refused = await freeClient.callTool({ name: 'converse', arguments: { query: 'network stats' } });
    expect(json(refused).error).toMatchObject({ code: 'forbidden', status: 403 });
    await freeClient.close();
  }, 60_000);
});
