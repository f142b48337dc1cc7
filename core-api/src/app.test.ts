import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../test/platform.ts';
import type { CliIo } from './cli/cli-context.ts';
import { runCli } from './cli/run-cli.ts';

/** The real `pts` CLI talking to the platform over HTTP, with its output captured. */
function cliAgainst(platform: TestPlatform) {
  const out: string[] = [];
  const io = {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => out.push(text) },
  } as unknown as CliIo;
  return { out, io };
}

interface ExpressRouter {
  stack: { route?: { path: string; methods: Record<string, boolean> }; handle: Partial<ExpressRouter> }[];
}

/** `method path` of every route of a router and the routers mounted in it (paths relative to their mount). */
function routesOf(router: ExpressRouter): string[] {
  return router.stack.flatMap((layer) => {
    if (layer.route) return Object.keys(layer.route.methods).map((method) => `${method} ${layer.route?.path}`);
    return layer.handle.stack ? routesOf(layer.handle as ExpressRouter) : [];
  });
}

import { PORTAL_PAGE_PATHS } from './modules/portal/portal-static.ts';

const MOUNT_PREFIXES = [
  '',
  '/pts-api',
  '/services',
  '/admin',
  '/relayer',
  '/reward-processor',
  '/constraint-updater',
  '/api/v1',
  '/portal/api',
  '/integrations/shopify',
];

/** Served, and not API operations: the document and its page, metrics, the JWKS, MCP's protocol endpoint. */
const SERVED_UNDOCUMENTED = new Set([
  'get /openapi.json',
  'get /docs',
  'get /docs/swagger-initializer.js',
  'get /docs/:asset',
  'get /metrics',
  'post /mcp',
  'get /mcp',
  'delete /mcp',
  // The brand portal's pages (the app routes in the browser; docs/portal.md).
  `get ${PORTAL_PAGE_PATHS}`,
]);

