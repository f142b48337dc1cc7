import { type CreatedBrand, signAgentRequest, signRequest } from '@pts/shared';
import { expect } from 'vitest';
import { openSession } from '../src/modules/portal/portal-auth.service.ts';
import { type AgentKeyCredentials, createFixtureKey } from './agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';
import { type JsonSchema, type KnownValues, replaceAt, SchemaValues } from './schema-values.ts';

/**
 * The world of the hostile-input tests (issue 11 §3): a platform with its limits raised, a brand, an agent key
 * that may do everything, and every route /openapi.json documents (the route tables and the agent tools
 * generate it) plus the few it does not (MCP, the checkout form, the token issuer and its keys). `send`
 * gives each request the credentials its route takes (admin token, brand signature, agent signature, user
 * token), so hostile input gets past authentication to the readers and validators behind it.
 */

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}

export interface DocumentedRoute {
  method: string;
  /** `/admin/brands/{brandId}` */
  template: string;
  parameters: Parameter[];
  body?: JsonSchema;
  /** The body's media type (JSON unless the route documents another). */
  bodyType?: string;
}

export interface Answer {
  label: string;
  status: number;
  text: string;
  contentType: string;
}

export type SendOptions = {
  pathWithQuery?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  label?: string;
};

export const HOSTILE_EMAIL = 'hostile-member@example.com';
export const HOSTILE_DOMAIN = 'hostile.example';

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

export interface HostileWorld {
  platform: TestPlatform;
  brand: CreatedBrand;
  routes: DocumentedRoute[];
  values: SchemaValues;
  /** Routes with a JSON body. */
  jsonBodies(): DocumentedRoute[];
  pathOf(route: DocumentedRoute, hostile?: { name: string; raw: string }): string;
  requiredQuery(route: DocumentedRoute, except?: string): string[];
  send(route: DocumentedRoute, options?: SendOptions): Promise<Answer>;
  sendEach(selected: DocumentedRoute[], variants: (route: DocumentedRoute) => SendOptions[]): Promise<Answer[]>;
  everyPosition(label: string, mutate: (kind: string, isRoot: boolean) => unknown[], raw?: string[]): Promise<Answer[]>;
  stop(): Promise<void>;
}

