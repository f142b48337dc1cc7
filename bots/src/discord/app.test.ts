import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, snowflake, startFakeDiscord } from '../../test/fakes/discord-server.ts';
import { startDiscordBot } from './app.ts';
import { createDiscordClient } from './client.ts';
import { loadDiscordConfig, parseDiscordEnv } from './config.ts';
import { startHealthServer } from './health.ts';

const TOKEN = `MTAx.${randomBytes(24).toString('base64url')}`;
const APP_ID = snowflake();

describe('startDiscordBot (npm run bot:discord)', () => {
  let fake: FakeDiscord;
  let dataDir: string;

  beforeAll(async () => {
    fake = await startFakeDiscord({
      token: TOKEN,
      applicationId: APP_ID,
      guilds: [{ id: snowflake(), name: 'G', ownerId: snowflake(), channels: [{ id: snowflake(), name: 'general' }] }],
    });
    dataDir = mkdtempSync(join(tmpdir(), 'pts-discord-'));
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const env = (overrides: Record<string, string> = {}) => ({
    DISCORD_BOT_TOKEN: TOKEN,
    DISCORD_APPLICATION_ID: APP_ID,
    DISCORD_API_URL: fake.apiUrl,
    BOT_DATA_DIR: dataDir,
    HEALTH_PORT: '0',
    LOG_LEVEL: 'silent',
    ...overrides,
  });

  it('connects, reports the gateway on /health, and shuts down gracefully', async () => {
    const running = await startDiscordBot(loadDiscordConfig(env()), { logger: pino({ level: 'silent' }) });
    const health = await fetch(`${running.healthUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', platform: 'discord', gateway: 'ready', guilds: 1 });
    expect((await fetch(`${running.healthUrl}/nope`)).status).toBe(404);
    expect(fake.sessionCount()).toBe(1);

    await running.stop();
    await expect.poll(() => fake.sessionCount()).toBe(0);
    await expect(fetch(`${running.healthUrl}/health`)).rejects.toThrow();
  });

  it('reports 503 with the gateway state while not connected', async () => {
    const client = createDiscordClient({ apiUrl: fake.apiUrl });
    const health = await startHealthServer(client, 0, '127.0.0.1');
    try {
      const response = await fetch(`http://127.0.0.1:${health.port}/health`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: 'unavailable', platform: 'discord', gateway: 'idle' });
    } finally {
      await health.close();
      await client.destroy();
    }
  });

  it('fails to start with a token Discord refuses, leaving nothing listening', async () => {
    const wrong = `MTAy.${randomBytes(24).toString('base64url')}`;
    await expect(
      startDiscordBot(loadDiscordConfig(env({ DISCORD_BOT_TOKEN: wrong, HEALTH_PORT: '0' })), {
        logger: pino({ level: 'silent' }),
      }),
    ).rejects.toThrow();
    expect(fake.calls.some((c) => c.authorization === `Bot ${wrong}`)).toBe(true);
  });

  it('names every missing or malformed Discord variable', () => {
    expect(() => parseDiscordEnv({})).toThrow(/DISCORD_BOT_TOKEN is required.*DISCORD_APPLICATION_ID is required/);
    expect(() =>
      parseDiscordEnv({ DISCORD_BOT_TOKEN: TOKEN, DISCORD_APPLICATION_ID: 'abc', DISCORD_API_URL: 'ftp://x' }),
    ).toThrow(/DISCORD_APPLICATION_ID must be a Discord id.*DISCORD_API_URL must be an http\(s\) URL/);
    expect(parseDiscordEnv({ DISCORD_BOT_TOKEN: TOKEN, DISCORD_APPLICATION_ID: APP_ID }).DISCORD_API_URL).toBe(
      'https://discord.com/api',
    );
  });
});
