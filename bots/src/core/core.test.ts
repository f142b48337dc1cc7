import { type ChatGroup, CoreApiError, DEFAULT_CHAT_GROUP_CONFIG } from '@pts/shared';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BRAND, fakeCoreClient, memoryGroupStore, testDeps } from '../../test/helpers.ts';
import { detectGreeting, handleMemberJoined, handleMessage } from './participation.ts';
import { createCommandRegistry } from './registry.ts';
import { formatDuration, replyForCoreError } from './replies.ts';
import type { BotDeps, ChatPlace, ChatUser } from './types.ts';

const user: ChatUser = { platform: 'telegram', id: '42', username: 'alice', displayName: 'Alice' };
const group: ChatPlace = { platform: 'telegram', groupId: '-1001', groupName: 'Fans', channelId: '-1001' };
const dm: ChatPlace = { platform: 'telegram', groupId: null, channelId: '42' };
const IDENTITY = 'telegram_42@pts.local';

const streak = {
  currentStreak: 3,
  multiplier: 1.25,
  nextMilestone: { days: 7, bonus: 100, daysRemaining: 4 },
  unclaimedMilestones: [],
};

function chatGroup(
  overrides: Partial<ChatGroup['configMetadata']['naturalParticipation']> = {},
  config: Partial<ChatGroup['configMetadata']> = {},
): ChatGroup {
  return {
    id: '00000000-0000-4000-8000-000000000000',
    chatGroupId: 'telegram:-1001',
    brandId: BRAND.brandId,
    groupName: 'Fans',
    isActive: true,
    configMetadata: {
      ...DEFAULT_CHAT_GROUP_CONFIG,
      ...config,
      naturalParticipation: { ...DEFAULT_CHAT_GROUP_CONFIG.naturalParticipation, ...overrides },
    },
    setupBy: 'telegram:1',
    setupAt: new Date().toISOString(),
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  } as ChatGroup;
}

async function setUp(deps: BotDeps) {
  await deps.groups.set('telegram', '-1001', BRAND);
}

function run(
  deps: BotDeps,
  name: string,
  args = '',
  options: { admin?: boolean; place?: ChatPlace; resolveUser?: (r: string) => Promise<string | undefined> } = {},
) {
  return createCommandRegistry(deps).dispatch(name, args, {
    user,
    place: options.place ?? group,
    isAdmin: async () => options.admin ?? false,
    ...(options.resolveUser ? { resolveUser: options.resolveUser } : {}),
  });
}

function capturingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

describe('replies for every core-api outcome', () => {
  it('formats durations', () => {
    expect(formatDuration(3 * 3600 + 12 * 60)).toBe('3 h 12 min');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(26 * 3600)).toBe('1 d 2 h');
  });

  const cases: [CoreApiError, RegExp][] = [
    [
      new CoreApiError(429, 'COOLDOWN_ACTIVE', 'Cooldown active', { cooldownSeconds: 86400, remainingSeconds: 11520 }),
      /come back in 3 h 12 min/,
    ],
    [new CoreApiError(429, 'MAX_CLAIMS_REACHED', 'Max claims'), /already claimed this reward as many times/],
    [new CoreApiError(409, 'DUPLICATE_EVENT', 'Duplicate'), /already counted/],
    [new CoreApiError(404, 'BRAND_NOT_FOUND', 'Brand'), /no longer exists.*\/setup/],
    [new CoreApiError(0, 'UNREACHABLE', 'Cannot reach'), /pts is unreachable right now; try again in a minute/],
    [new CoreApiError(503, 'HTTP_503', 'down'), /pts is unreachable/],
    // A 501 is an answer, not an outage; operator text (CLI commands) never reaches the chat.
    [
      new CoreApiError(501, 'NOT_IMPLEMENTED', 'needs custodial wallets; set PTS_IDENTITY_PROVIDER=local'),
      /^pts does not offer that for this brand yet/,
    ],
    [new CoreApiError(500, 'INTERNAL_ERROR', 'boom'), /went wrong on our side/],
    [
      new CoreApiError(404, 'PERK_NOT_FOUND', 'Perk 7 not found: create it with npm run pts -- perk create'),
      /^That perk does not exist or is not available; see \/perks/,
    ],
    [
      new CoreApiError(400, 'INSUFFICIENT_BALANCE', 'x', { balance: 10, cost: 30, missing: 20 }),
      /need 20 more pts.*you have 10/,
    ],
    [new CoreApiError(409, 'SOLD_OUT', 'x'), /sold out/],
    [new CoreApiError(409, 'CLAIM_LIMIT_REACHED', 'x'), /already claimed this perk/],
    [new CoreApiError(403, 'NOT_ELIGIBLE', 'x'), /not eligible/],
  ];
  it.each(cases)('%s', (error, expected) => {
    expect(replyForCoreError(error)?.text).toMatch(expected);
  });

  it('leaves non-core errors to the generic answer', () => {
    expect(replyForCoreError(new TypeError('boom'))).toBeUndefined();
  });
});

