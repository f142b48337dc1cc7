import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { createAgentKey } from '../keys/agent-keys.service.ts';
import { createPtsMcpServer } from './mcp-server.ts';
import { OPERATOR_TOOL_NAMES, operatorMcpTools } from './operator-tools.ts';
import { connectRemoteMcp } from './remote-mcp.ts';

// The seed system's MCP tools under their own names and arguments, through a real MCP client and server, each
// a brand-signed call of the running core-api; effects are read back through the services (balances, drops,
// achievements, boards) and the database.

const SERVICE_DOMAIN = 'pts.local';

/** The seed's tool names (Alpha4-Labs/loyalteez-mcp, src/tools/*.ts, without the seed's product prefix). */
const SEED_NAMES = [
  'track_event',
  'bulk_events',
  'get_event_config',
  'admin_reward',
  'resolve_user',
  'streak_checkin',
  'get_leaderboard',
  'get_streak_status',
  'claim_streak_milestone',
  'log_activity',
  'calculate_reward',
  'update_leaderboard_stats',
  'get_user_balance',
  'check_eligibility',
  'get_user_stats',
  'relay_transaction',
  'create_drop',
  'claim_drop',
  'process_third_party_event',
  'list_perks',
  'check_perk_eligibility',
  'redeem_perk',
  'get_user_achievements',
  'update_achievement_progress',
];

let platform: TestPlatform;
let brand: CreatedBrand;
let other: CreatedBrand;
let client: Client;

// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Result = any;
const json = (result: Result) => JSON.parse(result.content[0].text);

