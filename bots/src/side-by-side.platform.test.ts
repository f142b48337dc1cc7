import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../core-api/test/platform.ts';
import {
  type FakeDiscord,
  type FakeGuild,
  type FakeUser,
  PERMISSION,
  slashCommandInteraction,
  snowflake,
  startFakeDiscord,
} from '../test/fakes/discord-server.ts';
import { type FakeBotApi, startFakeBotApi } from '../test/fakes/telegram-bot-api.ts';
import { type FakeXApi, startFakeXApi } from '../test/fakes/x-api.ts';
import { BOT_DEFAULTS, loadBotConfig } from './config.ts';
import { type RunningDiscordBot, startDiscordBot } from './discord/app.ts';
import { loadDiscordConfig } from './discord/config.ts';
import { type RunningTelegramBot, startTelegramBot } from './telegram/app.ts';
import { type RunningXBot, startXBot } from './x/app.ts';
import { loadXBotConfig } from './x/config.ts';

// Discord, Telegram and X bots on one machine with the documented defaults (ports 8081, 8082, 8083 and each
// bot's own data dir, here under a temporary root): they all serve /health, and a Telegram /setup does not
// make the Discord server read as "not linked" after a Discord restart (issue 24 §10).

const DISCORD_TOKEN = `MTAx.${'y'.repeat(32)}`;
const APP_ID = snowflake();
const guild: FakeGuild = {
  id: snowflake(),
  name: 'Side Guild',
  ownerId: snowflake(),
  channels: [{ id: snowflake(), name: 'general' }],
};
const admin: FakeUser = { id: snowflake(), username: 'ada', global_name: 'Ada' };
const GROUP = -100777;
const TG_ADMIN = { id: 7001, is_bot: false, first_name: 'Tia', username: 'tia' };

let platform: TestPlatform;
let brand: CreatedBrand;
let discordFake: FakeDiscord;
let telegramFake: FakeBotApi;
let xFake: FakeXApi;
let root: string;
let discord: RunningDiscordBot | undefined;
let telegram: RunningTelegramBot | undefined;
let x: RunningXBot | undefined;
const silent = pino({ level: 'silent' });

const dirOf = (bot: keyof typeof BOT_DEFAULTS) => join(root, BOT_DEFAULTS[bot].dataDir);

function discordBot() {
  return startDiscordBot(
    loadDiscordConfig({
      DISCORD_BOT_TOKEN: DISCORD_TOKEN,
      DISCORD_APPLICATION_ID: APP_ID,
      DISCORD_API_URL: discordFake.apiUrl,
      PTS_CORE_API_URL: platform.url,
      BOT_DATA_DIR: dirOf('discord'),
    }),
    { logger: silent, clock: platform.clock },
  );
}

async function discordSays(payload: { id: string; token: string }): Promise<string> {
  expect(discordFake.dispatch('INTERACTION_CREATE', payload)).toBe(1);
  const call = await discordFake.waitForCall(
    (c) => c.method === 'POST' && c.path === `/api/v10/interactions/${payload.id}/${payload.token}/callback`,
  );
  const body = call.body as { data?: { content?: string; embeds?: { description?: string }[] } };
  return `${body.data?.embeds?.[0]?.description ?? ''}${body.data?.content ?? ''}`;
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'Side Brand' });
  root = mkdtempSync(join(tmpdir(), 'pts-side-'));
  discordFake = await startFakeDiscord({ token: DISCORD_TOKEN, applicationId: APP_ID, guilds: [guild] });
  telegramFake = await startFakeBotApi();
  telegramFake.setMember(GROUP, TG_ADMIN.id, 'creator');
  xFake = await startFakeXApi({ bearerToken: 'AAAA-side' });

  // Only the data dir is placed under the temporary root; ports are the defaults.
  discord = await discordBot();
  telegram = await startTelegramBot(
    loadBotConfig(
      {
        TELEGRAM_BOT_TOKEN: telegramFake.token,
        TELEGRAM_API_ROOT: telegramFake.apiRoot,
        PTS_CORE_API_URL: platform.url,
        BOT_DATA_DIR: dirOf('telegram'),
      },
      { bot: 'telegram' },
    ),
    { logger: silent, clock: platform.clock },
  );
  x = await startXBot(
    loadXBotConfig({
      PTS_CORE_API_URL: platform.url,
      PTS_BRAND_ID: brand.brandId,
      PTS_BRAND_SECURITY_KEY: brand.securityKey,
      X_BEARER_TOKEN: 'AAAA-side',
      X_API_ROOT: xFake.url,
      X_POLL_CRON: '0 0 1 1 *',
      X_BOT_ADMIN_TOKEN: 'side-by-side-admin-token-0123',
      BOT_DATA_DIR: dirOf('x'),
      LOG_LEVEL: 'silent',
    }),
    { logger: silent, clock: platform.clock },
  );
}, 120_000);

afterAll(async () => {
  await discord?.stop();
  await telegram?.stop();
  await x?.stop();
  await discordFake?.close();
  await telegramFake?.close();
  await xFake?.close();
  await platform?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('Discord, Telegram and X bots side by side with the documented defaults', () => {
  it('each serves /health on its own default port', async () => {
    expect(discord!.healthUrl).toBe('http://127.0.0.1:8081');
    expect(telegram!.url).toBe('http://127.0.0.1:8082');
    expect(x!.url).toBe('http://127.0.0.1:8083');
    expect(await (await fetch('http://127.0.0.1:8081/health')).json()).toMatchObject({ platform: 'discord' });
    expect(await (await fetch('http://127.0.0.1:8082/health')).json()).toMatchObject({ platform: 'telegram' });
    expect(await (await fetch('http://127.0.0.1:8083/health')).json()).toMatchObject({ service: 'pts-x-bot' });
  });

  it('a Discord /setup survives a Telegram /setup and a Discord restart', async () => {
    const setup = await discordSays(
      slashCommandInteraction(
        APP_ID,
        admin,
        { guild, channelId: guild.channels[0]!.id, permissions: PERMISSION.ManageGuild | PERMISSION.SendMessages },
        'setup',
        [
          { name: 'brand_id', value: brand.brandId },
          { name: 'security_key', value: brand.securityKey },
        ],
      ),
    );
    expect(setup).toMatch(/linked to brand/);

    const since = telegramFake.calls.length;
    telegramFake.pushUpdate({
      message: {
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: GROUP, type: 'supergroup', title: 'Side Group' },
        from: TG_ADMIN,
        text: `/setup ${brand.brandId} ${brand.securityKey}`,
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    });
    const answer = await telegramFake.waitForCall('sendMessage', (p) => Number(p.chat_id) === GROUP, since);
    expect(String(answer.params.text)).toMatch(/linked to brand/);

    await discord!.stop();
    discord = await discordBot();
    const daily = await discordSays(
      slashCommandInteraction(APP_ID, admin, { guild, channelId: guild.channels[0]!.id, permissions: 0n }, 'daily'),
    );
    expect(daily).not.toMatch(/not linked/);
    expect(daily).toMatch(/Checked in/);
    for (const bot of ['discord', 'telegram'] as const) {
      expect(existsSync(join(dirOf(bot), 'groups.json')), bot).toBe(true);
      expect(existsSync(join(dirOf(bot), 'master-key')), bot).toBe(true);
    }
  });
});
