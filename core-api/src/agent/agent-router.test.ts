import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../test/agent-fixture.ts';
import { startAgentProbeApp } from '../../test/agent-test-app.ts';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { runCli } from '../cli/run-cli.ts';

// The /api/v1 router: envelopes, spec 7 error codes, limits (spec 8), and the key CLI over the admin API.

let platform: TestPlatform;
let probe: Awaited<ReturnType<typeof startAgentProbeApp>>;

const probeCall = (request: Omit<Parameters<typeof agentRequest>[1], 'baseUrl'>) =>
  agentRequest(platform, { ...request, baseUrl: probe.url });

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  platform = await startTestPlatform();
  probe = await startAgentProbeApp(platform);
}, 120_000);

afterAll(async () => {
  await probe?.close();
  await platform?.stop();
});

describe('envelopes', () => {
  it('answers {data, meta:{tool, timestamp}} with the injected clock', async () => {
    platform.clock.advance(3_600_000);
    const res = await agentRequest(platform, { method: 'GET', path: '/network/info' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta).toEqual({ tool: 'get_network_info', timestamp: platform.clock.now().toISOString() });
    expect(res.body.data.chain.id).toBe(platform.deps.chain.chainId);
  });

  it('maps errors to {error:{message, code, status}} with the spec 7 codes, never leaking internals', async () => {
    const expectations: [number, string][] = [
      [404, 'not_found'],
      [409, 'conflict'],
      [403, 'forbidden'],
      [500, 'internal'],
    ];
    for (const [status, code] of expectations) {
      const res = await probeCall({ method: 'GET', path: '/probe/fail', query: { status } });
      expect(res.status).toBe(status);
      expect(res.body.error).toMatchObject({ code, status });
      expect(typeof res.body.error.message).toBe('string');
    }
    const internal = await probeCall({ method: 'GET', path: '/probe/fail', query: { status: 500 } });
    expect(JSON.stringify(internal.body)).not.toMatch(/srv|secret|stack/);
    const invalid = await probeCall({ method: 'GET', path: '/probe/fail', query: { status: 'many' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ code: 'validation', status: 400 });
  });

  it('answers unknown /api/v1 paths with a 404 not_found envelope', async () => {
    for (const [method, path] of [
      ['GET', '/nothing/here'],
      ['POST', '/network/info'],
      ['POST', '/'],
    ] as const) {
      const res = await agentRequest(platform, { method, path });
      expect(res.status, path).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('GET /api/v1 answers the index of every tool, and /openapi.json documents it', async () => {
    for (const path of ['/api/v1', '/api/v1/']) {
      const res = await platform.get(path);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.meta.tool).toBe('list_agent_tools');
      const { tools, count } = res.body.data;
      expect(count).toBe(tools.length);
      expect(count).toBeGreaterThan(40);
      expect(tools).toContainEqual({
        name: 'get_network_info',
        method: 'GET',
        path: '/api/v1/network/info',
        access: 'public',
        description: expect.any(String),
      });
      const redeem = tools.find((tool: { name: string }) => tool.name === 'redeem_perk');
      expect(redeem).toMatchObject({ method: 'POST', path: '/api/v1/perks/redeem', access: 'key' });
      for (const tool of tools) expect(tool.description).not.toMatch(/\n/);
    }
    const docs = await platform.get('/openapi.json');
    expect(docs.body.paths['/api/v1/'].get.operationId).toBe('list_agent_tools');
    expect(JSON.stringify(docs.body.paths['/api/v1/'].get.responses['200'])).toMatch(/AgentToolIndex|"tools"/);
  });

  it('refuses a path parameter that is not percent-encoded UTF-8 as a bad path, not an unreadable body', async () => {
    for (const path of ['/brands/%ED%A0%80', '/users/%ED%A0%80/portfolio']) {
      const res = await fetch(`${platform.url}/api/v1${path}`);
      const body = (await res.json()) as { error: { code: string; message: string; details: { reason: string } } };
      expect(res.status, path).toBe(400);
      expect(body.error).toMatchObject({ code: 'validation', status: 400, details: { reason: 'malformed_path' } });
      expect(body.error.message).toMatch(/path/);
      expect(body.error.message).not.toMatch(/body/);
    }
  });

  it('refuses a body not sent as JSON with 415 saying to send Content-Type: application/json', async () => {
    const body = JSON.stringify({ industry: 'dining', monthlyCustomers: 10, averageOrderValue: 5 });
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await fetch(`${platform.url}/api/v1/growth/estimate-roi`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      const answer = (await res.json()) as { error: { code: string; status: number; message: string } };
      expect(res.status, contentType).toBe(415);
      expect(answer.error).toMatchObject({ code: 'validation', status: 415 });
      expect(answer.error.message).toContain('Content-Type: application/json');
    }
    const json = await fetch(`${platform.url}/api/v1/growth/estimate-roi`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
    });
    expect(json.status).toBe(200);
  });

  it('refuses malformed JSON with 400 validation', async () => {
    const res = await fetch(`${probe.url}/api/v1/probe/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"by": ',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 'validation', status: 400 });
  });

  it('documents every tool in /docs with its result inside the envelope', async () => {
    const res = await platform.get('/openapi.json');
    expect(res.status).toBe(200);
    const operation = res.body.paths['/api/v1/network/stats'].get;
    expect(operation.operationId).toBe('get_network_stats');
    const schema = JSON.stringify(operation.responses['200']);
    expect(schema).toMatch(/"data"/);
    expect(schema).toMatch(/"meta"/);
    expect(schema).toMatch(/totalIssued/);
  });
});

describe('limits', () => {
  it('limits public calls to 100 a minute per IP, with headers and Retry-After on 429', async () => {
    const first = await probeCall({ method: 'GET', path: '/probe/public' });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('100');
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeLessThan(100);
    const rest = await Promise.all(
      Array.from({ length: remaining }, () => probeCall({ method: 'GET', path: '/probe/public' })),
    );
    expect(rest.every((r) => r.status === 200)).toBe(true);
    const refused = await probeCall({ method: 'GET', path: '/probe/public' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    // A signed call counts against its key, not the exhausted IP.
    const key = await createFixtureKey(platform, { name: 'ip-test' });
    expect((await probeCall({ method: 'GET', path: '/probe/optional', key })).status).toBe(200);
  });

  it("limits signed calls to the key's rate_per_minute, exactly under concurrent requests", async () => {
    const key = await createFixtureKey(platform, { name: 'limited', ratePerMinute: 5 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => probeCall({ method: 'GET', path: '/probe/whoami', query: { x: i }, key })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    expect(refused[0]!.body.error.code).toBe('rate_limit');
    expect(refused[0]!.headers.get('x-ratelimit-limit')).toBe('5');
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another key has its own budget (default 20).
    const other = await createFixtureKey(platform, { name: 'other' });
    const ok = await probeCall({ method: 'GET', path: '/probe/whoami', key: other });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('20');
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('19');
  });
});

describe('pts agent-key', () => {
  it('refuses a key for a brand that does not exist (404 naming it), creating nothing', async () => {
    const ghost = `0x${'9'.repeat(40)}`;
    const before = await platform.deps.db.selectFrom('agent_keys').select('key_id').execute();
    const created = await pts(['agent-key', 'create', '--name', 'ghost key', '--brand', ghost, '--json']);
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain(ghost);
    expect(created.stdout).toBe('');
    const after = await platform.deps.db.selectFrom('agent_keys').select('key_id').execute();
    expect(after).toHaveLength(before.length);
  });

  it('creates, lists and revokes keys; a created key signs, a revoked one is refused', async () => {
    const brand = await platform.createBrand({ name: 'CLI brand', domain: 'cli.example.com' });
    const created = await pts([
      'agent-key',
      'create',
      '--name',
      'cli key',
      '--brand',
      brand.brandId,
      '--can-manage-program',
      '--tier',
      'pro',
      '--rate-per-minute',
      '50',
      '--json',
    ]);
    expect(created, created.stderr).toMatchObject({ code: 0, stderr: '' });
    const key = JSON.parse(created.stdout) as { keyId: string; secret: string };
    expect(Object.keys(key).sort()).toEqual(['keyId', 'secret']);
    expect(key.keyId).toMatch(/^ak_[0-9a-f]+$/);

    const stored = await platform.deps.db
      .selectFrom('agent_keys')
      .selectAll()
      .where('key_id', '=', key.keyId)
      .executeTakeFirstOrThrow();
    expect(stored.secret_encrypted).not.toContain(key.secret);
    expect(platform.deps.secrets.decrypt(stored.secret_encrypted)).toBe(key.secret);

    const signed = await probeCall({ method: 'GET', path: '/probe/whoami', key });
    expect(signed.status).toBe(200);
    expect(signed.headers.get('x-ratelimit-limit')).toBe('50');

    const listed = await pts(['agent-key', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.secret);
    const entry = (JSON.parse(listed.stdout) as { keyId: string }[]).find((k) => k.keyId === key.keyId);
    expect(entry).toMatchObject({
      name: 'cli key',
      brandIds: [brand.brandId.toLowerCase()],
      canManageProgram: true,
      canOnboard: false,
      tier: 'pro',
      ratePerMinute: 50,
      revokedAt: null,
    });
    const table = await pts(['agent-key', 'list']);
    expect(table.stdout).toContain(key.keyId);
    expect(table.stdout).toContain('active');

    const revoked = await pts(['agent-key', 'revoke', key.keyId]);
    expect(revoked, revoked.stderr).toMatchObject({ code: 0 });
    expect(revoked.stdout).toContain(`Revoked agent key ${key.keyId}`);
    platform.clock.advance(1_000);
    expect((await probeCall({ method: 'GET', path: '/probe/whoami', key })).status).toBe(401);
    expect((await pts(['agent-key', 'list'])).stdout).toMatch(/revoked/);

    expect((await pts(['agent-key', 'create', '--json'])).code).toBe(2);
    expect((await pts(['agent-key', 'create', '--name', 'x', '--tier', 'gold'])).code).toBe(2);
    const unknown = await pts(['agent-key', 'revoke', 'ak_doesnotexist']);
    expect(unknown.code).not.toBe(0);
    const unauthorised = await fetch(`${platform.url}/admin/agent-keys`);
    expect(unauthorised.status).toBe(401);
  });
});
