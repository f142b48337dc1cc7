import type { CreatedBrand } from '@pts/shared';
import type { Client } from 'discord.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../core-api/test/platform.ts';
import {
  type FakeDiscord,
  type FakeGuild,
  type FakeUser,
  messageCreate,
  PERMISSION,
  slashCommandInteraction,
  snowflake,
  startFakeDiscord,
} from '../../test/fakes/discord-server.ts';
import { memoryGroupStore } from '../../test/helpers.ts';
import { createCoreClients } from '../core/core-clients.ts';
import type { BotDeps } from '../core/types.ts';
import { attachDiscordBot } from './bot.ts';
import { createDiscordClient } from './client.ts';
import { createDiscordCore } from './core-binding.ts';

// The real discord.js client against the local fake Discord, over the real core-api (PGlite + anvil): the
// member's Discord display name travels with their events and check-ins, and the leaderboard shows it.

const TOKEN = `MTAx.${'x'.repeat(32)}`;
const APP_ID = snowflake();
const guild: FakeGuild = {
  id: snowflake(),
  name: 'Coffee Lovers',
  ownerId: snowflake(),
  channels: [{ id: snowflake(), name: 'general' }],
};
const general = guild.channels[0]!.id;
const admin: FakeUser = { id: snowflake(), username: 'ada', global_name: 'Ada Admin' };
const member: FakeUser = { id: snowflake(), username: 'bob', global_name: 'Bob the Barista' };

let platform: TestPlatform;
let brand: CreatedBrand;
let fake: FakeDiscord;
let client: Client;

interface CallbackBody {
  data?: { content?: string; embeds?: { title?: string; description?: string }[] };
}

async function interact(payload: { id: string; token: string }): Promise<string> {
  expect(fake.dispatch('INTERACTION_CREATE', payload)).toBe(1);
  const call = await fake.waitForCall(
    (c) => c.method === 'POST' && c.path === `/api/v10/interactions/${payload.id}/${payload.token}/callback`,
  );
  const body = call.body as CallbackBody;
  return `${body.data?.embeds?.[0]?.description ?? ''}${body.data?.content ?? ''}`;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Coffee Brand' });
  fake = await startFakeDiscord({ token: TOKEN, applicationId: APP_ID, guilds: [guild] });
  const deps: BotDeps = {
    coreClient: createCoreClients({ baseUrl: platform.url, clock: platform.clock }),
    groups: memoryGroupStore(),
    logger: pino({ level: process.env.PTS_TEST_LOG_LEVEL ?? 'silent' }),
    clock: platform.clock,
    serviceDomain: 'pts.local',
  };
  client = createDiscordClient({ apiUrl: fake.apiUrl });
  attachDiscordBot(client, createDiscordCore(deps), { logger: deps.logger });
  const ready = new Promise<void>((resolve) => client.once('clientReady', () => resolve()));
  await client.login(TOKEN);
  await ready;
}, 120_000);

afterAll(async () => {
  await client?.destroy();
  await fake?.close();
  await platform?.stop();
});

describe('discord bot over core-api', () => {
  it('shows members by their Discord display names on the leaderboards', async () => {
    const setup = await interact(
      slashCommandInteraction(
        APP_ID,
        admin,
        { guild, channelId: general, permissions: PERMISSION.ManageGuild | PERMISSION.SendMessages },
        'setup',
        [
          { name: 'brand_id', value: brand.brandId },
          { name: 'security_key', value: brand.securityKey },
        ],
      ),
    );
    expect(setup).toContain(brand.brandId);

    expect(await interact(slashCommandInteraction(APP_ID, member, { guild, channelId: general }, 'daily'))).toMatch(
      /\+10 pts/,
    );
    // A greeting is an event: the name travels in its metadata too.
    fake.dispatch('MESSAGE_CREATE', messageCreate(admin, { guild, channelId: general }, 'gm friends'));
    await expect
      .poll(
        async () =>
          (
            await platform.deps.db
              .selectFrom('events')
              .select('status')
              .where('user_email', '=', `discord_${admin.id}@pts.local`)
              .where('event_type', '=', 'good_morning')
              .execute()
          ).map((row) => row.status),
        { timeout: 10_000 },
      )
      .toEqual(['accepted']);
    await waitForMintsSettled(platform);

    const tokens = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general }, 'leaderboard', [
        { name: 'metric', value: 'tokens' },
        { name: 'period', value: 'all' },
      ]),
    );
    expect(tokens).toMatch(/Ada Admin: 25/);
    expect(tokens).toMatch(/Bob the Barista: 10/);
    expect(tokens).not.toMatch(/discord user/);

    const streaks = await interact(
      slashCommandInteraction(APP_ID, member, { guild, channelId: general }, 'leaderboard', [
        { name: 'metric', value: 'streaks' },
      ]),
    );
    expect(streaks).toMatch(/1\. Bob the Barista: 1/);
  });
});
