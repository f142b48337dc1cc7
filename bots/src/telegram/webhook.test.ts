import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBotApi, startFakeBotApi } from '../../test/fakes/telegram-bot-api.ts';
import { memoryGroupStore } from '../../test/helpers.ts';
import { loadBotConfig } from '../config.ts';
import { type RunningTelegramBot, startTelegramBot } from './app.ts';

// Webhook mode: the bot registers its webhook with a secret token and only accepts updates that carry it
// in X-Telegram-Bot-Api-Secret-Token.

const SECRET = 'webhook-secret-0123456789';
let api: FakeBotApi;
let bot: RunningTelegramBot;
let dataDir: string;

const update = (text: string) => ({
  update_id: 1,
  message: {
    message_id: 5,
    date: 0,
    chat: { id: 42, type: 'private', first_name: 'Al' },
    from: { id: 42, is_bot: false, first_name: 'Al' },
    text,
  },
});

beforeAll(async () => {
  api = await startFakeBotApi();
  dataDir = mkdtempSync(join(tmpdir(), 'pts-bot-'));
  bot = await startTelegramBot(
    loadBotConfig({
      TELEGRAM_BOT_TOKEN: api.token,
      TELEGRAM_API_ROOT: api.apiRoot,
      TELEGRAM_MODE: 'webhook',
      TELEGRAM_WEBHOOK_URL: 'https://bots.example.com/tg/hook',
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      PTS_CORE_API_URL: 'http://127.0.0.1:9',
      BOT_DATA_DIR: dataDir,
      HEALTH_PORT: '0',
    }),
    { groups: memoryGroupStore(), logger: pino({ level: 'silent' }) },
  );
});

afterAll(async () => {
  await bot?.stop();
  await api?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('telegram webhook mode', () => {
  it('registers the webhook with its secret token', () => {
    expect(api.calls.find((c) => c.method === 'setWebhook')?.params).toMatchObject({
      url: 'https://bots.example.com/tg/hook',
      secret_token: SECRET,
    });
  });

  it('refuses an update without the right secret header with 401', async () => {
    const attempts: Record<string, string>[] = [{}, { 'x-telegram-bot-api-secret-token': 'wrong-secret-0123456789' }];
    for (const headers of attempts) {
      const res = await fetch(`${bot.url}/tg/hook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(update('/help')),
      });
      expect(res.status).toBe(401);
    }
    expect(api.calls.some((c) => c.method === 'sendMessage')).toBe(false);
  });

  it('handles an update with the right secret, and answers /health', async () => {
    const res = await fetch(`${bot.url}/tg/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
      body: JSON.stringify(update('/help')),
    });
    expect(res.status).toBe(200);
    const sent = await api.waitForCall('sendMessage');
    expect(sent.params.text).toMatch(/pts commands/);
    expect((await fetch(`${bot.url}/health`)).status).toBe(200);
  });

  it('answers malformed JSON with 400, and handles an update delivered twice once', async () => {
    const post = (body: string) =>
      fetch(`${bot.url}/tg/hook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
        body,
      });
    expect((await post('{"update_id": 7, "message": ')).status).toBe(400);
    // Valid JSON that is not an update is the sender's error (4xx), never a 500.
    for (const body of ['null', '{"update_id":"7"}', '[]', '"text"', '{"update_id":1.5}', '{}']) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(await res.text()).toContain('not a Telegram update');
    }
    const since = api.calls.length;
    const again = { ...update('/help'), update_id: 99 };
    expect((await post(JSON.stringify(again))).status).toBe(200);
    expect((await post(JSON.stringify(again))).status).toBe(200);
    await api.waitForCall('sendMessage', () => true, since);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(api.calls.slice(since).filter((c) => c.method === 'sendMessage')).toHaveLength(1);
  });
});