describe('command dispatch', () => {
  it('/daily pays and shows the streak; /checkin is the same command', async () => {
    const client = fakeCoreClient({
      checkin: async () => ({
        success: true,
        streak,
        reward: 12,
        alreadyClaimed: false,
        day: '2026-03-10',
        eventId: 'e',
        walletAddress: '0x1',
      }),
    });
    const deps = testDeps(client);
    await setUp(deps);
    const reply = await run(deps, 'daily');
    expect(reply?.text).toMatch(/Checked in: \+12 pts/);
    expect(reply?.text).toMatch(/Streak: 3 day\(s\), multiplier ×1.25/);
    expect((await run(deps, 'CHECKIN'))?.text).toMatch(/Checked in/);
    // The member's name travels along, so leaderboards show it (docs/leaderboards.md).
    expect(client.calls.map((c) => c.args)).toEqual([
      [IDENTITY, 'telegram', { displayName: 'Alice', username: 'alice' }],
      [IDENTITY, 'telegram', { displayName: 'Alice', username: 'alice' }],
    ]);
  });

  it('/daily again the same day says when it resets (midnight UTC)', async () => {
    const deps = testDeps(
      fakeCoreClient({
        checkin: async () => ({
          success: true,
          streak,
          reward: 0,
          alreadyClaimed: true,
          day: 'd',
          eventId: null,
          walletAddress: null,
        }),
      }),
    );
    await setUp(deps);
    // The clock is at 20:47 UTC: 3 h 13 min to midnight.
    expect((await run(deps, 'daily'))?.text).toMatch(/already checked in today.*midnight UTC \(in 3 h 13 min\)/);
  });

  it('answers a group that is not set up, and a DM, with guidance', async () => {
    const deps = testDeps(fakeCoreClient({}));
    expect((await run(deps, 'daily'))?.text).toMatch(/a group admin must run \/setup <brand_id> <security_key>/);
    expect((await run(deps, 'balance', '', { place: dm }))?.text).toMatch(/works in a group/);
    expect((await run(deps, 'help', '', { place: dm }))?.text).toMatch(/\/daily \(or \/checkin\)/);
    expect(await run(deps, 'nosuchcommand')).toBeUndefined();
  });

  it('maps core-api being down to a friendly reply and an internal error to a generic one, logged with context', async () => {
    const { logger, lines } = capturingLogger();
    const deps = {
      ...testDeps(
        fakeCoreClient({
          checkin: async () => {
            throw new CoreApiError(0, 'UNREACHABLE', 'Cannot reach http://x');
          },
          streakStatus: async () => {
            throw new TypeError('cannot read properties of undefined');
          },
        }),
      ),
      logger,
    };
    await setUp(deps);
    expect((await run(deps, 'daily'))?.text).toBe('pts is unreachable right now; try again in a minute.');
    expect((await run(deps, 'streak'))?.text).toMatch(/Something went wrong on our side/);
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'command failed')).toMatchObject({
      command: 'streak',
      groupId: '-1001',
      userId: '42',
    });
  });

  it('/streak shows milestones with claim buttons; pressing one claims it', async () => {
    const client = fakeCoreClient({
      streakStatus: async () => ({
        success: true,
        brandId: BRAND.brandId,
        userIdentifier: IDENTITY,
        currentStreak: 8,
        longestStreak: 8,
        multiplier: 1.5,
        nextMilestone: { days: 30, bonus: 500, daysRemaining: 22 },
        unclaimedMilestones: [{ days: 7, bonus: 100 }],
        claimedMilestones: [],
        checkedInToday: true,
        lapsed: false,
        lastActivityAt: null,
        streakExpiresAt: null,
        freezes: { available: 0, pending: 0, usedTotal: 0, lastUsedAt: null, earnEveryDays: 0, max: 0 },
      }),
      claimMilestone: async () => ({ success: true, bonusPts: 100, milestone: 7, eventId: 'e', walletAddress: '0x1' }),
    });
    const deps = testDeps(client);
    await setUp(deps);
    const reply = await run(deps, 'streak');
    expect(reply?.fields?.map((f) => f.value)).toEqual(expect.arrayContaining(['8 day(s)', '×1.5', '7 days: 100 pts']));
    expect(reply?.buttons).toEqual([{ action: 'milestone:7', label: 'Claim 7-day bonus (100 pts)', style: 'success' }]);
    const pressed = await createCommandRegistry(deps).press('milestone:7', {
      user,
      place: group,
      isAdmin: async () => false,
    });
    expect(pressed.text).toMatch(/claimed the 7-day streak bonus: \+100 pts/);
    expect(client.calls.at(-1)).toEqual({ method: 'claimMilestone', args: [IDENTITY, 7] });
  });

  it('/claim says how much is missing; /buy is the same command', async () => {
    const deps = testDeps(
      fakeCoreClient({
        redeemPerk: async () => {
          throw new CoreApiError(400, 'INSUFFICIENT_BALANCE', 'no', { balance: 10, cost: 30, missing: 20 });
        },
      }),
    );
    await setUp(deps);
    expect((await run(deps, 'buy', '3'))?.text).toBe('You need 20 more pts for this perk (you have 10 to spend).');
    expect((await run(deps, 'claim'))?.text).toMatch(/give the perk id/);
  });

  it('/balance shows the spendable balance and rewards on their way, privately', async () => {
    const deps = testDeps(
      fakeCoreClient({
        balance: async (identityKey) => {
          expect(identityKey).toBe(IDENTITY);
          return {
            success: true,
            brandId: BRAND.brandId,
            userIdentifier: identityKey,
            walletAddress: '0x00000000000000000000000000000000000000aa',
            balance: 45,
            pending: 10,
            figures: {
              walletAddress: '0x00000000000000000000000000000000000000aa',
              counts: 'wallet-on-chain+ledger',
              onChain: 45,
              pending: 10,
              reserved: 5,
              spendable: 40,
              earned: { total: 55, confirmed: 45, pending: 10, unminted: 0, reversed: 0 },
              debt: 0,
            },
          };
        },
        tier: async (identityKey) => memberTier(identityKey, null),
      }),
    );
    await setUp(deps);
    const reply = await run(deps, 'pts');
    // Spendable is on chain less the perk being redeemed: the figure redeem judges with, as every surface says.
    expect(reply?.text).toBe(
      'You have 40 pts to spend. 5 are held for a perk being redeemed. 10 more are on their way (confirming on chain).',
    );
    expect(reply?.ephemeral).toBe(true);
  });

  it('/balance before any reward says how to earn', async () => {
    const deps = testDeps(
      fakeCoreClient({
        balance: async (identityKey) => ({
          success: true,
          brandId: BRAND.brandId,
          userIdentifier: identityKey,
          walletAddress: null,
          balance: 0,
          pending: 0,
          figures: {
            walletAddress: null,
            counts: 'wallet-on-chain+ledger',
            onChain: 0,
            pending: 0,
            reserved: 0,
            spendable: 0,
            earned: { total: 0, confirmed: 0, pending: 0, unminted: 0, reversed: 0 },
            debt: 0,
          },
        }),
        tier: async (identityKey) => memberTier(identityKey, null),
      }),
    );
    await setUp(deps);
    expect((await run(deps, 'balance'))?.text).toMatch(/no pts yet: run \/daily/);
  });

  it('/balance adds the tier and what is left to the next when the brand has tiers', async () => {
    const deps = testDeps(
      fakeCoreClient({
        balance: async (identityKey) => ({
          success: true,
          brandId: BRAND.brandId,
          userIdentifier: identityKey,
          walletAddress: '0x00000000000000000000000000000000000000aa',
          balance: 300,
          pending: 0,
          figures: {
            walletAddress: '0x00000000000000000000000000000000000000aa',
            counts: 'wallet-on-chain+ledger',
            onChain: 300,
            pending: 0,
            reserved: 0,
            spendable: 300,
            earned: { total: 300, confirmed: 300, pending: 0, unminted: 0, reversed: 0 },
            debt: 0,
          },
        }),
        tier: async (identityKey) => {
          expect(identityKey).toBe(IDENTITY);
          return memberTier(identityKey, 'Silver');
        },
      }),
    );
    await setUp(deps);
    expect((await run(deps, 'balance'))?.text).toBe(
      'You have 300 pts to spend.\nTier: Silver (next: Gold, 700 more pts earned)',
    );
  });
});

