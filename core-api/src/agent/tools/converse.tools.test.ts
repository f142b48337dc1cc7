import { Writable } from 'node:stream';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../../../test/fakes/fake-openai.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type AgentPrincipal, type AgentTool, invokeAgentTool } from '../agent-tool.ts';
import { createChatModel } from '../converse/chat-model.ts';
import { actionsTools } from './actions.tools.ts';
import { converseTools } from './converse.tools.ts';
import { discoveryTools } from './discovery.tools.ts';

let platform: TestPlatform;
let fake: FakeOpenAi;
let acme: CreatedBrand;
let globex: CreatedBrand;
let offline: AgentTool;
let withModel: AgentTool;
let tools: AgentTool[];
const logLines: string[] = [];

const principal: AgentPrincipal = {
  keyId: 'ak_test',
  name: 'converse test',
  brandIds: [],
  canManageProgram: false,
  canOnboard: false,
  tier: 'pro',
  ratePerMinute: 20,
};
const logger = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  }),
);
const context = () => ({ principal, clock: platform.clock, logger });
// biome-ignore lint/suspicious/noExplicitAny: the tests read the converse answer loosely
const ask = async (tool: AgentTool, query: string): Promise<any> =>
  invokeAgentTool(tool, { body: { query } }, context());

beforeAll(async () => {
  [platform, fake] = await Promise.all([startTestPlatform(), startFakeOpenAi()]);
  acme = await platform.createBrand({
    name: 'Acme Coffee',
    domain: 'acme-coffee.example',
    rules: [{ eventType: 'first_purchase', rewardAmount: 70, cooldownHours: 0, maxClaims: -1 }],
  });
  globex = await platform.createBrand({ name: 'Globex Travel', domain: 'globex.example' });
  const d = platform.services.agent.toolDeps;
  const list = () => tools;
  offline = converseTools(d, list)[0] as AgentTool;
  withModel = converseTools(d, list, {
    model: createChatModel({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, model: 'fake-gpt', timeoutMs: 5000 }),
  })[0] as AgentTool;
  // The key acts for both brands: member reads are scoped to a key's brands.
  principal.brandIds.push(acme.brandId, globex.brandId);
  tools = [...discoveryTools(d), ...actionsTools(d), offline];
  const event = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: acme.brandId, eventType: 'first_purchase', userEmail: 'ada@example.com' },
    acme.securityKey,
  );
  expect(event.status, JSON.stringify(event.body)).toBe(200);
  await waitForMintsSettled(platform);
}, 120_000);

afterAll(async () => {
  await Promise.all([platform?.stop(), fake?.close()]);
});

describe('converse, offline planner', () => {
  it('answers "my balance at X" with the user balance tool on the brand the question names', async () => {
    const result = await ask(offline, 'What is the balance of ada@example.com at Acme Coffee?');
    expect(result.planner).toBe('offline');
    expect(result.plan).toEqual([
      { tool: 'get_user_balance', input: { userId: 'ada@example.com', brandId: acme.brandId } },
    ]);
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]).toMatchObject({ tool: 'get_user_balance', ok: true, data: { balance: 70, pending: 0 } });
    expect(result.answer).toContain('[get_user_balance]');
    expect(result.answer).toContain('balance: 70');
    expect(result.basis).toMatchObject({
      planner: 'offline',
      model: null,
      stepsSucceeded: 1,
      stepsFailed: 0,
      brandsRecognised: [{ brandId: acme.brandId, name: 'Acme Coffee', domain: 'acme-coffee.example' }],
    });
  });

  it('"top brands" falls back to the brand list when no rankings tool is present', async () => {
    const result = await ask(offline, 'Which are the top brands?');
    expect(result.plan).toEqual([{ tool: 'list_brands', input: { limit: 10 } }]);
    expect(result.steps[0].ok).toBe(true);
    // Both brands were created at the same (manual) instant: their order is not part of the answer's contract.
    expect(result.steps[0].data.brands.map((b: { name: string }) => b.name).sort()).toEqual([
      'Acme Coffee',
      'Globex Travel',
    ]);
    expect(result.answer).toMatch(
      /^\[list_brands\] brands: 2 \((Acme Coffee, Globex Travel|Globex Travel, Acme Coffee)\); total: 2;/m,
    );
  });

  it('says what is missing instead of guessing a user, and skips tools absent from the list', async () => {
    const result = await ask(offline, 'What is my balance at Globex Travel? And how is its health?');
    expect(result.plan).toEqual([]);
    expect(result.basis.notes).toEqual([
      'For balance, name the user (email-shaped id) in the question.',
      'No tool for brand health is available (GET /analytics/brands/:brandId/health).',
    ]);
    expect(result.answer).toContain('No tool was called');
  });

  it('reads a named brand when the question matches no topic, found by its domain', async () => {
    const result = await ask(offline, 'Tell me about globex.example');
    expect(result.plan).toEqual([{ tool: 'get_brand', input: { brandId: globex.brandId } }]);
    expect(result.steps[0]).toMatchObject({ ok: true, data: { brand: { name: 'Globex Travel' } } });
  });

  it('refuses an empty query with 400 and never plans itself', async () => {
    await expect(ask(offline, '   ')).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    const result = await ask(offline, 'converse converse top brands');
    expect(result.plan.map((step: { tool: string }) => step.tool)).not.toContain('converse');
  });
});

