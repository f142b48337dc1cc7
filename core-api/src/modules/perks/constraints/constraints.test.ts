import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreatedBrand } from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../../test/platform.ts';
import { createApp } from '../../../app.ts';
import { runCli } from '../../../cli/run-cli.ts';
import { composeServices } from '../../../compose.ts';
import type { ChatRoleSource } from './chat-roles.ts';
import { type ConstraintChecker, createConstraintChecker } from './constraint-checker.ts';

/** A brand's eligibility API on 127.0.0.1: counts hits, answers what `answer` says (optionally slowly). */
interface EligibilityApi {
  url: string;
  hits: { user: string | null; collection: string | null }[];
  answer: (user: string | null) => { status: number; body: string; delayMs?: number };
  close(): Promise<void>;
}

async function startEligibilityApi(): Promise<EligibilityApi> {
  const api: EligibilityApi = {
    url: '',
    hits: [],
    answer: () => ({ status: 200, body: JSON.stringify({ eligible: true }) }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const user = url.searchParams.get('user_address');
    api.hits.push({ user, collection: url.searchParams.get('collection_id') });
    const { status, body, delayMs } = api.answer(user);
    setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    }, delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/eligibility`;
  return api;
}

let platform: TestPlatform;
let api: EligibilityApi;
let brand: CreatedBrand;
let otherBrand: CreatedBrand;
let checker: ConstraintChecker;

const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const randomUser = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

async function createPerk(owner: CreatedBrand, name: string): Promise<number> {
  const created = await platform.post('/admin/perks', { brandId: owner.brandId, name, cost: 0 }, admin());
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.perk.perkId;
}

async function addConstraint(perkId: number, body: Record<string, unknown>): Promise<string> {
  const added = await platform.post(`/admin/perks/${perkId}/constraints`, body, admin());
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  return added.body.constraint.constraintId;
}

const invalidate = (apiKey: string | undefined, body: unknown) =>
  platform.post(
    '/constraint-updater/invalidate-external-api',
    body,
    apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  );

beforeAll(async () => {
  api = await startEligibilityApi();
  // Local chain: insecure (loopback, http) constraint URLs are allowed by default.
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    name: 'Gate Brand',
    domain: 'gate.example.com',
    rules: [{ eventType: 'first_purchase', rewardAmount: 250, cooldownHours: 0 }],
  });
  otherBrand = await platform.createBrand({ name: 'Other Brand', domain: 'other.example.com' });
  checker = platform.deps.constraints as ConstraintChecker;
});

afterAll(async () => {
  await platform?.stop();
  await api?.close();
});

beforeEach(() => {
  api.hits.length = 0;
  api.answer = () => ({ status: 200, body: JSON.stringify({ eligible: true }) });
});

describe('external_api constraints', () => {
  it('asks the API with user_address and collection_id, caches the answer for its TTL (60 s default), then asks again', async () => {
    const perkId = await createPerk(brand, 'TTL Perk');
    await addConstraint(perkId, { kind: 'external_api', url: api.url });
    const user = randomUser();

    const first = await checker.check({ collectionId: perkId, userAddress: user });
    expect(first).toMatchObject({ eligible: true, results: [{ kind: 'external_api', eligible: true, cached: false }] });
    expect(api.hits).toEqual([{ user, collection: String(perkId) }]);

    const second = await checker.check({ collectionId: perkId, userAddress: user.toUpperCase().replace('0X', '0x') });
    expect(second.results[0]).toMatchObject({ eligible: true, cached: true });
    platform.clock.advance(59_000);
    expect((await checker.check({ collectionId: perkId, userAddress: user })).results[0]?.cached).toBe(true);
    expect(api.hits).toHaveLength(1);

    api.answer = () => ({ status: 200, body: JSON.stringify({ eligible: false, reason: 'not a subscriber' }) });
    platform.clock.advance(1_001);
    const refreshed = await checker.check({ collectionId: perkId, userAddress: user });
    expect(refreshed).toMatchObject({
      eligible: false,
      results: [{ eligible: false, cached: false, reason: 'constraint API says not eligible: not a subscriber' }],
    });
    expect(api.hits).toHaveLength(2);
  });

  it('a failing, malformed or slow API means not eligible, with a reason, and is not cached', async () => {
    const perkId = await createPerk(brand, 'Flaky Perk');
    await addConstraint(perkId, { kind: 'external_api', url: api.url, ttlSeconds: 300 });
    const user = randomUser();

    api.answer = () => ({ status: 503, body: '{}' });
    const down = await checker.check({ collectionId: perkId, userAddress: user });
    expect(down.results[0]).toMatchObject({ eligible: false, cached: false });
    expect(down.results[0]?.reason).toMatch(/HTTP 503/);

    api.answer = () => ({ status: 200, body: '{"eligible":"yes"}' });
    const malformed = await checker.check({ collectionId: perkId, userAddress: user });
    expect(malformed.results[0]?.reason).toMatch(/boolean "eligible"/);

    const impatient = createConstraintChecker({
      db: platform.deps.db,
      clock: platform.clock,
      settings: { chatRoleRefreshSeconds: 300, timeoutMs: 150, allowInsecure: true },
    });
    api.answer = () => ({ status: 200, body: '{"eligible":true}', delayMs: 600 });
    const slow = await impatient.check({ collectionId: perkId, userAddress: user });
    expect(slow.results[0]).toMatchObject({ eligible: false, cached: false });
    expect(slow.results[0]?.reason).toMatch(/did not answer \(no complete answer within 150 ms\)/);

    // Nothing was cached: a healthy answer is fetched on the next check.
    api.answer = () => ({ status: 200, body: '{"eligible":true}' });
    const healthy = await checker.check({ collectionId: perkId, userAddress: user });
    expect(healthy.results[0]).toMatchObject({ eligible: true, cached: false });
    expect(api.hits).toHaveLength(4);
  });

  it('20 concurrent checks for one user reach the API once (single-flight)', async () => {
    const perkId = await createPerk(brand, 'Busy Perk');
    await addConstraint(perkId, { kind: 'external_api', url: api.url });
    const user = randomUser();
    api.answer = () => ({ status: 200, body: '{"eligible":true}', delayMs: 200 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => checker.check({ collectionId: perkId, userAddress: user })),
    );
    expect(results.every((result) => result.eligible)).toBe(true);
    expect(api.hits).toHaveLength(1);
  });

  it('refuses, when saving, a URL that names an internal address or carries credentials', async () => {
    const perkId = await createPerk(brand, 'Vetted Perk');
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'https://10.0.0.5/check',
      'https://[fd00::1]/check',
      'https://user:secret@api.example.com/check',
      'ftp://api.example.com/check',
    ]) {
      const refused = await platform.post(`/admin/perks/${perkId}/constraints`, { kind: 'external_api', url }, admin());
      expect(refused.status, `${url}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body.error).toMatch(/not allowed|url/i);
    }
    const listed = await platform.get(`/admin/perks/${perkId}/constraints`, admin());
    expect(listed.body.constraints ?? []).toHaveLength(0);
  });

  it('refuses private and metadata addresses when insecure mode is off (SSRF guard, injected resolver)', async () => {
    const perkId = await createPerk(brand, 'SSRF Perk');
    await addConstraint(perkId, { kind: 'external_api', url: 'https://metadata.internal.test/latest' });
    await addConstraint(perkId, { kind: 'external_api', url: 'https://private.internal.test/check' });
    const resolved: string[] = [];
    const strict = createConstraintChecker({
      db: platform.deps.db,
      clock: platform.clock,
      settings: { chatRoleRefreshSeconds: 300, timeoutMs: 1000, allowInsecure: false },
      resolve: async (hostname) => {
        resolved.push(hostname);
        return [{ address: hostname.startsWith('private.') ? '10.1.2.3' : '169.254.169.254', family: 4 }];
      },
    });
    const verdict = await strict.check({ collectionId: perkId, userAddress: randomUser() });
    expect(verdict.eligible).toBe(false);
    expect(verdict.results.map((result) => result.reason)).toEqual([
      expect.stringMatching(
        /refused: metadata\.internal\.test resolves to 169\.254\.169\.254, a link-local \/ cloud metadata/,
      ),
      expect.stringMatching(/refused: private\.internal\.test resolves to 10\.1\.2\.3, a private/),
    ]);
    expect([...resolved].sort()).toEqual(['metadata.internal.test', 'private.internal.test']);

    // The local test API itself (loopback over http) is refused too when insecure mode is off.
    const loopbackPerk = await createPerk(brand, 'Loopback Perk');
    await addConstraint(loopbackPerk, { kind: 'external_api', url: api.url });
    const refused = await strict.check({ collectionId: loopbackPerk, userAddress: randomUser() });
    expect(refused.results[0]?.reason).toMatch(/must use https/);
    expect(api.hits).toHaveLength(0);
  });
});