export async function startHostileWorld(): Promise<HostileWorld> {
  const platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '1000000',
    PTS_AGENT_IP_PER_MINUTE: '1000000',
    PTS_RELAYER_IP_PER_MINUTE: '1000000',
    PTS_RELAYER_USER_PER_HOUR: '1000000',
  });
  const brand = await platform.createBrand({
    domain: HOSTILE_DOMAIN,
    rules: [{ eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 }],
  });
  const agentKey: AgentKeyCredentials = await createFixtureKey(platform, {
    name: 'hostile input',
    brandIds: [brand.brandId],
    canManageProgram: true,
    canOnboard: true,
    tier: 'enterprise',
    ratePerMinute: 100_000,
  });
  const issued = await platform.post(
    '/admin/users/token',
    { email: HOSTILE_EMAIL },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  // A brand portal owner of the brand: each portal request gets a fresh session (sign-out and a password
  // change end sessions) and a matching CSRF cookie and header.
  const portalInvite = await platform.post(
    '/admin/portal/invites',
    { brandId: brand.brandId, email: HOSTILE_EMAIL, role: 'owner' },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  const portalToken = new URL((portalInvite.body as { inviteUrl: string }).inviteUrl).hash.replace('#token=', '');
  const csrf = 'hostile-world-csrf-token-0123456789abcdefghi';
  const accepted = await fetch(`${platform.url}/portal/api/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `pts_portal_csrf=${csrf}`, 'x-csrf-token': csrf },
    body: JSON.stringify({ token: portalToken, password: 'hostile world password' }),
  });
  if (!accepted.ok) throw new Error(`portal invite not accepted: ${await accepted.text()}`);
  const portalUser = await platform.deps.db
    .selectFrom('portal_users')
    .select('id')
    .where('email', '=', HOSTILE_EMAIL)
    .executeTakeFirstOrThrow();
  const portalHeaders = async (): Promise<Record<string, string>> => ({
    cookie: `pts_portal_session=${await openSession({ db: platform.deps.db, clock: platform.clock }, portalUser.id)}; pts_portal_csrf=${csrf}`,
    'x-csrf-token': csrf,
  });
  /** A user's access token, for the relayer's user routes. */
  const userToken = (issued.body as { token: string }).token;
  const doc = (await platform.get('/openapi.json')).body as {
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: object } }>>;
    components: { schemas: Record<string, JsonSchema> };
  };
  /** What valid-shaped values use for ids and keys (kept current when a request rotates the brand's keys). */
  const known: KnownValues = {
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    // The revoke route gets a key of its own: revoking the one that signs would lock the agent API out.
    agentKeyId: (await createFixtureKey(platform, { name: 'revoked by the hostile input test' })).keyId,
    email: HOSTILE_EMAIL,
    eventType: 'purchase',
    domain: HOSTILE_DOMAIN,
  };
  const values = new SchemaValues(doc.components.schemas, known);
  const routes: DocumentedRoute[] = [];
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

  const pathOf = (route: DocumentedRoute, hostile?: { name: string; raw: string }): string =>
    route.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      if (hostile?.name === name) return hostile.raw;
      const parameter = route.parameters.find((p) => p.in === 'path' && p.name === name);
      return encodeURIComponent(String(values.valid(parameter?.schema, name)));
    });

  const requiredQuery = (route: DocumentedRoute, except?: string): string[] =>
    route.parameters
      .filter((p) => p.in === 'query' && p.required && p.name !== except)
      .map((p) => `${p.name}=${encodeURIComponent(String(values.valid(p.schema, p.name)))}`);

  /** The bearer token a path takes: a user's on the relay, the brand API key on the constraint updater, else the admin token. */
  const bearerFor = (path: string): string => {
    if (/^\/relayer\/(relay|transactions)/.test(path)) return userToken;
    if (path.startsWith('/constraint-updater')) return brand.apiKey;
    return platform.deps.adminToken;
  };

  /**
   * Rotating the brand's keys (`onboarding/keys`, or its MCP tool) succeeds with a valid-shaped call: later
   * requests sign with the new keys, which the answer shows once (REST `data`, MCP text content).
   */
  const keepRotatedKeys = (text: string): void => {
    type Keys = { brandId?: string; securityKey?: string; apiKey?: string };
    let keys: Keys | undefined;
    try {
      const body = JSON.parse(text) as { data?: Keys; result?: { content?: { text?: string }[] } };
      keys = body.data ?? (JSON.parse(body.result?.content?.[0]?.text ?? '{}') as Keys);
    } catch {
      return;
    }
    if (keys?.brandId !== brand.brandId) return;
    if (keys.securityKey) brand.securityKey = known.securityKey = keys.securityKey;
    if (keys.apiKey) brand.apiKey = keys.apiKey;
  };

  /**
   * Sends one request with the credentials its route takes: an agent signature under /api/v1 and /mcp, else
   * a bearer token and a brand signature (each route reads the one it needs). The clock moves a second per
   * request so no signature repeats.
   */
  const send = async (route: DocumentedRoute, options: SendOptions = {}): Promise<Answer> => {
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
      ...(pathWithQuery.startsWith('/portal/api') ? await portalHeaders() : {}),
      ...options.headers,
    };
    const response = await fetch(`${platform.url}${pathWithQuery}`, {
      method: route.method,
      headers,
      ...(body === undefined || route.method === 'GET' ? {} : { body }),
    });
    const text = await response.text();
    if (response.ok && text.includes('securityKey')) keepRotatedKeys(text);
    return {
      label: `${options.label ?? ''} ${route.method} ${pathWithQuery.slice(0, 160)}`,
      status: response.status,
      text,
      contentType: response.headers.get('content-type') ?? '',
    };
  };

  const jsonBodies = () => routes.filter((route) => route.body && route.bodyType === 'application/json');

  return {
    platform,
    brand,
    routes,
    values,
    jsonBodies,
    pathOf,
    requiredQuery,
    send,
    async sendEach(selected, variants) {
      const answers: Answer[] = [];
      for (const route of selected) for (const options of variants(route)) answers.push(await send(route, options));
      return answers;
    },
    /** Sends each route's valid-shaped body changed at every position `mutate` answers for. */
    async everyPosition(label, mutate, raw = []) {
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
    },
    stop: () => platform.stop(),
  };
}

/**
 * What is wrong with an answer, or undefined: a 5xx; a 4xx without the error envelope's message (core
 * `{error:"…"}`, agent `{error:{message}}`); an MCP tool result that reports a 5xx inside a 200.
 */
export function problemOf(answer: Answer): string | undefined {
  const excerpt = `${answer.label} → ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status >= 500) return excerpt;
  // A limit answering first would hide what the input does to the route (the limits are raised above). The
  // exception is chat group /setup's guard against guessing security keys (5 wrong keys per group and per
  // address in 10 minutes, not configurable): hostile input there is wrong keys, and how many of them came
  // before depends on the fuzzer's draws — its 429 is the route's own answer to that input. The portal's
  // sign-in lock (5 wrong passwords per account, 30 per IP) is the same kind of guard, and so is its reset
  // request limit (3 per e-mail, 10 per IP an hour).
  if (
    answer.status === 429 &&
    answer.text.includes('RATE_LIMIT_EXCEEDED') &&
    !answer.text.includes('"setup_failures"') &&
    !answer.text.includes('"sign_in_failures"') &&
    !answer.text.includes('"reset_requests"')
  )
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
export function expectHandled(answers: Answer[]): void {
  const problems = answers.map(problemOf).filter((problem) => problem !== undefined);
  expect(problems).toEqual([]);
}

/** JSON text of `value`, with each `"__RAW_n__"` string replaced by `raw[n]` (number literals JSON.stringify cannot write). */
export function jsonWithRaw(value: unknown, raw: string[]): string {
  return JSON.stringify(value).replace(/"__RAW_(\d+)__"/g, (_, i: string) => raw[Number(i)] ?? 'null');
}