/** A `GET /services/tier` answer: Bronze 0, Silver 500 (×1.25), Gold 1000 (×1.5), earned over 365 days. */
function memberTier(identityKey: string, tier: 'Silver' | 'Gold' | null, basis: 'earned' | 'spent' = 'earned') {
  return {
    success: true as const,
    brandId: BRAND.brandId,
    userIdentifier: identityKey,
    tier,
    multiplier: tier === 'Gold' ? 1.5 : tier === 'Silver' ? 1.25 : 1,
    next: tier === 'Silver' ? { name: 'Gold', threshold: basis === 'spent' ? '1000.00' : '1000' } : null,
    progress: {
      basis: tier ? basis : null,
      period: tier ? ('rolling_365' as const) : null,
      current: tier === 'Gold' ? '1200' : tier === 'Silver' ? (basis === 'spent' ? '300.00' : '300') : '0',
      remaining: tier === 'Silver' ? (basis === 'spent' ? '700.00' : '700') : null,
      graceUntil: tier === 'Gold' ? '2027-01-31T00:00:00.000Z' : null,
    },
  };
}

describe('/tier', () => {
  it('shows the tier, the multiplier, the total over the period and what is left to the next, privately', async () => {
    const client = fakeCoreClient({ tier: async (identityKey) => memberTier(identityKey, 'Silver') });
    const deps = testDeps(client);
    await setUp(deps);
    const reply = await run(deps, 'tier');
    expect(reply?.title).toBe('Your tier: Silver');
    expect(reply?.text).toBe('Next: Gold, 700 more pts earned to reach it.');
    expect(reply?.fields).toEqual([
      { name: 'Multiplier', value: '×1.25', inline: true },
      { name: 'Earned', value: '300 over the last 365 days', inline: true },
    ]);
    expect(reply?.ephemeral).toBe(true);
    expect(client.calls).toEqual([{ method: 'tier', args: [IDENTITY] }]);
  });

  it('says an amount spent for a spent basis, and /vip is its alias', async () => {
    const deps = testDeps(fakeCoreClient({ tier: async (id) => memberTier(id, 'Silver', 'spent') }));
    await setUp(deps);
    const reply = await run(deps, 'vip');
    expect(reply?.text).toBe('Next: Gold, 700.00 more spent to reach it.');
    expect(reply?.fields?.[1]).toEqual({ name: 'Spent', value: '300.00 over the last 365 days', inline: true });
  });

  it('at the top tier says so and shows a grace in force', async () => {
    const deps = testDeps(fakeCoreClient({ tier: async (id) => memberTier(id, 'Gold') }));
    await setUp(deps);
    const reply = await run(deps, 'tier');
    expect(reply?.text).toBe('You are at the top tier.');
    expect(reply?.fields?.[2]).toEqual({ name: 'Kept until', value: '2027-01-31 (grace)', inline: true });
  });

  it('a brand without tiers says so; a DM asks for the group; help lists it', async () => {
    const deps = testDeps(fakeCoreClient({ tier: async (id) => memberTier(id, null) }));
    await setUp(deps);
    expect((await run(deps, 'tier'))?.text).toBe('This community has no VIP tiers.');
    expect((await run(deps, 'tier', '', { place: dm }))?.text).toMatch(/works in a group/);
    expect((await run(deps, 'help'))?.text).toMatch(/\/tier \(or \/vip\): Your VIP tier/);
  });
});

