import {
  CoreApiError,
  type CreatedBrand,
  createAdminClient,
  createCoreClient,
  DEFAULT_CHAT_GROUP_CONFIG,
  signRequest,
  UNLIMITED_CLAIMS,
} from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let other: CreatedBrand;
let seq = 0;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000', PTS_TRUST_PROXY: 'true' });
  platform.clock.set('2026-03-01T10:00:00Z');
  brand = await platform.createBrand({ domain: 'community.example' });
  other = await platform.createBrand({ domain: 'other.example', name: 'Other' });
});

afterAll(async () => {
  await platform?.stop();
});

async function send(
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const headers: Record<string, string> = { 'x-forwarded-for': '192.0.2.1', ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.key) {
    const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 200);
    Object.assign(
      headers,
      signRequest({ securityKey: options.key, method, pathWithQuery: path, body: raw, timestamp }),
    );
  }
  const response = await fetch(`${platform.url}${path}`, { method, headers, ...(raw ? { body: raw } : {}) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const setupBody = (over: Record<string, unknown> = {}) => ({
  brandId: brand.brandId,
  securityKey: brand.securityKey,
  platform: 'discord',
  chatGroupId: '111111111111111111',
  groupName: 'Fans',
  setupBy: 'admin#1',
  ...over,
});

async function rules(brandId: string) {
  const client = createAdminClient({ baseUrl: platform.url, adminToken: platform.deps.adminToken });
  return client.listRules(brandId);
}

describe('chat group setup', () => {
  it('creates the group with the spec defaults and the chat rules, once', async () => {
    const first = await send('POST', '/services/chat-groups/setup', setupBody());
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(first.body.chatGroup).toMatchObject({
      chatGroupId: 'discord:111111111111111111',
      brandId: brand.brandId,
      groupName: 'Fans',
      isActive: true,
      setupBy: 'admin#1',
    });
    expect(first.body.chatGroup.configMetadata).toEqual({
      naturalParticipation: {
        enabled: true,
        gmReward: 25,
        gnReward: 15,
        gmCooldownHours: 24,
        gnCooldownHours: 24,
        gmResponseEnabled: false,
        gnResponseEnabled: false,
      },
      dailyReward: 10,
      welcomeBonus: 50,
      welcomeMessageEnabled: true,
    });
    expect(first.body.rulesCreated.sort()).toEqual(
      ['daily_checkin', 'good_morning', 'good_night', 'streak_milestone', 'welcome_bonus'].sort(),
    );
    const byType = Object.fromEntries((await rules(brand.brandId)).map((rule) => [rule.eventType, rule]));
    expect(byType.daily_checkin).toMatchObject({ rewardAmount: 10, cooldownHours: 0 });
    expect(UNLIMITED_CLAIMS).toContain(byType.daily_checkin?.maxClaims);
    expect(byType.good_morning).toMatchObject({ rewardAmount: 25, cooldownHours: 24 });
    expect(UNLIMITED_CLAIMS).toContain(byType.good_morning?.maxClaims);
    expect(byType.good_night).toMatchObject({ rewardAmount: 15, cooldownHours: 24 });
    expect(byType.welcome_bonus).toMatchObject({ rewardAmount: 50, maxClaims: 1 });

    // Idempotent: same record, no new rules, a rule the brand changed is left alone.
    await platform.setRule(brand.brandId, { eventType: 'good_morning', rewardAmount: 99, maxClaims: -1 });
    const again = await send(
      'POST',
      '/services/chat-groups/setup',
      setupBody({ chatGroupId: 'discord:111111111111111111' }),
    );
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(again.body.rulesCreated).toEqual([]);
    expect(again.body.chatGroup.id).toBe(first.body.chatGroup.id);
    const gm = (await rules(brand.brandId)).find((rule) => rule.eventType === 'good_morning');
    expect(gm?.rewardAmount).toBe(99);
    const count = await platform.deps.db
      .selectFrom('chat_groups')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('answers 401 for a wrong key or unknown brand, then 429 after 5 failures', async () => {
    const body = setupBody({ chatGroupId: '222', securityKey: 'pts_sk_wrong' });
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await send('POST', '/services/chat-groups/setup', body, {
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
    }
    // The group is locked whichever address tries next, even with the right key…
    const lockedGroup = await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '222' }), {
      headers: { 'x-forwarded-for': '203.0.113.10' },
    });
    expect(lockedGroup.status).toBe(429);
    expect(lockedGroup.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(lockedGroup.headers.get('retry-after'))).toBeGreaterThan(0);
    // …and so is the address, for any group.
    const lockedIp = await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '223' }), {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expect(lockedIp.status).toBe(429);
    // Another address and group are not affected.
    const fine = await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '224' }), {
      headers: { 'x-forwarded-for': '203.0.113.11' },
    });
    expect(fine.status, JSON.stringify(fine.body)).toBe(201);
    const unknownBrand = await send(
      'POST',
      '/services/chat-groups/setup',
      setupBody({ chatGroupId: '333', brandId: `0x${'ab'.repeat(20)}` }),
      { headers: { 'x-forwarded-for': '203.0.113.12' } },
    );
    expect(unknownBrand.status).toBe(401);
  });

  it('creates the group and each rule once under 12 concurrent setups', async () => {
    const fresh = await platform.createBrand({ domain: 'fresh.example', name: 'Fresh' });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        send(
          'POST',
          '/services/chat-groups/setup',
          setupBody({ brandId: fresh.brandId, securityKey: fresh.securityKey, chatGroupId: '777', setupBy: `a${i}` }),
        ),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
    ]);
    const reported = answers.flatMap((answer) => answer.body.rulesCreated as string[]).sort();
    expect(reported).toEqual(['daily_checkin', 'good_morning', 'good_night', 'streak_milestone', 'welcome_bonus']);
    const rows = await platform.deps.db
      .selectFrom('chat_groups')
      .select('id')
      .where('chat_group_id', '=', 'discord:777')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('rejects bad input with 400', async () => {
    const response = await send('POST', '/services/chat-groups/setup', setupBody({ platform: 'icq' }));
    expect(response.status).toBe(400);
    const mismatch = await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: 'telegram:-100' }));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.details.field).toBe('chatGroupId');
    const matrix = await send(
      'POST',
      '/services/chat-groups/setup',
      setupBody({ platform: 'matrix', chatGroupId: '!room42:matrix.example' }),
    );
    expect(matrix.status).toBe(201);
    expect(matrix.body.chatGroup.chatGroupId).toBe('matrix:!room42:matrix.example');
    const read = await send('GET', '/services/chat-groups/matrix:!room42:matrix.example', undefined, {
      key: brand.securityKey,
    });
    expect(read.status).toBe(200);
  });

  it('re-links a group to another brand with fresh defaults', async () => {
    await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '444' }));
    const path = '/services/chat-groups/discord:444';
    await send('PATCH', path, { configMetadata: { dailyReward: 77 } }, { key: brand.securityKey });
    const moved = await send(
      'POST',
      '/services/chat-groups/setup',
      setupBody({ chatGroupId: '444', brandId: other.brandId, securityKey: other.securityKey }),
    );
    expect(moved.status).toBe(200);
    expect(moved.body.chatGroup.brandId).toBe(other.brandId);
    expect(moved.body.chatGroup.configMetadata).toEqual(DEFAULT_CHAT_GROUP_CONFIG);
    // The old brand can no longer read it; the new one can.
    expect((await send('GET', path, undefined, { key: brand.securityKey })).status).toBe(401);
    expect((await send('GET', path, undefined, { key: other.securityKey })).status).toBe(200);
  });
});