describe('the composed app (all roles)', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('exposes request, reward, batch and nonce-lag metrics after a rewarded event', async () => {
    const brand = await platform.createBrand({
      domain: 'metrics.example',
      rules: [{ eventType: 'join', rewardAmount: 3 }],
    });
    const res = await platform.post('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'join',
      userEmail: 'metrics@example.com',
      domain: 'metrics.example',
    });
    expect(res.status).toBe(200);
    await waitForMintsSettled(platform);
    const text = (await platform.get('/metrics')).body as string;
    expect(text).toContain('pts_http_requests_total{method="POST",route="/pts-api/manual-event",status="200"} 1');
    expect(text).toMatch(
      /pts_http_request_duration_seconds_bucket\{le="[^"]+",method="POST",route="\/pts-api\/manual-event",status="200"\}/,
    );
    expect(text).toContain('pts_rewards{status="confirmed"} 1');
    expect(text).toContain('pts_rewards{status="pending"} 0');
    expect(text).toContain('pts_mint_batch_size_count 1');
    expect(text).toMatch(/pts_minter_nonce_lag \d+/);
    expect(text).toContain('pts_events_total{outcome="rewarded"} 1');
  });

  it('serves the OpenAPI 3.1 document generated from the schemas, and the docs UI', async () => {
    const doc = (await platform.get('/openapi.json')).body;
    expect(doc.openapi).toMatch(/^3\.1/);
    for (const path of [
      '/pts-api/manual-event',
      '/pts-api/bulk-events',
      '/pts-api/event-config',
      '/pts-api/verify-dns',
      '/admin/brands',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.components.schemas).toHaveProperty('EventResponse');
    const ui = await fetch(`${platform.url}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('text/html');
  });

  it('documents the routes of the event, brand, identity, pregeneration, webhook and reward-processor tables', async () => {
    const doc = (await platform.get('/openapi.json')).body;
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    const operations = Object.entries(paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'post /pts-api/manual-event',
        'post /pts-api/bulk-events',
        'get /pts-api/event-config',
        'post /pts-api/pregenerate-user',
        'post /admin/brands',
        'get /admin/brands',
        'get /admin/brands/{brandId}',
        'patch /admin/brands/{brandId}',
        'put /admin/brands/{brandId}/rules/{eventType}',
        'get /admin/brands/{brandId}/rules',
        'put /admin/brands/{brandId}/webhook',
        'get /admin/brands/{brandId}/webhook',
        'delete /admin/brands/{brandId}/webhook',
        'post /admin/brands/{brandId}/webhook/test',
        'get /admin/brands/{brandId}/webhook/deliveries',
        'post /admin/webhook-deliveries/{id}/replay',
        'post /admin/users/token',
        'get /.well-known/jwks.json',
        'get /reward-processor/health',
        'post /reward-processor/process-pending',
        'get /reward-processor/queue',
      ]),
    );
    // What the document says a route answers is what it answers.
    const queue = await platform.get('/reward-processor/queue');
    const documented = doc.paths['/reward-processor/queue'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(queue.body).sort()).toEqual(Object.keys(documented.properties).sort());
  });

  it('documents every route it serves: each route table, the seed adapters and the other routers', async () => {
    const doc = (await platform.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
      ),
    );
    const served = routesOf((platform.app as unknown as { router: ExpressRouter }).router);
    expect(served.length).toBeGreaterThan(100);
    // A route answers under its role's prefix (and at the root of a single-role process).
    const undocumented = served.filter(
      (route) =>
        !SERVED_UNDOCUMENTED.has(route) &&
        !MOUNT_PREFIXES.some((prefix) => documented.has(route.replace(' ', ` ${prefix}`))),
    );
    expect(undocumented).toEqual([]);
  });

  it('answers root health with hostname and the mounted routes, and 404 in the error envelope', async () => {
    const health = await platform.get('/health');
    expect(health.body).toMatchObject({ status: 'healthy', service: 'pts-core-api', hostname: expect.any(String) });
    expect(health.body.routes).toEqual(expect.arrayContaining(['/pts-api', '/reward-processor', '/admin']));
    const missing = await platform.get('/no/such/endpoint');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('lets the admin CLI create a brand and a rule against the real app', async () => {
    const { out, io } = cliAgainst(platform);
    const code = await runCli(['brand', 'create', '--name', 'CLI Brand', '--domain', 'cli.example', '--json'], io);
    expect(code, out.join('')).toBe(0);
    const created = JSON.parse(out.join(''));
    expect(created.securityKey).toMatch(/^pts_sk_/);
    out.length = 0;
    const ruleCode = await runCli(
      ['rule', 'set', '--brand', created.brandId, '--event-type', 'first_purchase', '--reward', '500', '--json'],
      io,
    );
    expect(ruleCode, out.join('')).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ eventType: 'first_purchase', rewardAmount: 500 });
  });

  it('issues a local access token for a user through the CLI, verifiable with the served JWKS', async () => {
    const { out, io } = cliAgainst(platform);
    const code = await runCli(['user', 'token', '--email', 'token.user@example.com', '--json'], io);
    expect(code, out.join('')).toBe(0);
    const { token, walletAddress } = JSON.parse(out.join(''));
    expect(walletAddress).toMatch(/^0x[0-9a-f]{40}$/);
    const claims = await platform.deps.tokenIssuer.verifyAccessToken(token);
    expect(claims).toMatchObject({ email: 'token.user@example.com', wallet_address: walletAddress });
    const jwks = (await platform.get('/.well-known/jwks.json')).body;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('answers debug with the spec fields', async () => {
    const debug = await platform.get('/pts-api/debug');
    expect(debug.body).toMatchObject({
      debug: expect.any(String),
      path: '/pts-api/debug',
      method: 'GET',
      worker_version: expect.any(String),
    });
  });
});

describe('a single-role process', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ PTS_ROLES: 'reward-processor' });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it("serves its role's routes at the root as on the spec's own host, and not the other roles", async () => {
    expect((await platform.get('/queue')).status).toBe(200);
    expect((await platform.get('/reward-processor/queue')).status).toBe(200);
    expect((await platform.get('/health')).body).toMatchObject({ status: 'healthy', worker: 'reward-processor' });
    expect((await platform.post('/pts-api/manual-event', {})).status).toBe(404);
    expect((await platform.get('/admin/brands')).status).toBe(404);
  });
});

describe('an admin-only process', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ PTS_ROLES: 'admin' });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('serves its admin routes at the root behind the token, and the public routes and 404s without it', async () => {
    expect((await platform.get('/brands')).status).toBe(401);
    const listed = await platform.get('/brands', { authorization: `Bearer ${platform.deps.adminToken}` });
    expect(listed.status).toBe(200);
    for (const path of ['/health', '/livez', '/openapi.json', '/.well-known/jwks.json']) {
      expect((await platform.get(path)).status, path).toBe(200);
    }
    expect((await platform.get('/no/such/endpoint')).status).toBe(404);
  });
});
