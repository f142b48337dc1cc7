import { signAgentRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../test/agent-fixture.ts';
import { startAgentProbeApp } from '../../test/agent-test-app.ts';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { revokeAgentKey } from './keys/agent-keys.service.ts';

// Agent signatures (docs/agent-api.md, "Signing") through the real router over the platform's services.

let platform: TestPlatform;
let probe: Awaited<ReturnType<typeof startAgentProbeApp>>;
let key: AgentKeyCredentials;
let brandId: string;
let otherBrandId: string;

const call = (request: Omit<Parameters<typeof agentRequest>[1], 'baseUrl'>) =>
  agentRequest(platform, { ...request, baseUrl: probe.url });
const now = () => Math.floor(platform.clock.now().getTime() / 1000);

beforeAll(async () => {
  platform = await startTestPlatform();
  probe = await startAgentProbeApp(platform);
  brandId = (await platform.createBrand({ name: 'A' })).brandId;
  otherBrandId = (await platform.createBrand({ name: 'B', domain: 'b.example.com' })).brandId;
  key = await createFixtureKey(platform, { name: 'auth test', ratePerMinute: 1000 });
}, 120_000);

afterAll(async () => {
  await probe?.close();
  await platform?.stop();
});

describe('agent signatures', () => {
  it('accepts a good signature and names the key to the tool', async () => {
    const res = await call({ method: 'GET', path: '/probe/whoami', query: { x: 'a b' }, key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ keyId: key.keyId });
    await expect.poll(() => lastUsed(key.keyId)).toBeTruthy();
  });

  it('refuses a bad signature, a wrong secret and an unsigned call with 401 auth_required', async () => {
    const wrong = await call({ method: 'GET', path: '/probe/whoami', key: { ...key, secret: '00'.repeat(32) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ code: 'auth_required', status: 401 });
    const tampered = await call({
      method: 'GET',
      path: '/probe/whoami',
      key,
      headers: { 'x-pts-signature': 'ab'.repeat(32) },
    });
    expect(tampered.status).toBe(401);
    expect(tampered.body.error.details.reason).toBe('mismatch');
    const unsigned = await call({ method: 'GET', path: '/probe/whoami' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.code).toBe('auth_required');
  });

  it('signs the query: a signature for one query does not fit another', async () => {
    const res = await call({ method: 'GET', path: '/probe/whoami', query: { x: '1' }, key, headers: {} });
    expect(res.status).toBe(200);
    const moved = await agentRequest(platform, {
      method: 'GET',
      path: '/probe/whoami',
      query: { x: '2' },
      baseUrl: probe.url,
      headers: signedHeadersFor('/api/v1/probe/whoami?x=1'),
    });
    expect(moved.status).toBe(401);
  });

  it('takes timestamps within ±300 s and refuses 301 s either way', async () => {
    // On a whole second, so the boundary is exact (the server compares with its clock's fractional seconds).
    platform.clock.advance(1000 - (platform.clock.now().getTime() % 1000));
    for (const skew of [-300, 300]) {
      const ok = await call({ method: 'GET', path: '/probe/whoami', key, timestamp: now() + skew });
      expect(ok.status, `skew ${skew}`).toBe(200);
    }
    for (const skew of [-301, 301]) {
      const late = await call({ method: 'GET', path: '/probe/whoami', key, timestamp: now() + skew });
      expect(late.status, `skew ${skew}`).toBe(401);
      expect(late.body.error.details.reason).toBe('timestamp_out_of_window');
    }
  });

  it('refuses malformed headers with 401', async () => {
    const cases: Record<string, string>[] = [
      { 'x-pts-agent-key': key.keyId },
      { 'x-pts-agent-key': key.keyId, 'x-pts-timestamp': 'soon', 'x-pts-signature': 'ab'.repeat(32) },
      { 'x-pts-agent-key': key.keyId, 'x-pts-timestamp': String(now()), 'x-pts-signature': 'xyz' },
      { 'x-pts-timestamp': String(now()), 'x-pts-signature': 'ab'.repeat(32) },
      { 'x-pts-agent-key': 'not-a-key', 'x-pts-timestamp': String(now()), 'x-pts-signature': 'ab'.repeat(32) },
    ];
    for (const headers of cases) {
      const res = await call({ method: 'GET', path: '/probe/whoami', headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe('auth_required');
    }
  });

  it('refuses a revoked key with 401, an optional tool included', async () => {
    const doomed = await createFixtureKey(platform, { name: 'doomed' });
    expect((await call({ method: 'GET', path: '/probe/optional', key: doomed })).body.data.keyId).toBe(doomed.keyId);
    await revokeAgentKey({ db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets }, doomed.keyId);
    for (const path of ['/probe/whoami', '/probe/optional']) {
      const res = await call({ method: 'GET', path, key: doomed });
      expect(res.status).toBe(401);
      expect(res.body.error.details.reason).toBe('unknown_key');
    }
    expect((await call({ method: 'GET', path: '/probe/optional' })).body.data.keyId).toBeNull();
  });

  it('answers an identical signed GET twice', async () => {
    const timestamp = now();
    const first = await call({ method: 'GET', path: '/probe/whoami', key, timestamp });
    const second = await call({ method: 'GET', path: '/probe/whoami', key, timestamp });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('x-pts-replayed')).toBeNull();
  });

  it('replays the first answer to an identical signed POST and never acts twice', async () => {
    const before = probe.effects.count;
    const timestamp = now();
    const first = await call({ method: 'POST', path: '/probe/count', body: { by: 3 }, key, timestamp });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.count).toBe(before + 3);
    const again = await call({ method: 'POST', path: '/probe/count', body: { by: 3 }, key, timestamp });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-pts-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(probe.effects.count).toBe(before + 3);
    // Two identical ones at once: still one effect.
    platform.clock.advance(1_000);
    const at = now();
    const both = await Promise.all([
      call({ method: 'POST', path: '/probe/count', body: { by: 1 }, key, timestamp: at }),
      call({ method: 'POST', path: '/probe/count', body: { by: 1 }, key, timestamp: at }),
    ]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(probe.effects.count).toBe(before + 4);
    // A freshly signed request acts again.
    platform.clock.advance(1_000);
    const fresh = await call({ method: 'POST', path: '/probe/count', body: { by: 1 }, key });
    expect(fresh.body.data.count).toBe(before + 5);
  });

  it('checks manage, onboard and converse permissions', async () => {
    const manager = await createFixtureKey(platform, { name: 'm', brandIds: [brandId], canManageProgram: true });
    const brandOnly = await createFixtureKey(platform, { name: 'b', brandIds: [brandId] });
    const onboarder = await createFixtureKey(platform, { name: 'o', canOnboard: true });
    const pro = await createFixtureKey(platform, { name: 'p', tier: 'pro' });
    const enterprise = await createFixtureKey(platform, { name: 'e', tier: 'enterprise' });
    const post = (path: string, k?: AgentKeyCredentials) => {
      platform.clock.advance(1_000);
      return call({ method: 'POST', path, key: k });
    };
    expect((await post(`/probe/brands/${brandId}`, manager)).status).toBe(200);
    expect((await post(`/probe/brands/${brandId.toUpperCase().replace('0X', '0x')}`, manager)).status).toBe(200);
    const otherBrand = await post(`/probe/brands/${otherBrandId}`, manager);
    expect(otherBrand.status).toBe(403);
    expect(otherBrand.body.error.code).toBe('forbidden');
    expect((await post(`/probe/brands/${brandId}`, brandOnly)).status).toBe(403);
    expect((await post(`/probe/brands/${brandId}`)).status).toBe(401);
    expect((await post('/probe/onboard', onboarder)).status).toBe(200);
    expect((await post('/probe/onboard', manager)).status).toBe(403);
    expect((await post('/probe/converse', pro)).status).toBe(200);
    expect((await post('/probe/converse', enterprise)).status).toBe(200);
    const free = await post('/probe/converse', key);
    expect(free.status).toBe(403);
    expect(free.body.error.code).toBe('forbidden');
  });
});

function signedHeadersFor(pathWithQuery: string): Record<string, string> {
  // A valid signature for another URL, built by the same client helper.
  return signAgentRequest({
    keyId: key.keyId,
    secret: key.secret,
    method: 'GET',
    pathWithQuery,
    body: '',
    timestamp: now(),
  });
}

async function lastUsed(keyId: string) {
  const row = await platform.deps.db
    .selectFrom('agent_keys')
    .select('last_used_at')
    .where('key_id', '=', keyId)
    .executeTakeFirstOrThrow();
  return row.last_used_at;
}
