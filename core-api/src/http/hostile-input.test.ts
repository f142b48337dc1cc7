import { deflateSync, gzipSync } from 'node:zlib';
import { type CreatedBrand, signAgentRequest, signRequest } from '@pts/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, createFixtureKey } from '../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { type JsonSchema, type KnownValues, kindOf, replaceAt, SchemaValues } from '../../test/schema-values.ts';

// Input classes a red-team run turned into 500s (issue 11 §3), each sent to every route /openapi.json documents
// (the route tables and the agent tools generate it) plus the few it does not (MCP, the checkout form, JWKS):
// each must be a 4xx that says what to fix, whatever the route, its auth or its body reader. Requests carry
// the credentials their route takes (admin token, brand signature, agent signature), so the input gets past
// authentication to the readers and validators. Every test lists all the answers that fail, not the first.

let platform: TestPlatform;
let brand: CreatedBrand;
let agentKey: AgentKeyCredentials;
let values: SchemaValues;
/** What valid-shaped values use for ids and keys (kept current when a request rotates the brand's keys). */
const known = {} as KnownValues;
/** A user's access token (`POST /admin/users/token`), for the relayer's user routes. */
let userToken: string;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}

interface DocumentedRoute {
  method: string;
  /** `/admin/brands/{brandId}` */
  template: string;
  parameters: Parameter[];
  body?: JsonSchema;
  /** The body's media type (JSON unless the route documents another). */
  bodyType?: string;
}

const routes: DocumentedRoute[] = [];
const EMAIL = 'hostile-member@example.com';
const DOMAIN = 'hostile.example';

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '1000000',
    PTS_AGENT_IP_PER_MINUTE: '1000000',
    PTS_RELAYER_IP_PER_MINUTE: '1000000',
    PTS_RELAYER_USER_PER_HOUR: '1000000',
  });
  brand = await platform.createBrand({
    domain: DOMAIN,
    rules: [{ eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 }],
  });
  agentKey = await createFixtureKey(platform, {
    name: 'hostile input',
    brandIds: [brand.brandId],
    canManageProgram: true,
    canOnboard: true,
    tier: 'enterprise',
    ratePerMinute: 100_000,
  });
  const issued = await platform.post(
    '/admin/users/token',
    { email: EMAIL },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  userToken = (issued.body as { token: string }).token;
  const doc = (await platform.get('/openapi.json')).body as {
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: object } }>>;
    components: { schemas: Record<string, JsonSchema> };
  };
  values = new SchemaValues(doc.components.schemas, known);
  Object.assign(known, {
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    // The revoke route gets a key of its own: revoking the one that signs would lock the agent API out.
    agentKeyId: (await createFixtureKey(platform, { name: 'revoked by the hostile input test' })).keyId,
    email: EMAIL,
    eventType: 'purchase',
    domain: DOMAIN,
  } satisfies KnownValues);
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = (operation.requestBody?.content ?? {}) as Record<string, { schema?: JsonSchema }>;
      const [bodyType] = Object.keys(content);
      routes.push({
        method: method.toUpperCase(),
        template,
        parameters: operation.parameters ?? [],
        ...(bodyType ? { bodyType, body: content[bodyType]?.schema ?? {} } : {}),
      });
    }
  }
  // Served but not in the document: MCP (JSON-RPC) and the metrics scrape.
  routes.push(
    { method: 'POST', template: '/mcp', parameters: [], bodyType: 'application/json', body: mcpCallSchema },
    { method: 'GET', template: '/metrics', parameters: [] },
  );
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** An MCP `tools/call` of a tool taking a brand id: a JSON-RPC body like any other. */
const mcpCallSchema: JsonSchema = {
  type: 'object',
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: 'integer' },
    method: { const: 'tools/call' },
    params: {
      type: 'object',
      properties: {
        name: { const: 'get_brand' },
        arguments: { type: 'object', properties: { brandId: { type: 'string' } } },
      },
    },
  },
};