describe('admin commands', () => {
  it('/setup is refused to a non-admin, and the message holding the key is flagged for deletion', async () => {
    const deps = testDeps(fakeCoreClient({}));
    const reply = await run(deps, 'setup', `${BRAND.brandId} ${BRAND.securityKey}`, { admin: false });
    expect(reply?.text).toBe('Only group admins can use /setup.');
    expect(reply?.sensitiveInput).toBe(true);
  });

  it('/setup links the group, stores the credentials and never echoes or logs the key', async () => {
    const { logger, lines } = capturingLogger();
    const groups = memoryGroupStore();
    const client = fakeCoreClient({
      chatGroupSetup: async () => ({ success: true, chatGroup: chatGroup(), created: true, rulesCreated: [] }) as never,
    });
    const deps = { ...testDeps(client, { groups }), logger };
    const reply = await run(deps, 'setup', `${BRAND.brandId} ${BRAND.securityKey}`, { admin: true });
    expect(reply?.text).toMatch(/now linked to brand/);
    expect(reply?.fields?.map((f) => f.value)).toEqual(expect.arrayContaining(['10 pts', '50 pts']));
    expect(reply?.sensitiveInput).toBe(true);
    expect(JSON.stringify(reply)).not.toContain(BRAND.securityKey);
    expect(groups.entries.get('telegram:-1001')).toEqual(BRAND);
    expect(client.calls[0]?.args[0]).toMatchObject({
      platform: 'telegram',
      chatGroupId: '-1001',
      groupName: 'Fans',
      setupBy: 'telegram:42',
    });

    const wrong = {
      ...testDeps(
        fakeCoreClient({
          chatGroupSetup: async () => {
            throw new CoreApiError(401, 'UNAUTHORIZED', 'Invalid');
          },
        }),
      ),
      logger,
    };
    const refused = await run(wrong, 'setup', `${BRAND.brandId} pts_sk_wrong_key_123`, { admin: true });
    expect(refused?.text).toMatch(/brand id or the security key is wrong/);
    expect(lines.join('\n')).not.toContain('pts_sk_');
  });

  it('/config shows and changes the configuration', async () => {
    const client = fakeCoreClient({
      chatGroupGet: async () => chatGroup(),
      chatGroupUpdate: async () => chatGroup({}, { dailyReward: 20 }),
    });
    const deps = testDeps(client);
    await setUp(deps);
    expect((await run(deps, 'config', '', { admin: true }))?.fields?.[0]).toEqual({
      name: 'daily',
      value: '10 pts',
      inline: true,
    });
    const changed = await run(deps, 'config', 'daily 20', { admin: true });
    expect(changed?.fields?.[0]?.value).toBe('20 pts');
    expect(client.calls.at(-1)).toEqual({
      method: 'chatGroupUpdate',
      args: ['telegram:-1001', { configMetadata: { dailyReward: 20 } }],
    });
    expect((await run(deps, 'config', 'greetings maybe', { admin: true }))?.text).toBe('greetings takes on or off.');
  });

  it('/reward sends a brand-signed chat_manual_reward and says when the rule amount differs', async () => {
    const client = fakeCoreClient({
      eventConfig: async () =>
        ({
          success: true,
          brandId: BRAND.brandId,
          events: [{ eventType: 'chat_manual_reward', rewardAmount: 25 }],
        }) as never,
      manualEvent: async () => ({ rewardAmount: 25 }) as never,
    });
    const deps = testDeps(client);
    await setUp(deps);
    const reply = await run(deps, 'reward', '@bob 40', {
      admin: true,
      resolveUser: async (r) => (r === '@bob' ? '77' : undefined),
    });
    expect(reply?.text).toBe(
      "Rewarded @bob with 25 pts (pts pays the amount of the brand's chat_manual_reward rule, not the 40 asked for).",
    );
    expect(client.calls.at(-1)?.args[0]).toEqual({
      eventType: 'chat_manual_reward',
      userEmail: 'telegram_77@pts.local',
      metadata: { source: 'chat_manual_reward', rewardedBy: IDENTITY, requestedAmount: 40 },
      channel_id: '-1001',
    });
    expect((await run(deps, 'reward', '@nobody 5', { admin: true }))?.text).toMatch(/do not know who @nobody is/);
    expect((await run(deps, 'reward', '77 0', { admin: true }))?.text).toMatch(/at least 1/);
  });
});

