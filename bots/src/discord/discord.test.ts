import { randomBytes } from 'node:crypto';
import { platformUserEmail } from '@pts/shared';
import type { Client } from 'discord.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeCoreApi, type FakeCoreApi } from '../../test/fakes/discord-core-client.ts';
import {
  buttonInteraction,
  type FakeDiscord,
  type FakeGuild,
  type FakeUser,
  guildMemberAdd,
  guildMemberUpdate,
  INTENT,
  messageCreate,
  PERMISSION,
  type RecordedCall,
  slashCommandInteraction,
  snowflake,
  startFakeDiscord,
} from '../../test/fakes/discord-server.ts';
import type { BotDeps, BrandCredentials, ChatPlatform, GroupStore } from '../core/types.ts';
import { attachDiscordBot } from './bot.ts';
import { createDiscordClient } from './client.ts';
import { createDiscordCore } from './core-binding.ts';
import { type HealthServer, startHealthServer } from './health.ts';

const TOKEN = `MTAx.${randomBytes(24).toString('base64url')}`;
const APP_ID = snowflake();
const BRAND_ID = `0x${'ab'.repeat(20)}`;
const SECURITY_KEY = `sk_${randomBytes(16).toString('hex')}`;
const SERVICE_DOMAIN = 'pts.test';

const guild: FakeGuild = {
  id: snowflake(),
  name: 'Coffee Lovers',
  ownerId: snowflake(),
  channels: [
    { id: snowflake(), name: 'welcome' },
    { id: snowflake(), name: 'general' },
  ],
  roles: [
    { id: snowflake(), name: 'VIP' },
    { id: snowflake(), name: 'Regular' },
  ],
};
const welcomeChannel = guild.channels[0]!.id;
const general = guild.channels[1]!.id;
const admin: FakeUser = { id: snowflake(), username: 'ada', global_name: 'Ada' };
const member: FakeUser = { id: snowflake(), username: 'bob', global_name: 'Bob' };
const newcomer: FakeUser = { id: snowflake(), username: 'cleo', global_name: 'Cleo' };

function memoryGroups(): GroupStore & { map: Map<string, BrandCredentials> } {
  const map = new Map<string, BrandCredentials>();
  const key = (platform: ChatPlatform, id: string) => `${platform}:${id}`;
  return {
    map,
    get: async (platform, id) => map.get(key(platform, id)),
    set: async (platform, id, credentials) => {
      map.set(key(platform, id), credentials);
    },
    delete: async (platform, id) => {
      map.delete(key(platform, id));
    },
    list: async (platform) =>
      [...map.keys()].filter((k) => k.startsWith(`${platform}:`)).map((k) => k.slice(platform.length + 1)),
  };
}

interface CallbackBody {
  type: number;
  data?: {
    flags?: number;
    content?: string;
    embeds?: { title?: string; description?: string; fields?: { name: string; value: string }[] }[];
    components?: { type: number; components: { type: number; custom_id: string; label: string; style: number }[] }[];
  };
}