describe('chat group record', () => {
  const path = '/services/chat-groups/discord:111111111111111111';

  it('needs the brand signature to read', async () => {
    expect((await send('GET', path)).status).toBe(401);
    expect((await send('GET', path, undefined, { key: other.securityKey })).status).toBe(401);
    const read = await send('GET', path, undefined, { key: brand.securityKey });
    expect(read.status).toBe(200);
    expect(read.body.chatGroup.chatGroupId).toBe('discord:111111111111111111');
    expect((await send('GET', '/services/chat-groups/discord:999', undefined, { key: brand.securityKey })).status).toBe(
      404,
    );
  });

  it('deep-merges a signed PATCH and validates it', async () => {
    const patched = await send(
      'PATCH',
      path,
      { configMetadata: { naturalParticipation: { gmReward: 40, gmResponseEnabled: true }, welcomeBonus: 0 } },
      { key: brand.securityKey },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.chatGroup.configMetadata).toEqual({
      ...DEFAULT_CHAT_GROUP_CONFIG,
      welcomeBonus: 0,
      naturalParticipation: {
        ...DEFAULT_CHAT_GROUP_CONFIG.naturalParticipation,
        gmReward: 40,
        gmResponseEnabled: true,
      },
    });
    expect(patched.body.rulesUpdated.sort()).toEqual(['good_morning', 'welcome_bonus']);
    const byType = Object.fromEntries((await rules(brand.brandId)).map((rule) => [rule.eventType, rule]));
    expect(byType.good_morning).toMatchObject({ rewardAmount: 40, cooldownHours: 24, maxClaims: -1 });
    expect(byType.welcome_bonus).toMatchObject({ rewardAmount: 0, maxClaims: 1 });
    const flagOnly = await send(
      'PATCH',
      path,
      { configMetadata: { welcomeMessageEnabled: false } },
      { key: brand.securityKey },
    );
    expect(flagOnly.body.rulesUpdated).toEqual([]);
    for (const bad of [
      { configMetadata: { naturalParticipation: { gmCooldownHours: 1.5 } } },
      { configMetadata: { dailyReward: 1_000_001 } },
      { configMetadata: { naturalParticipation: { gnCooldownHours: 8761 } } },
      { configMetadata: { naturalParticipation: { enabled: 'yes' } } },
      { configMetadata: { unknownKey: 1 } },
      {},
    ]) {
      const response = await send('PATCH', path, bad, { key: brand.securityKey });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
    const unsigned = await send('PATCH', path, { configMetadata: { dailyReward: 1 } });
    expect(unsigned.status).toBe(401);
    const read = await send('GET', path, undefined, { key: brand.securityKey });
    expect(read.body.chatGroup.configMetadata.naturalParticipation.gmReward).toBe(40);
    expect(read.body.chatGroup.configMetadata.dailyReward).toBe(10);
  });

  it('DELETE deactivates and setup reactivates', async () => {
    await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '555' }));
    const gone = await send('DELETE', '/services/chat-groups/discord:555', undefined, { key: brand.securityKey });
    expect(gone.status).toBe(200);
    expect(gone.body.chatGroup.isActive).toBe(false);
    const back = await send('POST', '/services/chat-groups/setup', setupBody({ chatGroupId: '555' }));
    expect(back.body.chatGroup.isActive).toBe(true);
  });
});