const jsonBodies = () => routes.filter((route) => route.body && route.bodyType === 'application/json');

/** The route's path with each path parameter valid-shaped, or `hostile` (raw, already URL-encoded) for one. */
function pathOf(route: DocumentedRoute, hostile?: { name: string; raw: string }): string {
  return route.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (hostile?.name === name) return hostile.raw;
    const parameter = route.parameters.find((p) => p.in === 'path' && p.name === name);
    return encodeURIComponent(String(values.valid(parameter?.schema, name)));
  });
}

/** The required query parameters, valid-shaped. */
function requiredQuery(route: DocumentedRoute, except?: string): string[] {
  return route.parameters
    .filter((p) => p.in === 'query' && p.required && p.name !== except)
    .map((p) => `${p.name}=${encodeURIComponent(String(values.valid(p.schema, p.name)))}`);
}

interface Answer {
  label: string;
  status: number;
  text: string;
  contentType: string;
}

/** The bearer token a path takes: a user's on the relay, the brand API key on the constraint updater, else the admin token. */
function bearerFor(path: string): string {
  if (/^\/relayer\/(relay|transactions)/.test(path)) return userToken;
  if (path.startsWith('/constraint-updater')) return brand.apiKey;
  return platform.deps.adminToken;
}

type SendOptions = { pathWithQuery?: string; body?: string | Buffer; headers?: Record<string, string>; label?: string };

/** Sends each of `variants(route)` to each route, one after the other. */
async function sendEach(selected: DocumentedRoute[], variants: (route: DocumentedRoute) => SendOptions[]) {
  const answers: Answer[] = [];
  for (const route of selected) for (const options of variants(route)) answers.push(await send(route, options));
  return answers;
}

/**
 * Sends one request with the credentials its route takes: an agent signature under /api/v1 and /mcp, else
 * a bearer token and a brand signature (each route reads the one it needs). The clock moves a second per
 * request so no signature repeats.
 */
async function send(route: DocumentedRoute, options: SendOptions = {}): Promise<Answer> {
  const pathWithQuery =
    options.pathWithQuery ?? [pathOf(route), requiredQuery(route).join('&')].filter(Boolean).join('?');
  const body = options.body ?? (route.body ? JSON.stringify(values.valid(route.body)) : undefined);
  platform.clock.advance(1000);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000);
  const signed = { method: route.method, pathWithQuery, body: body ?? '', timestamp };
  const agent = pathWithQuery.startsWith('/api/v1') || pathWithQuery.startsWith('/mcp');
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { 'content-type': route.bodyType ?? 'application/json' }),
    ...(agent
      ? { ...signAgentRequest({ ...signed, ...agentKey }), accept: 'application/json, text/event-stream' }
      : {
          authorization: `Bearer ${bearerFor(pathWithQuery)}`,
          ...signRequest({ ...signed, securityKey: brand.securityKey }),
        }),
    ...options.headers,
  };
  const response = await fetch(`${platform.url}${pathWithQuery}`, {
    method: route.method,
    headers,
    ...(body === undefined || route.method === 'GET' ? {} : { body }),
  });
  const text = await response.text();
  if (response.ok && pathWithQuery.startsWith('/api/v1/onboarding/keys')) keepRotatedKeys(text);
  return {
    label: `${options.label ?? ''} ${route.method} ${pathWithQuery.slice(0, 160)}`,
    status: response.status,
    text,
    contentType: response.headers.get('content-type') ?? '',
  };
}

/** `onboarding/keys` rotates the brand's keys (a valid-shaped call succeeds): later requests sign with the new ones. */
function keepRotatedKeys(text: string): void {
  const { data } = JSON.parse(text) as { data?: { brandId?: string; securityKey?: string; apiKey?: string } };
  if (data?.brandId !== brand.brandId) return;
  if (data.securityKey) brand.securityKey = known.securityKey = data.securityKey;
  if (data.apiKey) brand.apiKey = data.apiKey;
}