describe('POST /constraint-updater/invalidate-external-api', () => {
  it('drops only the calling brand’s cached answers, narrowed by url, user and collection', async () => {
    const perkA = await createPerk(brand, 'Inv A');
    const perkB = await createPerk(brand, 'Inv B');
    const foreignPerk = await createPerk(otherBrand, 'Inv Foreign');
    // URLs of their own, so the answers cached by the other tests do not count here.
    const url = api.url.replace('/eligibility', '/invalidation');
    const otherUrl = api.url.replace('/eligibility', '/other');
    await addConstraint(perkA, { kind: 'external_api', url });
    await addConstraint(perkB, { kind: 'external_api', url });
    await addConstraint(perkB, { kind: 'external_api', url: otherUrl });
    await addConstraint(foreignPerk, { kind: 'external_api', url });
    const [u1, u2] = [randomUser(), randomUser()];
    const warm = async () => {
      for (const user of [u1, u2]) {
        for (const perk of [perkA, perkB, foreignPerk]) await checker.check({ collectionId: perk, userAddress: user });
      }
    };
    await warm();
    // Per user: perkA (api.url), perkB (api.url + otherUrl), foreign (api.url) → 4 rows each.
    expect(api.hits).toHaveLength(8);

    const byUserAndCollection = await invalidate(brand.apiKey, {
      api_url: url,
      user_address: u1.toUpperCase().replace('0X', '0x'),
      collection_id: perkA,
    });
    expect(byUserAndCollection.status, JSON.stringify(byUserAndCollection.body)).toBe(200);
    expect(byUserAndCollection.body).toMatchObject({
      success: true,
      invalidated_count: 1,
      message: expect.any(String),
    });

    const byUser = await invalidate(brand.apiKey, { api_url: url, user_address: u1 });
    expect(byUser.body.invalidated_count).toBe(1); // perkB for u1 (perkA already gone, foreign not ours)

    // The URL is matched after normalization (host case, default form).
    const byUrl = await invalidate(brand.apiKey, { api_url: url.replace('http://127.0.0.1', 'HTTP://127.0.0.1') });
    expect(byUrl.body.invalidated_count).toBe(2); // perkA and perkB for u2

    const foreign = await invalidate(otherBrand.apiKey, { api_url: url });
    expect(foreign.body.invalidated_count).toBe(2); // the other brand's perk, both users
    expect((await invalidate(brand.apiKey, { api_url: otherUrl, collection_id: perkB })).body.invalidated_count).toBe(
      2,
    );
    expect((await invalidate(brand.apiKey, { api_url: url })).body.invalidated_count).toBe(0);

    // Invalidated answers are fetched again on the next check.
    api.hits.length = 0;
    await checker.check({ collectionId: perkA, userAddress: u1 });
    expect(api.hits).toHaveLength(1);
  });

  it('answers 400 without api_url and 401 without or with a wrong API key', async () => {
    const missing = await invalidate(brand.apiKey, { user_address: randomUser() });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ success: false, error: 'api_url is required', code: 'VALIDATION_ERROR' });
    const badUrl = await invalidate(brand.apiKey, { api_url: 'not a url' });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error).toMatch(/api_url/);
    const badUser = await invalidate(brand.apiKey, { api_url: api.url, user_address: '0x12' });
    expect(badUser.status).toBe(400);

    const anonymous = await invalidate(undefined, { api_url: api.url });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
    const wrong = await invalidate('pts_ak_wrong', { api_url: api.url });
    expect(wrong.status).toBe(401);
    const securityKeyInstead = await invalidate(brand.securityKey, { api_url: api.url });
    expect(securityKeyInstead.status).toBe(401);
  });
});

