import { randomBytes } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../../test/database.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';

// Brand key rotation through its real entry points: the CLI (over the admin route), the brand-signed event
// path, the bots' /setup (the key presented in clear) and, on PostgreSQL, a second process sharing the database.

let platform: TestPlatform;
let userCount = 0;
const EARN_RULE = { eventType: 'account_creation', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 };

const newUser = () => `rotate-user${++userCount}@example.com`;

/** A brand-signed event (the brand's own server) with `securityKey`, signed at `on`'s clock. */
function signedEvent(on: TestPlatform, brandId: string, securityKey: string) {
  on.clock.advance(1_000);
  return on.signedPost(
    '/pts-api/manual-event',
    { brandId, eventType: 'account_creation', userEmail: newUser() },
    securityKey,
  );
}

async function pts(on: TestPlatform, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: on.url, PTS_ADMIN_TOKEN: on.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** `pts brand rotate-key … --json`, which must succeed with one JSON object on stdout. */
async function rotateKey(on: TestPlatform, brandId: string, graceMinutes?: number) {
  const grace = graceMinutes === undefined ? [] : ['--grace-minutes', String(graceMinutes)];
  const run = await pts(on, ['brand', 'rotate-key', '--brand', brandId, ...grace, '--json']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { securityKey: string; apiKey: string; previousKeyValidUntil: string | null };
}

const setup = (brand: CreatedBrand, securityKey: string, chatGroupId: string) =>
  platform.post('/services/chat-groups/setup', {
    brandId: brand.brandId,
    securityKey,
    platform: 'discord',
    chatGroupId,
    groupName: 'Fans',
    setupBy: 'admin#1',
  });

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('pts brand rotate-key', () => {
  it('prints the new keys once; during the grace both keys sign events, after it the old one is refused', async () => {
    const brand = await platform.createBrand({ name: 'Rotating', domain: 'rotating.example.com', rules: [EARN_RULE] });
    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(200);

    const rotated = await rotateKey(platform, brand.brandId, 30);
    expect(rotated.securityKey).toMatch(/^pts_sk_/);
    expect(rotated.apiKey).toMatch(/^pts_ak_/);
    expect(rotated.securityKey).not.toBe(brand.securityKey);
    expect(Date.parse(rotated.previousKeyValidUntil ?? '') - platform.clock.now().getTime()).toBeGreaterThan(
      29 * 60_000,
    );

    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(200);
    expect((await signedEvent(platform, brand.brandId, rotated.securityKey)).status).toBe(200);
    // The bots' /setup takes the key in clear: the old one too, while it lasts.
    expect((await setup(brand, brand.securityKey, '900000000000000001')).status).toBe(201);

    platform.clock.advance(31 * 60_000);
    const refused = await signedEvent(platform, brand.brandId, brand.securityKey);
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain('Signature does not match');
    expect((await setup(brand, brand.securityKey, '900000000000000002')).status).toBe(401);
    expect((await signedEvent(platform, brand.brandId, rotated.securityKey)).status).toBe(200);

    // The keys are stored hashed and encrypted, never in clear; the audit names the grace, never a key.
    const row = await platform.deps.db
      .selectFrom('brands')
      .selectAll()
      .where('address', '=', brand.brandId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(rotated.securityKey);
    expect(JSON.stringify(row)).not.toContain(brand.securityKey);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('subject', '=', brand.brandId)
      .where('action', '=', 'brand.keys_rotate')
      .execute();
    expect(audit).toEqual([{ action: 'brand.keys_rotate', details: { graceMinutes: 30 } }]);
  });

  it('without a grace the old key is refused at once, and a second rotation ends the first one’s grace', async () => {
    const brand = await platform.createBrand({ name: 'Strict', domain: 'strict.example.com', rules: [EARN_RULE] });
    const first = await rotateKey(platform, brand.brandId);
    expect(first.previousKeyValidUntil).toBeNull();
    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(401);
    expect((await signedEvent(platform, brand.brandId, first.securityKey)).status).toBe(200);

    const second = await rotateKey(platform, brand.brandId, 60);
    const third = await rotateKey(platform, brand.brandId, 60);
    // Only the newest two keys verify.
    expect((await signedEvent(platform, brand.brandId, first.securityKey)).status).toBe(401);
    expect((await signedEvent(platform, brand.brandId, second.securityKey)).status).toBe(200);
    expect((await signedEvent(platform, brand.brandId, third.securityKey)).status).toBe(200);
  });

  it('refuses a bad grace locally and an unknown brand with 404, and the route is in the OpenAPI document', async () => {
    const brand = await platform.createBrand({
      name: 'Bad grace',
      domain: 'bad-grace.example.com',
      rules: [EARN_RULE],
    });
    for (const grace of ['-1', '1.5', 'soon', '10081']) {
      const run = await pts(platform, ['brand', 'rotate-key', '--brand', brand.brandId, '--grace-minutes', grace]);
      expect(run.code, grace).toBe(2);
      expect(run.stderr).toContain('--grace-minutes must be a whole number from 0 to 10080');
    }
    const unknown = await pts(platform, [
      'brand',
      'rotate-key',
      '--brand',
      '0x00000000000000000000000000000000000000aa',
      '--json',
    ]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('No brand with Brand ID');
    const tooLong = await platform.post(
      `/admin/brands/${brand.brandId}/keys/rotate`,
      { graceMinutes: 20_000 },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('graceMinutes');
    const openapi = await platform.get('/openapi.json');
    expect(openapi.body.paths['/admin/brands/{brandId}/keys/rotate']?.post).toBeDefined();
  });
});

describe('pts brand end-old-key (issue 33 §9)', () => {
  it('ends the grace at once: the old key is refused by events and /setup, the new one works, audited', async () => {
    const brand = await platform.createBrand({ name: 'Ending', domain: 'ending.example.com', rules: [EARN_RULE] });
    const rotated = await rotateKey(platform, brand.brandId, 24 * 60);
    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(200);

    const run = await pts(platform, ['brand', 'end-old-key', '--brand', brand.brandId]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`would have verified until ${rotated.previousKeyValidUntil}`);
    expect(run.stdout).toContain('refused from now on');

    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(401);
    expect((await setup(brand, brand.securityKey, '900000000000000101')).status).toBe(401);
    expect((await signedEvent(platform, brand.brandId, rotated.securityKey)).status).toBe(200);
    const status = await platform.get(`/admin/brands/${brand.brandId}`, {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(status.status).toBe(200);

    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'details'])
      .where('subject', '=', brand.brandId)
      .where('action', '=', 'brand.keys_end_previous')
      .execute();
    expect(audit).toEqual([
      { actor: 'admin', action: 'brand.keys_end_previous', details: { wasValidUntil: rotated.previousKeyValidUntil } },
    ]);

    // Nothing left to end: a 409 that says so, from the CLI and the admin route alike.
    const again = await pts(platform, ['brand', 'end-old-key', '--brand', brand.brandId, '--json']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('nothing to end');
    const direct = await platform.post(
      `/admin/brands/${brand.brandId}/keys/end-previous`,
      {},
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(direct.status).toBe(409);
    expect(direct.body.code).toBe('CONFLICT');
    expect(direct.body.error).toContain('nothing to end');
  });

  it('answers --json with the state, 404 for an unknown brand, 401 without the admin token', async () => {
    const brand = await platform.createBrand({ name: 'Ending json', domain: 'ending-json.example.com' });
    await rotateKey(platform, brand.brandId, 60);
    const run = await pts(platform, ['brand', 'end-old-key', '--brand', brand.brandId, '--json']);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout);
    expect(answer).toMatchObject({ brandId: brand.brandId, active: true, previousKeyValidUntil: null });
    expect(Date.parse(answer.endedKeyWasValidUntil) - platform.clock.now().getTime()).toBeGreaterThan(59 * 60_000);
    const unknown = await platform.post(
      '/admin/brands/0x00000000000000000000000000000000000000aa/keys/end-previous',
      {},
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(unknown.status).toBe(404);
    const anonymous = await platform.post(`/admin/brands/${brand.brandId}/keys/end-previous`, {});
    expect(anonymous.status).toBe(401);
    const openapi = await platform.get('/openapi.json');
    expect(openapi.body.paths['/admin/brands/{brandId}/keys/end-previous']?.post).toBeDefined();
  });
});

describe('manage_brand_keys', () => {
  it('calls the same rotation: graceMinutes keeps the old key for the grace', async () => {
    const brand = await platform.createBrand({
      name: 'Agent rotated',
      domain: 'agent-rotated.example.com',
      rules: [EARN_RULE],
    });
    const key = await createFixtureKey(platform, {
      name: 'brand manager',
      canOnboard: true,
      brandIds: [brand.brandId],
      ratePerMinute: 1000,
    });
    platform.clock.advance(1_000);
    const res = await agentRequest(platform, {
      method: 'POST',
      path: '/onboarding/keys',
      body: { action: 'rotate', brandId: brand.brandId, graceMinutes: 5 },
      key,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.previousKeyValidUntil).toEqual(expect.any(String));
    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(200);
    expect((await signedEvent(platform, brand.brandId, res.body.data.securityKey)).status).toBe(200);
    platform.clock.advance(5 * 60_000);
    expect((await signedEvent(platform, brand.brandId, brand.securityKey)).status).toBe(401);
  });
});

// Two platforms on one PostgreSQL database stand for two core-api processes: the rotation made through one is
// heard by the other's brand cache through the brand-change notices (LISTEN/NOTIFY), not by waiting its TTL.
describe.runIf(testDatabaseKind === 'postgres')('rotation across processes', () => {
  let database: TestDatabase;
  let other: TestPlatform;
  let first: TestPlatform;

  beforeAll(async () => {
    database = await createTestDatabase();
    // A long cache TTL: only the change notice can make the second process drop what it holds.
    // One master key, as replicas share it: each decrypts the keys the other stored.
    const env = {
      PTS_RULE_CACHE_SECONDS: '3600',
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
      PTS_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    first = await startTestPlatform(env, { database });
    other = await startTestPlatform(env, { database });
  }, 240_000);

  afterAll(async () => {
    await other?.stop();
    await first?.stop();
    await database?.close();
  });

  async function eventually(what: string, check: () => Promise<boolean>) {
    const deadline = Date.now() + 5_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('the other process takes the new key and refuses the old one once the grace ends', async () => {
    const brand = await first.createBrand({ name: 'Replicated', domain: 'replicated.example.com', rules: [EARN_RULE] });
    // The other process caches the brand with its first key.
    expect((await signedEvent(other, brand.brandId, brand.securityKey)).status).toBe(200);

    const rotated = await rotateKey(first, brand.brandId, 10);
    await eventually(
      'the other process to take the new key',
      async () => (await signedEvent(other, brand.brandId, rotated.securityKey)).status === 200,
    );
    expect((await signedEvent(other, brand.brandId, brand.securityKey)).status).toBe(200);
    other.clock.advance(10 * 60_000);
    expect((await signedEvent(other, brand.brandId, brand.securityKey)).status).toBe(401);

    // A rotation without grace: the other process refuses the replaced key as soon as it hears of it.
    const strict = await rotateKey(first, brand.brandId);
    await eventually(
      'the other process to refuse the replaced key',
      async () => (await signedEvent(other, brand.brandId, rotated.securityKey)).status === 401,
    );
    expect((await signedEvent(other, brand.brandId, strict.securityKey)).status).toBe(200);
  });
});