/** An MCP client of a server holding one brand's operator tools (the stdio bridge's arrangement). */
async function operatorClient(brandId: string, securityKey: string): Promise<Client> {
  const server = createPtsMcpServer(
    operatorMcpTools({
      apiUrl: platform.url,
      brandId,
      securityKey,
      clock: platform.clock,
      serviceDomain: SERVICE_DOMAIN,
    }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const mcp = new Client({ name: 'seed-host', version: '1' });
  await mcp.connect(clientSide);
  return mcp;
}

/** Calls a tool and answers its JSON, failing the test on an isError answer. */
async function call(name: string, args: Record<string, unknown>, on: Client = client): Promise<Result> {
  const result = await on.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result)}`).toBeFalsy();
  return json(result);
}
/** Calls a tool expected to fail and answers its error. */
async function refused(name: string, args: Record<string, unknown>, on: Client = client): Promise<Result> {
  const result = await on.callTool({ name, arguments: args });
  expect(result.isError, `${name} should fail: ${JSON.stringify(result)}`).toBe(true);
  return json(result).error;
}
const balanceOf = async (identityKey: string) =>
  (await call('get_user_balance', { userEmail: identityKey })).balance as number;
const eventsOf = (identityKey: string) =>
  platform.deps.db
    .selectFrom('events')
    .select(['event_type', 'reward_amount', 'metadata'])
    .where('user_email', '=', identityKey)
    .execute();

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_SERVICE_DOMAIN: SERVICE_DOMAIN,
  });
  brand = await platform.createBrand({
    name: 'Seed Guild',
    domain: 'seed-guild.example',
    rules: [
      { eventType: 'helpful_answer', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'mee6_level_up', rewardAmount: 25, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  other = await platform.createBrand({ name: 'Other Guild', domain: 'other-guild.example' });
  client = await operatorClient(brand.brandId, brand.securityKey);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await platform?.stop();
});

describe('the seed tool list', () => {
  it('lists every seed tool under its own name, requiring the seed’s arguments pts needs', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(SEED_NAMES));
    expect([...OPERATOR_TOOL_NAMES].sort()).toEqual([...SEED_NAMES, 'brand_health'].sort());
    const required = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema.required;
    expect(required('admin_reward')).toEqual(['targetUserId', 'platform', 'eventType']);
    expect(required('create_drop')).toEqual([
      'platform',
      'serverId',
      'eventType',
      'reward',
      'maxClaims',
      'expiresInSeconds',
    ]);
    expect(required('claim_drop')).toEqual(['dropId', 'platformUserId', 'platform']);
    expect(required('log_activity')).toEqual(['userIdentifier', 'platform', 'activityType']);
    expect(required('process_third_party_event')).toEqual(['platform', 'sourceBot', 'eventType', 'targetUserId']);
    // An argument the seed requires and pts does not need (a platform beside a full member identity) is optional.
    expect(required('update_achievement_progress')).toEqual(['userIdentifier', 'achievementType', 'newValue']);
    expect(required('redeem_perk')).toEqual(['userIdentifier', 'perkId']);
  });
});

describe('the eight seed tools pts had no MCP tool for', () => {
  it('admin_reward pays the rule amount to the platform member, with the admin in the metadata', async () => {
    const member = `discord_7001@${SERVICE_DOMAIN}`;
    const wrongAmount = await refused('admin_reward', {
      adminId: 'mod-1',
      targetUserId: '7001',
      platform: 'discord',
      eventType: 'helpful_answer',
      amount: 500,
    });
    expect(wrongAmount).toMatchObject({ code: 'validation', status: 400 });
    expect(wrongAmount.message).toContain('pays 40 pts');
    expect(await eventsOf(member)).toEqual([]);

    const answer = await call('admin_reward', {
      adminId: 'mod-1',
      targetUserId: '7001',
      platform: 'discord',
      eventType: 'helpful_answer',
      amount: 40,
      reason: 'Great answer',
      publicMessage: true,
    });
    expect(answer).toMatchObject({ success: true, rewardAmount: 40, publicEmbed: { reward: 40 } });
    await waitForMintsSettled(platform);
    expect(await balanceOf(member)).toBe(40);
    const [event] = await eventsOf(member);
    expect(event?.metadata).toMatchObject({ adminReward: true, adminId: 'mod-1', reason: 'Great answer' });
  });

  it('calculate_reward answers the rule amount times the streak multiplier, recording nothing', async () => {
    const member = 'calc@example.com';
    const answer = await call('calculate_reward', {
      userIdentifier: member,
      platform: 'web',
      baseReward: 999,
      eventType: 'helpful_answer',
      roles: ['vip'],
    });
    expect(answer).toMatchObject({
      baseReward: 40,
      reward: 40,
      finalReward: 40,
      breakdown: { base: 40, streakMultiplier: 1, roleMultiplier: 1, flatBonus: 0 },
    });
    expect(answer.note).toContain('baseReward 999 was not used');
    expect(await eventsOf(member)).toEqual([]);
    // The seed's own spelling, `loyalteez_<name>`, reaches the same tool (it is not listed twice).
    const prefixed = await call('loyalteez_calculate_reward', { userIdentifier: member, eventType: 'helpful_answer' });
    expect(prefixed.finalReward).toBe(40);
    expect((await client.listTools()).tools.some((tool) => tool.name.startsWith('loyalteez_'))).toBe(false);
  });

  it('log_activity counts once per activityId on the activity board; update_leaderboard_stats keeps the name only', async () => {
    const member = 'chatty@example.com';
    for (const activityId of ['m-1', 'm-1', 'm-2']) {
      await call('log_activity', {
        userIdentifier: member,
        platform: 'discord',
        activityType: 'message',
        count: 3,
        activityId,
      });
    }
    const stats = await call('update_leaderboard_stats', {
      userIdentifier: member,
      platform: 'discord',
      ltzAmount: 5000,
      claimType: 'daily_checkin',
      displayName: 'Chatty Cathy',
    });
    expect(stats).toMatchObject({ success: true, counted: false });
    const board = await call('get_leaderboard', { metric: 'activity', period: 'all_time', userIdentifier: member });
    const entry = board.rankings.find((row: { userIdentifier: string }) => row.userIdentifier === member);
    expect(entry).toMatchObject({ value: 2, displayName: 'Chatty Cathy' });
    expect(board.userRank).toBe(entry.rank);
    // The reported 5000 pts moved no money and no money board.
    expect(await balanceOf(member)).toBe(0);
    const earned = await call('get_leaderboard', { metric: 'ltz_earned', period: 'all_time' });
    expect(earned.rankings.map((row: { userIdentifier: string }) => row.userIdentifier)).not.toContain(member);
  });

  it('create_drop and claim_drop: each member is paid once, the supply holds', async () => {
    const created = await call('create_drop', {
      platform: 'discord',
      serverId: 'guild-1',
      eventType: 'launch_party',
      reward: 15,
      maxClaims: 2,
      expiresInSeconds: 3600,
      triggerType: 'reaction',
      triggerEmoji: '🎉',
    });
    expect(created.dropId).toMatch(/^drop_[0-9a-f]{16}$/);
    expect(Date.parse(created.expiresAt) - platform.clock.now().getTime()).toBe(3600 * 1000);

    const first = await call('claim_drop', { dropId: created.dropId, platformUserId: '8001', platform: 'discord' });
    expect(first).toMatchObject({ success: true, reward: 15, remainingClaims: 1, alreadyClaimed: false });
    const again = await refused('claim_drop', { dropId: created.dropId, platformUserId: '8001', platform: 'discord' });
    expect(again).toMatchObject({ status: 400, reason: 'CLAIM_FAILED', details: { reason: 'already_claimed' } });
    await call('claim_drop', { dropId: created.dropId, platformUserId: '8002', platform: 'discord' });
    const soldOut = await refused('claim_drop', {
      dropId: created.dropId,
      platformUserId: '8003',
      platform: 'discord',
    });
    expect(soldOut).toMatchObject({ status: 409, reason: 'SOLD_OUT' });

    await waitForMintsSettled(platform);
    expect(await balanceOf(`discord_8001@${SERVICE_DOMAIN}`)).toBe(15);
    expect(await balanceOf(`discord_8002@${SERVICE_DOMAIN}`)).toBe(15);
    const drop = await platform.deps.db
      .selectFrom('drops')
      .select(['claimed', 'total_supply'])
      .where('id', '=', created.dropId)
      .executeTakeFirstOrThrow();
    expect(drop).toEqual({ claimed: 2, total_supply: 2 });
  });

  it('process_third_party_event rewards the brand rule <sourceBot>_<eventType> for the platform member', async () => {
    const member = `discord_9001@${SERVICE_DOMAIN}`;
    const answer = await call('process_third_party_event', {
      platform: 'discord',
      sourceBot: 'mee6',
      eventType: 'level_up',
      targetUserId: '9001',
      level: 12,
      rawMessage: 'GG @ada, you just advanced to level 12!',
    });
    expect(answer).toMatchObject({ processed: true, reward: 25, eventTriggered: 'mee6_level_up' });
    await waitForMintsSettled(platform);
    expect(await balanceOf(member)).toBe(25);
    const [event] = await eventsOf(member);
    expect(event).toMatchObject({ event_type: 'mee6_level_up', metadata: { level: 12 } });

    const unknown = await refused('process_third_party_event', {
      platform: 'discord',
      sourceBot: 'tatsu',
      eventType: 'achievement',
      targetUserId: '9001',
    });
    expect(unknown).toMatchObject({ status: 400, reason: 'UNKNOWN_EVENT_TYPE' });
  });

  it('update_achievement_progress adds with increment, sets without, and unlocks at the threshold', async () => {
    const member = 'talker@example.com';
    await call('update_achievement_progress', {
      userIdentifier: member,
      platform: 'discord',
      achievementType: 'message_count',
      newValue: 60,
      increment: true,
    });
    const unlocked = await call('update_achievement_progress', {
      userIdentifier: member,
      platform: 'discord',
      achievementType: 'message_count',
      newValue: 45,
      increment: true,
    });
    expect(unlocked).toMatchObject({ achievementType: 'message_count', currentProgress: 105 });
    expect(unlocked.unlocked.map((a: { threshold: number }) => a.threshold)).toContain(100);
    await call('update_achievement_progress', {
      userIdentifier: member,
      platform: 'discord',
      achievementType: 'level_reached',
      newValue: 6,
    });
    const { achievements } = await call('get_user_achievements', { userIdentifier: member });
    // One entry per achievement of the type, each with its progress toward its own threshold.
    const progress = (type: string) =>
      Math.max(
        ...achievements
          .filter((a: { achievementType: string }) => a.achievementType === type)
          .map((a: { currentProgress: number }) => a.currentProgress),
      );
    expect(progress('message_count')).toBe(105);
    expect(progress('level_reached')).toBe(6);
    expect(achievements.filter((a: { isUnlocked: boolean }) => a.isUnlocked).length).toBeGreaterThanOrEqual(2);

    const computed = await refused('update_achievement_progress', {
      userIdentifier: member,
      platform: 'discord',
      achievementType: 'ltz_earned',
      newValue: 1000,
    });
    expect(computed).toMatchObject({ code: 'validation', status: 400 });
  });
});

describe('the seed’s other tools with its arguments', () => {
  it('track_event names a member by platform; check_eligibility and get_user_stats read the services', async () => {
    const member = `telegram_4242@${SERVICE_DOMAIN}`;
    expect(await call('check_eligibility', { eventType: 'helpful_answer', userEmail: member })).toMatchObject({
      eligible: true,
      claimCount: 0,
      rewardAmount: 40,
    });
    await call('track_event', {
      eventType: 'helpful_answer',
      userIdentifier: { platform: 'telegram', platformUserId: '4242' },
    });
    await waitForMintsSettled(platform);
    // The claim is counted (a second one within the duplicate window would be refused as a duplicate).
    expect(await call('check_eligibility', { eventType: 'helpful_answer', userEmail: member })).toMatchObject({
      claimCount: 1,
      rewardAmount: 40,
    });
    expect(await call('get_user_stats', { userIdentifier: member, platform: 'telegram' })).toMatchObject({
      balance: 40,
      lifetime: { earned: 40 },
    });
    const resolved = await call('resolve_user', { platform: 'telegram', platformUserId: '4242' });
    expect(resolved).toMatchObject({ userIdentifier: member, isNew: false });
    const history = await call('get_user_balance', { userEmail: member, includeHistory: true, historyLimit: 5 });
    expect(history).toMatchObject({ balance: 40 });
    expect(JSON.stringify(history.history)).toContain('helpful_answer');
  });
});

describe('brand credentials', () => {
  it('refuses a brandId that is not the credentials’ brand, recording nothing', async () => {
    const error = await refused('admin_reward', {
      brandId: other.brandId,
      targetUserId: 'intruder@example.com',
      platform: 'web',
      eventType: 'helpful_answer',
    });
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
    expect(await eventsOf('intruder@example.com')).toEqual([]);
    // The same brand, spelled in capitals, is the brand.
    await call('get_event_config', { brandId: brand.brandId.toUpperCase().replace('0X', '0x') });
  });

  it('with a wrong or missing brand key, the new tools are refused (401) and change nothing', async () => {
    const wrong = await operatorClient(brand.brandId, 'x'.repeat(43));
    for (const [name, args] of [
      [
        'create_drop',
        { platform: 'discord', serverId: 'g', eventType: 'x', reward: 1, maxClaims: 1, expiresInSeconds: 60 },
      ],
      ['admin_reward', { targetUserId: 'thief@example.com', platform: 'web', eventType: 'helpful_answer' }],
      ['log_activity', { userIdentifier: 'thief@example.com', platform: 'web', activityType: 'message' }],
      [
        'update_achievement_progress',
        { userIdentifier: 'thief@example.com', platform: 'web', achievementType: 'message_count', newValue: 5 },
      ],
    ] as const) {
      const error = await refused(name, args, wrong);
      expect(error, name).toMatchObject({ code: 'auth_required', status: 401 });
    }
    expect(await eventsOf('thief@example.com')).toEqual([]);
    const drops = await platform.deps.db.selectFrom('drops').select('id').where('name', '=', 'x').execute();
    expect(drops).toEqual([]);
    await wrong.close();

    // Another brand's key cannot claim this brand's drop.
    const drop = await call('create_drop', {
      platform: 'discord',
      serverId: 'g',
      eventType: 'guarded',
      reward: 3,
      maxClaims: 5,
      expiresInSeconds: 600,
    });
    const foreign = await operatorClient(other.brandId, other.securityKey);
    const error = await refused(
      'claim_drop',
      { dropId: drop.dropId, platformUserId: '1', platform: 'discord' },
      foreign,
    );
    expect(error.status).toBe(401);
    await foreign.close();
  });

  it('/mcp: the agent tool without brand headers; with them, the seed tool of the same name', async () => {
    const keys = { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets };
    const key = await createAgentKey(keys, {
      name: 'seed host',
      tier: 'pro',
      ratePerMinute: 1000,
      brandIds: [brand.brandId],
    });
    const agentOnly = await connectRemoteMcp(platform.url, key);
    const agentList = (await agentOnly.listTools()).tools;
    const agentBalance = agentList.find((tool) => tool.name === 'get_user_balance');
    expect(agentBalance?.inputSchema.required).toEqual(['userId', 'brandId']);
    expect(agentList.map((tool) => tool.name)).not.toContain('admin_reward');
    await agentOnly.close();

    const operator = await connectRemoteMcp(platform.url, key, {
      headers: { 'X-PTS-Brand-Id': brand.brandId, 'X-PTS-Brand-Key': brand.securityKey },
    });
    const listed = (await operator.listTools()).tools;
    const names = listed.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining([...SEED_NAMES, 'get_network_stats', 'converse']));
    // One tool per name: the seed's.
    expect(names.filter((name) => name === 'get_user_balance')).toHaveLength(1);
    expect(listed.find((tool) => tool.name === 'get_user_balance')?.inputSchema.required).toEqual(['userEmail']);
    expect(listed.find((tool) => tool.name === 'redeem_perk')?.inputSchema.required).toEqual([
      'userIdentifier',
      'perkId',
    ]);
    const balance = await call('get_user_balance', { userEmail: `discord_7001@${SERVICE_DOMAIN}` }, operator);
    expect(balance).toMatchObject({ balance: 40 });
    await operator.close();

    await expect(
      connectRemoteMcp(platform.url, key, {
        headers: { 'X-PTS-Brand-Id': brand.brandId, 'X-PTS-Brand-Key': other.securityKey },
      }),
    ).rejects.toThrow();
    await expect(
      connectRemoteMcp(platform.url, key, { headers: { 'X-PTS-Brand-Id': brand.brandId } }),
    ).rejects.toThrow();
  }, 60_000);
});