describe('hashtag campaigns', () => {
  const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
  const campaignsPath = () => `/admin/brands/${brand.brandId}/campaigns`;

  it('creates, lists, patches and validates campaigns', async () => {
    const created = await send(
      'POST',
      campaignsPath(),
      { hashtag: '#launch', reward: 50, startDate: '2026-03-10T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      { headers: admin() },
    );
    expect(created.status).toBe(201);
    expect(created.body.campaign).toMatchObject({
      hashtag: '#launch',
      reward: 50,
      rewardMultiplier: null,
      maxClaimsPerUser: 1,
      excludeBrandPosts: true,
      startDate: '2026-03-10T00:00:00.000Z',
    });
    const id = created.body.campaign.id;
    const patched = await send('PATCH', `${campaignsPath()}/${id}`, { rewardMultiplier: 2 }, { headers: admin() });
    expect(patched.status).toBe(200);
    expect(patched.body.campaign).toMatchObject({ reward: null, rewardMultiplier: 2 });
    const backwards = await send(
      'PATCH',
      `${campaignsPath()}/${id}`,
      { endDate: '2026-03-01T00:00:00Z' },
      { headers: admin() },
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.details.field).toBe('endDate');
    const list = await send('GET', campaignsPath(), undefined, { headers: admin() });
    expect(list.body.campaigns.map((c: { id: string }) => c.id)).toContain(id);
    expect((await send('GET', campaignsPath())).status).toBe(401);

    for (const bad of [
      { hashtag: 'launch', reward: 1, startDate: '2026-03-10T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      { hashtag: '#a-b', reward: 1, startDate: '2026-03-10T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      { hashtag: `#${'x'.repeat(101)}`, reward: 1, startDate: '2026-03-10T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      { hashtag: '#x', reward: 1, startDate: '2026-03-20T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      { hashtag: '#x', startDate: '2026-03-10T00:00:00Z', endDate: '2026-03-20T00:00:00Z' },
      {
        hashtag: '#x',
        reward: 1,
        rewardMultiplier: 2,
        startDate: '2026-03-10T00:00:00Z',
        endDate: '2026-03-20T00:00:00Z',
      },
      { hashtag: '#x', reward: 1, startDate: 'soon', endDate: '2026-03-20T00:00:00Z' },
    ]) {
      const response = await send('POST', campaignsPath(), bad, { headers: admin() });
      expect(response.status, JSON.stringify(bad)).toBe(400);
    }
  });

  it('is active from start_date (included) to end_date (excluded), by the clock or ?at=', async () => {
    const created = await send(
      'POST',
      `/admin/brands/${other.brandId}/campaigns`,
      { hashtag: '#window', reward: 5, startDate: '2026-04-01T00:00:00Z', endDate: '2026-04-02T00:00:00Z' },
      { headers: admin() },
    );
    const id = created.body.campaign.id;
    const activeIds = async (at?: string) => {
      const query = at ? `?at=${encodeURIComponent(at)}` : '';
      const response = await send('GET', `/services/campaigns/${other.brandId}/active${query}`);
      expect(response.status).toBe(200);
      return response.body.campaigns.map((c: { id: string }) => c.id);
    };
    platform.clock.set('2026-03-31T23:59:59.999Z');
    expect(await activeIds()).not.toContain(id);
    platform.clock.set('2026-04-01T00:00:00.000Z');
    expect(await activeIds()).toContain(id);
    platform.clock.set('2026-04-01T23:59:59.999Z');
    expect(await activeIds()).toContain(id);
    // The one window rule of drops and perks: at its end exactly the campaign has ended.
    platform.clock.set('2026-04-02T00:00:00.000Z');
    expect(await activeIds()).not.toContain(id);
    const listed = await send('GET', `/admin/brands/${other.brandId}/campaigns`, undefined, { headers: admin() });
    expect(listed.body.campaigns.find((c: { id: string }) => c.id === id).status).toBe('ended');
    expect(await activeIds('2026-04-01T12:00:00Z')).toContain(id);
    platform.clock.set('2026-03-01T10:00:00Z');
    expect((await send('GET', `/services/campaigns/${other.brandId}/active?at=nope`)).status).toBe(400);
    expect((await send('GET', `/services/campaigns/0x${'cd'.repeat(20)}/active`)).status).toBe(404);
  });

  it('pts campaign create --json', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      [
        'campaign',
        'create',
        '--brand',
        brand.brandId,
        '--hashtag',
        '#cli',
        '--reward',
        '50',
        '--start',
        '2026-05-01T00:00:00Z',
        '--end',
        '2026-05-31T00:00:00Z',
        '--max-per-user',
        '3',
        '--exclude-brand-posts',
        '--json',
      ],
      {
        env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      hashtag: '#cli',
      reward: 50,
      maxClaimsPerUser: 3,
      excludeBrandPosts: true,
      endDate: '2026-05-31T00:00:00.000Z',
    });
    const bad = await runCli(['campaign', 'create', '--brand', brand.brandId, '--hashtag', 'nohash', '--reward', '1'], {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
      stdout: { write: () => undefined },
      stderr: { write: () => undefined },
    });
    expect(bad).toBe(2);
  });
});