describe('the constraint-updater role on its own host', () => {
  it('serves POST /invalidate-external-api at the root, and not the other roles', async () => {
    const deps = { ...platform.deps, config: { ...platform.deps.config, PTS_ROLES: ['constraint-updater' as const] } };
    const app = createApp(deps, composeServices(deps, platform.changes));
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${brand.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const root = await post('/invalidate-external-api', { api_url: 'https://api.example.com/never-cached' });
      expect(root.status).toBe(200);
      expect(await root.json()).toMatchObject({ success: true, invalidated_count: 0 });
      const prefixed = await post('/constraint-updater/invalidate-external-api', {
        api_url: 'https://api.example.com/x',
      });
      expect(prefixed.status).toBe(200);
      const otherRole = await post('/services/perks/check-eligibility', { brandId: brand.brandId, perkId: 1 });
      expect(otherRole.status).toBe(404);
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});

describe('min_balance and chat_role constraints', () => {
  it('min_balance reads the live token balance every time (never cached)', async () => {
    const perkId = await createPerk(brand, 'Whale Perk');
    await addConstraint(perkId, { kind: 'min_balance', amount: 200 });
    const event = await platform.post('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'first_purchase',
      userEmail: 'whale@example.com',
      domain: 'gate.example.com',
    });
    expect(event.status, JSON.stringify(event.body)).toBe(200);
    const wallet = (event.body.walletAddress as string).toLowerCase();
    await waitForMintsSettled(platform);
    const rich = await checker.check({ collectionId: perkId, userAddress: wallet });
    expect(rich.results[0]).toMatchObject({
      kind: 'min_balance',
      eligible: true,
      cached: false,
      reason: 'balance 250 ≥ 200 required',
    });
    const poor = await checker.check({ collectionId: perkId, userAddress: randomUser() });
    expect(poor.results[0]).toMatchObject({ eligible: false, reason: 'balance 0 is below the 200 tokens required' });
  });

  it('chat_role uses reported roles while fresh; stale without a source → roles unknown; a source refreshes them', async () => {
    const perkId = await createPerk(brand, 'Discord VIP');
    await addConstraint(perkId, { kind: 'chat_role', platform: 'discord', guildId: 'guild-1', role: 'vip' });
    const wallet = randomUser();
    const unlinked = await checker.check({ collectionId: perkId, userAddress: wallet });
    expect(unlinked.results[0]?.reason).toBe(`no discord account is linked to wallet ${wallet}`);

    await platform.deps.db
      .insertInto('oauth_identities')
      .values({
        id: 900n,
        provider: 'discord',
        subject: '4242',
        username: 'vip',
        wallet_address: wallet,
        idp_user_id: 'did:test:vip',
      })
      .execute();
    const never = await checker.check({ collectionId: perkId, userAddress: wallet });
    expect(never.results[0]?.reason).toMatch(/discord roles unknown \(never reported\) and no chat role source/);

    const report = {
      brandId: brand.brandId,
      platform: 'discord',
      guildId: 'guild-1',
      userId: '4242',
      roles: ['vip', 'member'],
    };
    const unsigned = await platform.post('/services/chat-roles', report);
    expect(unsigned.status).toBe(401);
    const forged = await platform.signedPost('/services/chat-roles', report, otherBrand.securityKey);
    expect(forged.status).toBe(401);
    const reported = await platform.signedPost('/services/chat-roles', report, brand.securityKey);
    expect(reported.status, JSON.stringify(reported.body)).toBe(200);
    expect(reported.body.roles).toEqual(['vip', 'member']);

    const fresh = await checker.check({ collectionId: perkId, userAddress: wallet });
    expect(fresh.results[0]).toMatchObject({ eligible: true, cached: true });

    // Another brand's report for the same member does not count for this brand's perk.
    await platform.signedPost(
      '/services/chat-roles',
      { ...report, brandId: otherBrand.brandId, roles: [] },
      otherBrand.securityKey,
    );
    expect((await checker.check({ collectionId: perkId, userAddress: wallet })).eligible).toBe(true);

    platform.clock.advance(300_000);
    const stale = await checker.check({ collectionId: perkId, userAddress: wallet });
    expect(stale.results[0]).toMatchObject({ eligible: false, cached: false });
    expect(stale.results[0]?.reason).toMatch(/discord roles unknown \(last reported 300 s ago, older than 300 s\)/);

    const asked: string[] = [];
    const source: ChatRoleSource = {
      async fetchMemberRoles({ brandId, platform: chat, guildId, userId }) {
        asked.push(`${brandId}/${chat}/${guildId}/${userId}`);
        return ['member'];
      },
    };
    const withSource = createConstraintChecker({
      db: platform.deps.db,
      clock: platform.clock,
      chatRoles: source,
      settings: { chatRoleRefreshSeconds: 300, timeoutMs: 1000, allowInsecure: true },
    });
    const refreshed = await withSource.check({ collectionId: perkId, userAddress: wallet });
    expect(refreshed.results[0]).toMatchObject({
      eligible: false,
      cached: false,
      reason: 'discord member lacks role vip in guild-1',
    });
    expect(asked).toEqual([`${brand.brandId}/discord/guild-1/4242`]);
    const again = await withSource.check({ collectionId: perkId, userAddress: wallet });
    expect(again.results[0]).toMatchObject({ eligible: false, cached: true });
    expect(asked).toHaveLength(1);
  });
});

describe('POST /services/perks/check-eligibility and constraint administration', () => {
  it('evaluates every constraint of the brand’s perk; another brand’s perk is unknown', async () => {
    const perkId = await createPerk(brand, 'Combo Perk');
    await addConstraint(perkId, { kind: 'external_api', url: api.url, ttlSeconds: 0 });
    await addConstraint(perkId, { kind: 'min_balance', amount: 1 });
    const user = randomUser();
    const checked = await platform.post('/services/perks/check-eligibility', {
      brandId: brand.brandId,
      perkId,
      userAddress: user,
    });
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    expect(checked.body).toMatchObject({
      success: true,
      brandId: brand.brandId,
      perkId,
      userAddress: user,
      eligible: false,
      results: [
        { kind: 'external_api', eligible: true, cached: false },
        { kind: 'min_balance', eligible: false },
      ],
    });
    // TTL 0: never cached.
    await platform.post('/services/perks/check-eligibility', { brandId: brand.brandId, perkId, userAddress: user });
    expect(api.hits).toHaveLength(2);

    const foreign = await platform.post('/services/perks/check-eligibility', {
      brandId: otherBrand.brandId,
      perkId,
      userAddress: user,
    });
    expect(foreign.status).toBe(404);
    const bad = await platform.post('/services/perks/check-eligibility', { brandId: brand.brandId, perkId: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^userAddress:/)]));

    const noConstraints = await createPerk(brand, 'Open Perk');
    const open = await platform.post('/services/perks/check-eligibility', {
      brandId: brand.brandId,
      perkId: noConstraints,
      userAddress: user,
    });
    expect(open.body).toMatchObject({ eligible: true, results: [] });
  });

  it('CLI: perk constraint add / list / remove; bad constraints are refused with what to fix', async () => {
    const perkId = await createPerk(brand, 'CLI Gated');
    let stdout = '';
    let stderr = '';
    const pts = async (argv: string[]) => {
      stdout = '';
      stderr = '';
      return runCli(argv, {
        env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      });
    };
    const p = String(perkId);
    expect(
      await pts([
        'perk',
        'constraint',
        'add',
        '--perk',
        p,
        '--kind',
        'external_api',
        '--url',
        `${api.url}#frag`,
        '--ttl',
        '30',
        '--json',
      ]),
    ).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ kind: 'external_api', ttlSeconds: 30, config: { url: api.url } });
    expect(
      await pts(['perk', 'constraint', 'add', '--perk', p, '--kind', 'min_balance', '--amount', '100', '--json']),
    ).toBe(0);
    const balanceId = JSON.parse(stdout).constraintId as string;
    expect(
      await pts([
        'perk',
        'constraint',
        'add',
        '--perk',
        p,
        '--kind',
        'chat_role',
        '--platform',
        'discord',
        '--guild',
        'G1',
        '--role',
        'R1',
        '--json',
      ]),
    ).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      kind: 'chat_role',
      config: { platform: 'discord', guildId: 'G1', role: 'R1' },
    });
    expect(await pts(['perk', 'constraint', 'list', '--perk', p, '--json'])).toBe(0);
    expect(JSON.parse(stdout).constraints.map((c: { kind: string }) => c.kind)).toEqual([
      'external_api',
      'min_balance',
      'chat_role',
    ]);
    expect(await pts(['perk', 'constraint', 'remove', '--perk', p, '--constraint', balanceId])).toBe(0);
    expect(await pts(['perk', 'constraint', 'list', '--perk', p, '--json'])).toBe(0);
    expect(JSON.parse(stdout).constraints).toHaveLength(2);

    expect(await pts(['perk', 'constraint', 'add', '--perk', p, '--kind', 'min_balance'])).toBe(2);
    expect(stderr).toMatch(/--amount is required/);
    expect(
      await pts(['perk', 'constraint', 'add', '--perk', p, '--kind', 'external_api', '--url', `${api.url}?x=1`]),
    ).toBe(1);
    expect(stderr).toMatch(/must not carry a query string/);
    expect(
      await pts(['perk', 'constraint', 'add', '--perk', p, '--kind', 'external_api', '--url', 'ftp://example.com/x']),
    ).toBe(1);
    expect(stderr).toMatch(/url/);
    expect(await pts(['perk', 'constraint', 'add', '--perk', '999999', '--kind', 'min_balance', '--amount', '5'])).toBe(
      1,
    );
    expect(stderr).toMatch(/No perk with id 999999/);
  });
});