describe('converse, OpenAI-compatible model (local fake endpoint)', () => {
  it('plans with the model, runs the plan (a failed step is reported, not fatal) and lets the model write', async () => {
    const unknown = `0x${'ab'.repeat(20)}`;
    let call = 0;
    fake.respond = () => {
      call += 1;
      if (call === 1) {
        return {
          content: JSON.stringify({
            calls: [
              { tool: 'get_user_balance', arguments: { userId: 'ada@example.com', brandId: acme.brandId } },
              { tool: 'get_brand', arguments: { brandId: unknown } },
            ],
          }),
        };
      }
      return { content: 'Ada holds 70 pts at Acme Coffee [get_user_balance]; the other brand is unknown [get_brand].' };
    };
    fake.requests.length = 0;
    const result = await ask(withModel, 'How many points does Ada have, and what is brand 0xabab…?');
    expect(result.planner).toBe('llm');
    expect(result.plan).toEqual([
      { tool: 'get_user_balance', input: { userId: 'ada@example.com', brandId: acme.brandId } },
      { tool: 'get_brand', input: { brandId: unknown } },
    ]);
    expect(result.steps[0]).toMatchObject({ ok: true, data: { balance: 70 } });
    expect(result.steps[1]).toMatchObject({
      tool: 'get_brand',
      ok: false,
      error: { code: 'not_found', status: 404, reason: 'BRAND_NOT_FOUND' },
    });
    expect(result.answer).toBe(
      'Ada holds 70 pts at Acme Coffee [get_user_balance]; the other brand is unknown [get_brand].',
    );
    expect(result.basis).toMatchObject({
      planner: 'llm',
      model: 'fake-gpt',
      stepsSucceeded: 1,
      stepsFailed: 1,
      fallback: null,
    });

    // The wire: the key as a Bearer header, the model, the catalogue of plannable tools with their schemas.
    expect(fake.requests).toHaveLength(2);
    const [planning, writing] = fake.requests;
    expect(planning?.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(planning?.model).toBe('fake-gpt');
    expect(planning?.responseFormat).toEqual({ type: 'json_object' });
    const system = planning?.messages[0]?.content ?? '';
    expect(system).toContain('"name":"get_user_balance"');
    expect(system).toContain('"userId"');
    expect(system).not.toContain('"name":"converse"');
    expect(planning?.messages[1]).toEqual({
      role: 'user',
      content: 'How many points does Ada have, and what is brand 0xabab…?',
    });
    expect(writing?.messages[1]?.content).toContain('"balance\\":70');
    // The key is never logged.
    expect(logLines.join('')).not.toContain(fake.apiKey);
  });

  it.each([
    ['text that is not JSON', 'Sure! I would call get_user_balance.', 'the model did not answer with JSON'],
    [
      'an unknown tool',
      JSON.stringify({ calls: [{ tool: 'drop_tables', arguments: {} }] }),
      'drop_tables, which is not an available tool',
    ],
    [
      'arguments its schema refuses',
      JSON.stringify({ calls: [{ tool: 'get_user_balance', arguments: { userId: 'not-an-email', brandId: 'x' } }] }),
      'invalid arguments: get_user_balance',
    ],
    [
      'a write tool (converse plans reads only)',
      JSON.stringify({ calls: [{ tool: 'converse', arguments: { query: 'loop' } }] }),
      'converse, which is not an available tool',
    ],
  ])('falls back to the offline planner on %s, and says so', async (_what, content, reason) => {
    fake.respond = () => ({ content });
    fake.requests.length = 0;
    const result = await ask(withModel, 'What is the balance of ada@example.com at Acme Coffee?');
    expect(result.planner).toBe('offline');
    expect(result.basis.fallback).toContain(reason);
    expect(result.answer.split('\n')[0]).toContain("The model's plan was not usable");
    expect(result.plan).toEqual([
      { tool: 'get_user_balance', input: { userId: 'ada@example.com', brandId: acme.brandId } },
    ]);
    expect(result.steps[0]).toMatchObject({ ok: true, data: { balance: 70 } });
    expect(fake.requests).toHaveLength(1);
  });

  it('falls back when the endpoint fails, and when the key is wrong, without logging the key', async () => {
    fake.respond = () => ({ status: 500 });
    const failed = await ask(withModel, 'Which are the top brands?');
    expect(failed.planner).toBe('offline');
    expect(failed.basis.fallback).toContain('HTTP 500');
    expect(failed.steps[0]).toMatchObject({ tool: 'list_brands', ok: true });

    const wrongKey = converseTools(platform.services.agent.toolDeps, () => tools, {
      model: createChatModel({ baseUrl: fake.baseUrl, apiKey: 'sk-wrong-secret-value', model: 'm', timeoutMs: 5000 }),
    })[0] as AgentTool;
    const refused = await ask(wrongKey, 'Which are the top brands?');
    expect(refused.basis.fallback).toContain('HTTP 401');
    expect(JSON.stringify(refused)).not.toContain('sk-wrong-secret-value');
    expect(logLines.join('')).not.toContain('sk-wrong-secret-value');
  });

  it('keeps the model plan but writes the offline summary when the model cannot write', async () => {
    let call = 0;
    fake.respond = () => {
      call += 1;
      return call === 1
        ? { content: '```json\n{"calls":[{"tool":"list_brands","arguments":{"limit":1}}]}\n```' }
        : { status: 503 };
    };
    const result = await ask(withModel, 'One brand please');
    expect(result.planner).toBe('llm');
    expect(result.plan).toEqual([{ tool: 'list_brands', input: { limit: 1 } }]);
    expect(result.basis.fallback).toContain('could not write the answer');
    expect(result.answer).toMatch(/^\[list_brands\] brands: 1 \((Acme Coffee|Globex Travel)\); total: 2;/m);
  });
});

describe('POST /api/v1/converse (the app route)', () => {
  it('answers a pro key in the envelope and refuses a free key with 403 forbidden', async () => {
    const { createAgentKey } = await import('../keys/agent-keys.service.ts');
    const { signAgentRequest } = await import('@pts/shared');
    const keys = { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets };
    const call = async (key: { keyId: string; secret: string }, query: string) => {
      const raw = JSON.stringify({ query });
      const headers = signAgentRequest({
        ...key,
        method: 'POST',
        pathWithQuery: '/api/v1/converse',
        body: raw,
        timestamp: Math.floor(platform.clock.now().getTime() / 1000),
      });
      return platform.post('/api/v1/converse', { query }, headers);
    };
    const pro = await createAgentKey(keys, { name: 'converse pro', tier: 'pro' });
    const answered = await call(pro, 'How many brands are on the network?');
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.meta.tool).toBe('converse');
    expect(answered.body.data).toMatchObject({
      planner: 'offline',
      plan: [{ tool: 'get_network_stats', input: {} }],
      steps: [{ tool: 'get_network_stats', ok: true }],
    });
    expect(answered.body.data.answer).toContain('[get_network_stats]');

    const free = await createAgentKey(keys, { name: 'converse free', tier: 'free' });
    const refused = await call(free, 'How many brands are on the network?');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', status: 403 });
  });
});