describe('core client against core-api', () => {
  it('sets up a group, reads and patches it, checks in and reads the streak, all signed', async () => {
    const core = createCoreClient({
      baseUrl: platform.url,
      brandId: brand.brandId,
      securityKey: brand.securityKey,
      clock: platform.clock,
    });
    const setup = await core.chatGroupSetup({
      platform: 'telegram',
      chatGroupId: '-1009876',
      groupName: 'TG fans',
      setupBy: 'tg_admin',
    });
    expect(setup.chatGroup.chatGroupId).toBe('telegram:-1009876');
    // Two identical signed reads in the same second both pass (distinct timestamps).
    const [a, b] = [await core.chatGroupGet('telegram:-1009876'), await core.chatGroupGet('telegram:-1009876')];
    expect(a.id).toBe(b.id);
    const patched = await core.chatGroupUpdate('telegram:-1009876', {
      configMetadata: { naturalParticipation: { gnReward: 30 } },
    });
    expect(patched.configMetadata.naturalParticipation.gnReward).toBe(30);
    expect(patched.configMetadata.naturalParticipation.gmReward).toBe(25);
    const user = 'telegram_555@pts.local';
    const checkin = await core.checkin(user, 'telegram');
    expect(checkin.alreadyClaimed).toBe(false);
    // The brand's daily_checkin rule pays (an earlier PATCH of dailyReward set it).
    const daily = (await rules(brand.brandId)).find((rule) => rule.eventType === 'daily_checkin');
    expect(checkin.reward).toBe(daily?.rewardAmount);
    expect(checkin.reward).toBe(77);
    expect((await core.checkin(user, 'telegram')).alreadyClaimed).toBe(true);
    const status = await core.streakStatus(user);
    expect(status).toMatchObject({ currentStreak: 1, checkedInToday: true });
    const campaigns = await core.activeCampaigns();
    expect(campaigns.brandId).toBe(brand.brandId);
    const config = await core.eventConfig();
    expect(config.success).toBe(true);
    const error = await core.chatGroupGet('telegram:-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CoreApiError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