describe('Discord adapter: the real discord.js client against a local fake Discord', () => {
  let fake: FakeDiscord;
  let client: Client;
  let core: FakeCoreApi;
  let groups: ReturnType<typeof memoryGroups>;
  let health: HealthServer;

  beforeAll(async () => {
    fake = await startFakeDiscord({ token: TOKEN, applicationId: APP_ID, guilds: [guild] });
    core = createFakeCoreApi(BRAND_ID, SECURITY_KEY);
    groups = memoryGroups();
    const deps: BotDeps = {
      coreClient: (credentials) => core.clientFor(credentials),
      groups,
      logger: pino({ level: 'silent' }),
      clock: { now: () => new Date() },
      serviceDomain: SERVICE_DOMAIN,
    };
    client = createDiscordClient({ apiUrl: fake.apiUrl });
    attachDiscordBot(client, createDiscordCore(deps), { logger: deps.logger, deferAfterMs: 300 });
    health = await startHealthServer(client, 0, '127.0.0.1');
    const ready = new Promise<void>((resolve) => client.once('clientReady', () => resolve()));
    await client.login(TOKEN);
    await ready;
  });

  afterAll(async () => {
    await client?.destroy();
    await health?.close();
    await fake?.close();
  });

  /** Sends an interaction through the gateway and returns the body of its callback. */
  async function interact(payload: { id: string; token: string }): Promise<CallbackBody> {
    expect(fake.dispatch('INTERACTION_CREATE', payload)).toBe(1);
    const call = await fake.waitForCall(
      (c) => c.method === 'POST' && c.path === `/api/v10/interactions/${payload.id}/${payload.token}/callback`,
    );
    return call.body as CallbackBody;
  }

  const embedText = (body: { embeds?: { description?: string }[] } | undefined) => body?.embeds?.[0]?.description ?? '';

  it('identifies with the intents it needs, receives the guild, and reports healthy', async () => {
    const intents = fake.identifies[0]?.intents ?? 0;
    for (const bit of Object.values(INTENT)) expect(intents & bit).toBe(bit);
    expect(client.guilds.cache.get(guild.id)?.name).toBe('Coffee Lovers');
    const response = await fetch(`http://127.0.0.1:${health.port}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok', gateway: 'ready', guilds: 1 });
  });

  it('refuses /setup to a member without Manage Server, and calls nothing', async () => {
    const body = await interact(
      slashCommandInteraction(
        APP_ID,
        member,
        { guild, channelId: general, permissions: PERMISSION.SendMessages },
        'setup',
        [
          { name: 'brand_id', value: BRAND_ID },
          { name: 'security_key', value: SECURITY_KEY },
        ],
      ),
    );
    expect(body.type).toBe(4);
    expect(embedText(body.data)).toMatch(/admin/i);
    // A personal refusal: only the member sees it.
    expect(body.data?.flags).toBe(64);
    expect(core.calls.filter((c) => c.method === 'chatGroupSetup')).toHaveLength(0);
    expect(groups.map.size).toBe(0);
  });

  it('answers "not linked yet" only to the member who asked (ephemeral)', async () => {
    const body = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general, permissions: 0n }, 'daily'),
    );
    expect(embedText(body.data)).toMatch(/not linked to pts yet/);
    expect(body.data?.flags).toBe(64);
  });

  it('runs /setup for an admin (Manage Server) privately and links the guild', async () => {
    core.groupConfig = {
      naturalParticipation: {
        ...(await import('@pts/shared')).DEFAULT_CHAT_GROUP_CONFIG.naturalParticipation,
        gmResponseEnabled: true,
      },
    };
    const body = await interact(
      slashCommandInteraction(
        APP_ID,
        admin,
        { guild, channelId: general, permissions: PERMISSION.ManageGuild | PERMISSION.SendMessages },
        'setup',
        [
          { name: 'brand_id', value: BRAND_ID },
          { name: 'security_key', value: SECURITY_KEY },
        ],
      ),
    );
    expect(body.type).toBe(4);
    // The answer to a command that carried the security key is only shown to the admin.
    expect(body.data?.flags).toBe(64);
    expect(embedText(body.data)).toContain(BRAND_ID);
    const setup = core.calls.find((c) => c.method === 'chatGroupSetup');
    expect(setup?.args[0]).toMatchObject({
      platform: 'discord',
      chatGroupId: guild.id,
      groupName: 'Coffee Lovers',
      setupBy: `discord:${admin.id}`,
      securityKey: SECURITY_KEY,
    });
    expect(await groups.get('discord', guild.id)).toEqual({ brandId: BRAND_ID, securityKey: SECURITY_KEY });
  });

  it('answers /daily with the reward and a milestone button, then handles the button claim', async () => {
    const identityKey = platformUserEmail('discord', member.id, SERVICE_DOMAIN);
    core.unclaimed.set(identityKey, [{ days: 3, bonus: 30 }]);
    const daily = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general, permissions: 0n }, 'daily'),
    );
    expect(daily.type).toBe(4);
    expect(embedText(daily.data)).toContain('+10 pts');
    expect(core.calls.find((c) => c.method === 'checkin')?.args).toEqual([identityKey, 'discord']);
    const button = daily.data?.components?.[0]?.components[0];
    expect(button).toMatchObject({ type: 2, custom_id: 'milestone:3', style: 3 });

    const click = await interact(
      buttonInteraction(APP_ID, fake.botUser, member, { guild, channelId: general }, 'milestone:3'),
    );
    expect(click.type).toBe(4);
    expect(embedText(click.data)).toMatch(/3-day.*\+30 pts/);
    expect(core.calls.find((c) => c.method === 'claimMilestone')?.args).toEqual([identityKey, 3]);

    // The same button again: core-api refuses the second claim, the user gets a readable answer.
    const again = await interact(
      buttonInteraction(APP_ID, fake.botUser, member, { guild, channelId: general }, 'milestone:3'),
    );
    expect(embedText(again.data)).not.toContain('+30 pts');
    expect(core.calls.filter((c) => c.method === 'claimMilestone')).toHaveLength(2);
  });

  it('keeps refusals private: a second /daily and an argument error are ephemeral', async () => {
    const again = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general, permissions: 0n }, 'daily'),
    );
    expect(embedText(again.data)).toMatch(/already checked in today/);
    expect(again.data?.flags).toBe(64);
    const wrong = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general, permissions: 0n }, 'leaderboard', [
        { name: 'metric', value: 'bogus' },
      ]),
    );
    expect(embedText(wrong.data)).toMatch(/metric must be/);
    expect(wrong.data?.flags).toBe(64);
  });
  it('buys a perk from its button privately, and answers readably when it is sold out', async () => {
    core.perks.set('3', { name: 'Free coffee', cost: 100, stock: 1 });
    const bought = await interact(
      buttonInteraction(APP_ID, fake.botUser, member, { guild, channelId: general }, 'perk:3'),
    );
    expect(bought.data?.flags).toBe(64);
    expect(embedText(bought.data)).toMatch(/Free coffee.*100 pts.*PTS-[0-9A-F]{8}/);
    expect(core.calls.find((c) => c.method === 'redeemPerk')?.args[0]).toEqual({
      perkId: '3',
      userIdentifier: platformUserEmail('discord', member.id, SERVICE_DOMAIN),
      platform: 'discord',
    });
    const soldOut = await interact(
      buttonInteraction(APP_ID, fake.botUser, admin, { guild, channelId: general }, 'perk:3'),
    );
    expect(embedText(soldOut.data)).not.toContain('PTS-');
    expect(embedText(soldOut.data).length).toBeGreaterThan(0);
    expect(soldOut.data?.flags).toBe(64);
  });

  it('reports the member’s roles with /perks and whenever they change (chat_role perks)', async () => {
    const vip = guild.roles![0]!.id;
    const withRoles: FakeUser = { ...member, roles: [vip] };
    const before = core.calls.length;
    const listed = await interact(slashCommandInteraction(APP_ID, withRoles, { guild, channelId: general }, 'perks'));
    expect(listed.type).toBe(4);
    expect(core.calls.slice(before).find((c) => c.method === 'reportChatRoles')?.args[0]).toEqual({
      platform: 'discord',
      guildId: guild.id,
      userId: member.id,
      roles: [vip],
    });

    // An admin takes the role away, then gives two: each change reaches core-api without the member acting.
    const extra = guild.roles![1]!.id;
    for (const roles of [[], [vip, extra]]) {
      const since = core.calls.length;
      expect(fake.dispatch('GUILD_MEMBER_UPDATE', guildMemberUpdate(guild, member, roles))).toBe(1);
      await expect
        .poll(() => core.calls.slice(since).find((c) => c.method === 'reportChatRoles')?.args[0], { timeout: 5_000 })
        .toEqual({ platform: 'discord', guildId: guild.id, userId: member.id, roles: [...roles].sort() });
    }
    // An update that changes no role (a nickname) reports nothing.
    const since = core.calls.length;
    fake.dispatch('GUILD_MEMBER_UPDATE', { ...guildMemberUpdate(guild, member, [vip, extra]), nick: 'Bobby' });
    const probe = await interact(slashCommandInteraction(APP_ID, admin, { guild, channelId: general }, 'help'));
    expect(probe.type).toBe(4);
    expect(core.calls.slice(since).filter((c) => c.method === 'reportChatRoles')).toHaveLength(0);
  });

  it('rewards a good-morning message and replies in the channel', async () => {
    const sent = messageCreate(member, { guild, channelId: general }, 'Good morning everyone ☀️');
    fake.dispatch('MESSAGE_CREATE', sent);
    const call = await fake.waitForCall(
      (c) => c.method === 'POST' && c.path === `/api/v10/channels/${general}/messages`,
    );
    const body = call.body as { message_reference?: { message_id: string }; embeds: { description: string }[] };
    expect(body.message_reference?.message_id).toBe(sent.id);
    expect(body.embeds[0]?.description).toMatch(/Bob.*\+25 pts/);
    expect(core.events).toContainEqual({
      eventType: 'good_morning',
      userEmail: platformUserEmail('discord', member.id, SERVICE_DOMAIN),
      channel_id: general,
    });
  });

  it('ignores ordinary chatter and messages from bots', async () => {
    const before = core.events.length;
    fake.dispatch('MESSAGE_CREATE', messageCreate(member, { guild, channelId: general }, 'anyone seen my mug?'));
    fake.dispatch(
      'MESSAGE_CREATE',
      messageCreate({ ...newcomer, bot: true }, { guild, channelId: general }, 'good morning'),
    );
    // A marker message proves the two above were processed first (events arrive in order).
    fake.dispatch('MESSAGE_CREATE', messageCreate(admin, { guild, channelId: general }, 'gm'));
    await fake.waitForCall(
      (c) =>
        c.method === 'POST' && c.path === `/api/v10/channels/${general}/messages` && embedTextOf(c).includes('Ada'),
    );
    expect(core.events.slice(before).map((e) => e.userEmail)).toEqual([
      platformUserEmail('discord', admin.id, SERVICE_DOMAIN),
    ]);
  });

  it('pays the welcome bonus to a member who joins and greets them in the system channel', async () => {
    fake.dispatch('GUILD_MEMBER_ADD', guildMemberAdd(guild, newcomer));
    const call = await fake.waitForCall(
      (c) => c.method === 'POST' && c.path === `/api/v10/channels/${welcomeChannel}/messages`,
    );
    const body = call.body as {
      content: string;
      allowed_mentions: { users: string[] };
      embeds: { description: string }[];
    };
    expect(body.content).toBe(`<@${newcomer.id}>`);
    expect(body.allowed_mentions.users).toEqual([newcomer.id]);
    expect(body.embeds[0]?.description).toMatch(/Welcome, Cleo.*50 pts/);
    expect(core.events).toContainEqual({
      eventType: 'welcome_bonus',
      userEmail: platformUserEmail('discord', newcomer.id, SERVICE_DOMAIN),
      channel_id: welcomeChannel,
    });
  });

  it('answers in DMs: /help works, group commands explain they need a server', async () => {
    const dm = { dmChannelId: snowflake() };
    const help = await interact(slashCommandInteraction(APP_ID, member, dm, 'help'));
    expect(help.data?.flags).toBe(64);
    expect(embedText(help.data)).toContain('/daily');
    const daily = await interact(slashCommandInteraction(APP_ID, member, dm, 'daily'));
    expect(embedText(daily.data).length).toBeGreaterThan(0);
    expect(core.calls.filter((c) => c.method === 'checkin')).toHaveLength(2); // the two /daily in the server, none from the DM
  });

  it('answers a stale registered command the core no longer knows, privately', async () => {
    const body = await interact(slashCommandInteraction(APP_ID, member, { guild, channelId: general }, 'retired'));
    expect(body.data?.flags).toBe(64);
    expect(embedText(body.data)).toContain('re-register the commands');
  });

  it('defers a slow command and delivers the answer afterwards', async () => {
    core.checkinDelayMs = 900;
    const payload = slashCommandInteraction(
      APP_ID,
      admin,
      { guild, channelId: general, permissions: PERMISSION.ManageGuild },
      'checkin',
    );
    const callback = await interact(payload);
    expect(callback).toEqual({ type: 5, data: { flags: 64 } });
    // /daily's answer is public: the private placeholder is removed and the answer posted as a follow-up.
    const followUp = await fake.waitForCall(
      (c) => c.method === 'POST' && c.path === `/api/v10/webhooks/${APP_ID}/${payload.token}`,
    );
    expect(embedTextOf(followUp)).toContain('+10 pts');
    expect(
      fake.calls.some(
        (c) => c.method === 'DELETE' && c.path === `/api/v10/webhooks/${APP_ID}/${payload.token}/messages/@original`,
      ),
    ).toBe(true);
    core.checkinDelayMs = 0;
  });
});

function embedTextOf(call: RecordedCall): string {
  return ((call.body as { embeds?: { description?: string }[] })?.embeds?.[0]?.description ?? '') as string;
}