describe('natural participation and welcome', () => {
  it('detects greetings case-insensitively anywhere, in several languages, as whole words', () => {
    expect(detectGreeting('well GOOD Morning everyone')).toBe('good_morning');
    expect(detectGreeting('gm fam')).toBe('good_morning');
    expect(detectGreeting('Buenas noches a todos')).toBe('good_night');
    expect(detectGreeting('ok gn!')).toBe('good_night');
    expect(detectGreeting('signing off')).toBeUndefined();
    expect(detectGreeting('the gnu project')).toBeUndefined();
  });

  it('pays a greeting with the channel, replies when configured, and stays silent on cooldown', async () => {
    let cooldown = false;
    const client = fakeCoreClient({
      chatGroupGet: async () => chatGroup({ gmResponseEnabled: true }),
      manualEvent: async () => {
        if (cooldown) throw new CoreApiError(429, 'COOLDOWN_ACTIVE', 'Cooldown active', { remainingSeconds: 100 });
        return { rewardAmount: 25 } as never;
      },
    });
    const deps = testDeps(client);
    await setUp(deps);
    expect((await handleMessage({ user, place: group, text: 'Good morning!' }, deps))?.text).toBe(
      'Good morning, Alice! +25 pts',
    );
    expect(client.calls.at(-1)?.args[0]).toEqual({
      eventType: 'good_morning',
      userEmail: IDENTITY,
      metadata: { source_platform: 'telegram', displayName: 'Alice', username: 'alice' },
      channel_id: '-1001',
    });
    cooldown = true;
    expect(await handleMessage({ user, place: group, text: 'good morning again' }, deps)).toBeUndefined();
    expect(await handleMessage({ user, place: group, text: 'hello' }, deps)).toBeUndefined();
  });

  it('pays the welcome bonus once and greets the member', async () => {
    let paid = false;
    const deps = testDeps(
      fakeCoreClient({
        chatGroupGet: async () => chatGroup(),
        manualEvent: async (event) => {
          expect(event.eventType).toBe('welcome_bonus');
          if (paid) throw new CoreApiError(429, 'MAX_CLAIMS_REACHED', 'Max');
          paid = true;
          return { rewardAmount: 50 } as never;
        },
      }),
    );
    await setUp(deps);
    expect((await handleMemberJoined({ user, place: group }, deps))?.text).toMatch(
      /Welcome, Alice! You received a welcome bonus of 50 pts/,
    );
    expect(await handleMemberJoined({ user, place: group }, deps)).toBeUndefined();
  });
});