/**
 * What is wrong with an answer, or undefined: a 5xx; a 4xx without the error envelope's message (core
 * `{error:"…"}`, agent `{error:{message}}`); an MCP tool result that reports a 5xx inside a 200.
 */
function problemOf(answer: Answer): string | undefined {
  const excerpt = `${answer.label} → ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status >= 500) return excerpt;
  // A limit answering first would hide what the input does to the route (the limits are raised above).
  if (answer.status === 429 && answer.text.includes('RATE_LIMIT_EXCEEDED'))
    return `rate limited, so never read: ${excerpt}`;
  // The checkout pages are for browsers: their errors are HTML pages that say what went wrong.
  if (answer.contentType.startsWith('text/html')) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return answer.status >= 400 ? `no JSON error envelope: ${excerpt}` : undefined;
  }
  if (answer.status >= 400) {
    const error = (body as { error?: unknown })?.error;
    const message = typeof error === 'string' ? error : (error as { message?: unknown } | undefined)?.message;
    if (typeof message !== 'string' || message.length === 0) return `no error message: ${excerpt}`;
  }
  const content = (body as { result?: { isError?: boolean; content?: { text?: string }[] } })?.result;
  if (content?.isError) {
    const status = (JSON.parse(content.content?.[0]?.text ?? '{}') as { error?: { status?: number } }).error?.status;
    if (status === undefined || status >= 500) return `MCP tool failure ${status}: ${excerpt}`;
  }
  return undefined;
}

/** Asserts that none of the answers is a problem, listing all that are. */
function expectHandled(answers: Answer[]): void {
  const problems = answers.map(problemOf).filter((problem) => problem !== undefined);
  expect(problems).toEqual([]);
}

/** JSON text of `value`, with each `"__RAW_n__"` string replaced by `raw[n]` (number literals JSON.stringify cannot write). */
function jsonWithRaw(value: unknown, raw: string[]): string {
  return JSON.stringify(value).replace(/"__RAW_(\d+)__"/g, (_, i: string) => raw[Number(i)] ?? 'null');
}

/** Sends each route's valid-shaped body changed at every position `mutate` answers for. */
async function everyPosition(
  label: string,
  mutate: (kind: string, isRoot: boolean) => unknown[],
  raw: string[] = [],
): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const route of jsonBodies()) {
    const valid = values.valid(route.body);
    for (const { path, kind } of values.positions(valid)) {
      for (const replacement of mutate(kind, path.length === 0)) {
        const body = jsonWithRaw(replaceAt(valid, path, replacement), raw);
        const shown = JSON.stringify(replacement)?.slice(0, 40);
        answers.push(await send(route, { body, label: `${label} ${shown} at ${path.join('.') || '(root)'}:` }));
      }
    }
  }
  return answers;
}

describe('hostile input on every route', { timeout: 300_000 }, () => {
  it('valid-shaped requests get past authentication: most routes answer 2xx', async () => {
    const answers: Answer[] = [];
    for (const route of routes) answers.push(await send(route, { label: 'valid:' }));
    expectHandled(answers);
    // The credentials work everywhere (so hostile input reaches the readers and validators behind them), and
    // most valid-shaped requests get all the way through (the rest fail a cross-field check or find no record).
    expect(answers.filter((a) => a.status === 401).map((a) => `${a.label} ${a.text.slice(0, 200)}`)).toEqual([]);
    expect(answers.filter((a) => a.status < 300).length).toBeGreaterThan(80);
  });

  it('covers every documented route, the agent API and MCP', () => {
    expect(routes.length).toBeGreaterThan(120);
    expect(jsonBodies().length).toBeGreaterThan(45);
    const templates = routes.map((r) => r.template);
    expect(templates).toEqual(
      expect.arrayContaining([
        '/pts-api/manual-event',
        '/admin/brands',
        '/services/checkin',
        '/api/v1/brands/{brandId}/perks',
        '/api/v1/converse',
        '/mcp',
        '/health',
      ]),
    );
  });

  it('hostile path parameters on every route: 4xx or an answer, never 5xx', async () => {
    const hostile = [
      '%ED%A0%80', // a lone surrogate, UTF-8 encoded
      '%00',
      'a%00b',
      '%C0%80', // an overlong NUL
      '%FF',
      '%',
      'x'.repeat(3000),
      '9007199254740993',
      '-1',
      'NaN',
      'Infinity',
      '1e309',
      '%F0%9F%98%80',
      '..%2F..',
    ];
    const answers: Answer[] = [];
    let count = 0;
    for (const route of routes) {
      const names = route.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      if (names.length) count++;
      for (const name of names) {
        for (const raw of hostile) {
          const path = pathOf(route, { name, raw });
          const query = requiredQuery(route).join('&');
          answers.push(await send(route, { pathWithQuery: query ? `${path}?${query}` : path, label: `path ${name}:` }));
        }
      }
    }
    expect(count).toBeGreaterThan(50);
    expectHandled(answers);
    // A percent-encoded NUL is decoded into the parameter: refused before it reaches a query.
    const persona = answers.find((a) => a.label.includes('/intelligence/users/%00/persona'));
    expect(persona?.status).toBe(400);
    expect(JSON.parse(persona?.text ?? '{}').error.details).toMatchObject({ reason: 'nul_character' });
  });

  it('hostile query strings on every route: arrays, objects, surrogates, NUL, huge and non-finite numbers', async () => {
    const hostile = (name: string) => [
      `${name}=%ED%A0%80`,
      `${name}=%00`,
      `${name}=${'9'.repeat(400)}`,
      `${name}=${'x'.repeat(3000)}`,
      `${name}=1&${name}=2`,
      `${name}[]=1`,
      `${name}[a]=1`,
      `${name}=9007199254740993`,
      `${name}=-1`,
      `${name}=-0`,
      `${name}=NaN`,
      `${name}=Infinity`,
      `${name}=1e309`,
      `${name}=1.5`,
      `${name}=`,
      `${name}`,
    ];
    const answers: Answer[] = [];
    for (const route of routes) {
      // Documented query parameters, and on reads the one any list might take.
      const documented = route.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const names = new Set(route.method === 'GET' ? [...documented, 'limit'] : documented);
      for (const name of names) {
        for (const raw of hostile(name)) {
          const query = [...requiredQuery(route, name), raw].join('&');
          answers.push(await send(route, { pathWithQuery: `${pathOf(route)}?${query}`, label: 'query:' }));
        }
      }
    }
    expectHandled(answers);
  });

  it('a lone surrogate in every string position of a valid-shaped body: 4xx', async () => {
    const answers = await everyPosition('surrogate', (kind, isRoot) =>
      kind === 'string' ? ['a\ud800b', '\udc00'] : isRoot ? [{ '\ud800': 1 }] : [],
    );
    expectHandled(answers);
    const event = answers.find((a) => a.label.includes('/pts-api/manual-event'));
    expect(event?.status).toBe(400);
    expect(JSON.parse(event?.text ?? '{}').details).toMatchObject({ reason: 'lone_surrogate' });
  });

  it('a NUL in every string position of a valid-shaped body: 4xx', async () => {
    const answers = await everyPosition('NUL', (kind, isRoot) =>
      kind === 'string' ? ['a\u0000b'] : isRoot ? [{ 'a\u0000': 1 }] : [],
    );
    expectHandled(answers);
    const roles = answers.find((a) => a.label.includes('/services/chat-roles'));
    expect(roles?.status).toBe(400);
    expect(JSON.parse(roles?.text ?? '{}').details).toMatchObject({ reason: 'nul_character' });
  });

  it('a well-formed surrogate pair is text like any other', async () => {
    // A brand of its own: the other tests change the rules and keys of the shared one.
    const own = await platform.createBrand({
      domain: 'pair.example',
      rules: [{ eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 }],
    });
    const body = {
      brandId: own.brandId,
      eventType: 'purchase',
      userEmail: 'pair@example.com',
      metadata: { note: '😀' },
    };
    expect(JSON.stringify(body)).toContain('😀');
    const answer = await platform.signedPost('/pts-api/manual-event', body, own.securityKey);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const escaped = await fetch(`${platform.url}/pts-api/manual-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://pair.example' },
      body: JSON.stringify({ ...body, userEmail: 'pair2@example.com', metadata: {} }).replace(
        '"metadata":{}',
        '"metadata":{"note":"\\ud83d\\ude00"}',
      ),
    });
    expect(escaped.status, await escaped.text()).toBe(200);
  });

  it('numbers beyond the database int range, fractions and overflow in every numeric position: 4xx', async () => {
    const raw = [
      '2147483648',
      '-2147483649',
      '9223372036854775808',
      '9007199254740993',
      '1e400',
      '-1e400',
      '1.5',
      '1e-400',
    ];
    const markers = raw.map((_, i) => `__RAW_${i}__`);
    const answers = await everyPosition('number', (kind) => (kind === 'number' ? markers : []), raw);
    expect(answers.length).toBeGreaterThan(50);
    expectHandled(answers);
    // Beyond the int columns of the claim limits (1e-400 is JSON for 0, a valid limit).
    const limits = answers.filter(
      (a) => /at (maxClaims|maxTotal)/.test(a.label) && a.label.includes('/rules/') && !a.label.includes('RAW_7'),
    );
    expect(limits.length).toBe(14);
    for (const answer of limits) expect(answer.status, answer.text).toBe(400);
  });

  it('a wrong type in every position of a valid-shaped body: 4xx', async () => {
    const wrong: Record<string, unknown[]> = {
      string: [1, {}, [], true],
      number: ['1', [], {}, null],
      boolean: ['true', 0],
      array: [{}, 'x', [[[]]]],
      object: [[], 'x', 0],
      null: [{}, 'x'],
    };
    const answers = await everyPosition('type', (kind, isRoot) => [
      ...(wrong[kind] ?? []),
      ...(isRoot ? [null, 'x', 0, true] : []),
    ]);
    expectHandled(answers);
  });

  it('deeply nested JSON at the root and inside a field: 400, never a stack overflow', async () => {
    const deepArrays = `${'['.repeat(9000)}${']'.repeat(9000)}`;
    const deepObjects = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const answers: Answer[] = [];
    for (const route of jsonBodies()) {
      const valid = values.valid(route.body);
      const field = values.positions(valid).find((p) => p.path.length === 1);
      for (const deep of [deepArrays, deepObjects]) {
        answers.push(await send(route, { body: deep, label: 'deep:' }));
        if (field)
          answers.push(
            await send(route, {
              body: jsonWithRaw(replaceAt(valid, field.path, '__RAW_0__'), [deep]),
              label: `deep at ${field.path}:`,
            }),
          );
      }
    }
    expectHandled(answers);
    const bulk = answers.find((a) => a.label.includes('/pts-api/bulk-events'));
    expect(bulk?.status).toBe(400);
    expect(JSON.parse(bulk?.text ?? '{}').details).toMatchObject({ reason: 'too_deep' });
  });

  it('a body that does not inflate as its Content-Encoding says, or an unknown encoding: 4xx on every route', async () => {
    const answers = await sendEach(
      routes.filter((r) => r.method !== 'GET'),
      (route) => {
        const valid = route.body ? JSON.stringify(values.valid(route.body)) : '{}';
        const truncated = gzipSync(valid).subarray(0, 12);
        const bodies = [
          ['gzip', valid],
          ['br', valid],
          ['deflate', valid],
          ['gzip', truncated],
          ['deflate', deflateSync(valid).subarray(0, 4)],
          ['compress', valid],
          ['gzip, br', valid],
        ] as const;
        return bodies.map(([encoding, body]) => ({
          body: Buffer.from(body),
          headers: { 'content-type': route.bodyType ?? 'application/json', 'content-encoding': encoding },
          label: `encoding ${encoding}:`,
        }));
      },
    );
    expectHandled(answers);
    const event = answers.find((a) => a.label.includes('encoding gzip: POST /pts-api/manual-event'));
    expect(event?.status).toBe(400);
  });

  it('an unsupported or bogus charset: 4xx on every route with a body', async () => {
    const answers = await sendEach(
      routes.filter((r) => r.body),
      (route) =>
        ['latin1', 'bogus', 'utf-16', 'utf-8; charset=latin1'].map((charset) => ({
          headers: { 'content-type': `${route.bodyType}; charset=${charset}` },
          label: `charset ${charset}:`,
        })),
    );
    expectHandled(answers);
    const checkout = answers.find((a) => a.label.includes('charset latin1: POST /pts-api/create-checkout'));
    expect(checkout?.status).toBe(415);
  });

  it('an oversize body, plain or as a gzip bomb: 413 on every route that reads a JSON body', async () => {
    const answers: Answer[] = [];
    const wrongStatus: string[] = [];
    const big = 'x'.repeat(3 * 1024 * 1024);
    for (const route of jsonBodies()) {
      const valid = values.valid(route.body);
      const padded = JSON.stringify(kindOf(valid) === 'object' ? { ...(valid as object), padding: big } : [valid, big]);
      for (const [label, body, encoding] of [
        ['oversize:', padded, undefined],
        ['gzip bomb:', gzipSync(padded), 'gzip'],
      ] as const) {
        const answer = await send(route, {
          body: Buffer.from(body),
          ...(encoding ? { headers: { 'content-type': 'application/json', 'content-encoding': encoding } } : {}),
          label,
        });
        answers.push(answer);
        if (answer.status !== 413) wrongStatus.push(`${answer.label} → ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    expectHandled(answers);
    expect(wrongStatus).toEqual([]);
  });

  it('the checkout form with too many fields, a bogus charset or a broken gzip body: 4xx', async () => {
    const pay = routes.find((r) => r.template === '/pts-api/checkout/{sessionId}/pay') as DocumentedRoute;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const fields = Array.from({ length: 20 }, (_, i) => `f${i}=1`).join('&');
    expectHandled([
      await send(pay, { body: fields, headers: form }),
      await send(pay, { body: 'a=1', headers: { ...form, 'content-encoding': 'gzip' } }),
      await send(pay, {
        body: gzipSync('a=1'),
        headers: { 'content-type': `${form['content-type']}; charset=bogus`, 'content-encoding': 'gzip' },
      }),
      await send(pay, { body: 'a=%ED%A0%80&b=%00', headers: form }),
    ]);
  });

  it('every JSON answer says nosniff', async () => {
    const health = await platform.get('/health');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await platform.post('/pts-api/manual-event', {});
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('fuzzed bodies shaped by each route schema', { timeout: 300_000 }, () => {
  it('no route with a body answers 5xx, and its 4xx say what to fix', async () => {
    const problems: string[] = [];
    for (const route of jsonBodies()) {
      await fc.assert(
        fc.asyncProperty(values.arbitrary(route.body), async (body) => {
          const answer = await send(route, { body: JSON.stringify(body) ?? 'null', label: 'fuzz:' });
          const problem = problemOf(answer);
          if (problem) problems.push(`${problem}\n  body: ${JSON.stringify(body).slice(0, 300)}`);
        }),
        { numRuns: 20 },
      );
    }
    expect(problems).toEqual([]);
  }, 240_000);
});
