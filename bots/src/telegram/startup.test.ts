import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type FakeBotApi, startFakeBotApi } from '../../test/fakes/telegram-bot-api.ts';
import { memoryGroupStore } from '../../test/helpers.ts';
import { loadBotConfig } from '../config.ts';
import { startTelegramBot } from './app.ts';

// Starting the Telegram bot as an operator would: a refused token, an unreachable Bot API, a taken port.

const dirs: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'pts-tg-start-')), 'data');
  dirs.push(dir);
  return dir;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Log lines as objects, to read what the bot said. */
function capturingLogger() {
  const lines: { msg: string; [key: string]: unknown }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('telegram bot start-up', () => {
  it('a token Telegram refuses stops the start with one sentence and leaves no master-key file', async () => {
    const api: FakeBotApi = await startFakeBotApi();
    cleanups.push(() => api.close());
    const dir = dataDir();
    const start = startTelegramBot(
      loadBotConfig(
        {
          TELEGRAM_BOT_TOKEN: '999999:WRONG-token-abcdefghijklmnop',
          TELEGRAM_API_ROOT: api.apiRoot,
          BOT_DATA_DIR: dir,
          HEALTH_PORT: '0',
        },
        { bot: 'telegram' },
      ),
      { groups: memoryGroupStore(), logger: pino({ level: 'silent' }) },
    );
    await expect(start).rejects.toThrow(/Telegram refused TELEGRAM_BOT_TOKEN.*@BotFather/);
    expect(existsSync(join(dir, 'master-key'))).toBe(false);
  });

  it('an unreachable Bot API: the bot logs what it waits for and /health reports it (503 waiting)', async () => {
    // A Bot API that accepts connections and never answers (a firewall dropping replies).
    const sockets: Socket[] = [];
    const blackhole = createTcpServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          blackhole.close(() => resolve());
        }),
    );
    const apiRoot = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}`;
    const port = await freePort();
    const { logger, lines } = capturingLogger();
    const abort = new AbortController();
    const dir = dataDir();
    const start = startTelegramBot(
      loadBotConfig(
        {
          TELEGRAM_BOT_TOKEN: '123456:TEST-token-abcdefghijklmnop',
          TELEGRAM_API_ROOT: apiRoot,
          BOT_DATA_DIR: dir,
          HEALTH_PORT: String(port),
        },
        { bot: 'telegram' },
      ),
      { groups: memoryGroupStore(), logger, signal: abort.signal, connectAttemptMs: 300 },
    );
    const outcome = start.then(
      () => 'started',
      (error: Error) => error.message,
    );
    await vi.waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        expect(res.status).toBe(503);
        const body = (await res.json()) as { status: string; waitingFor?: string };
        expect(body.status).toBe('waiting');
        expect(body.waitingFor).toContain(`Telegram Bot API at ${apiRoot}`);
      },
      { timeout: 5000, interval: 100 },
    );
    await vi.waitFor(() => expect(lines.some((l) => /waiting for the Telegram Bot API/.test(l.msg))).toBe(true), {
      timeout: 5000,
      interval: 100,
    });
    expect(lines[0]?.msg).toMatch(/connecting to the Telegram Bot API/);
    abort.abort();
    expect(await outcome).toMatch(/gave up waiting for the Telegram Bot API/);
    expect(existsSync(join(dir, 'master-key'))).toBe(false);
  });

  it('a taken health port is one sentence naming HEALTH_PORT, not a stack trace', async () => {
    const api: FakeBotApi = await startFakeBotApi();
    cleanups.push(() => api.close());
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const start = startTelegramBot(
      loadBotConfig(
        {
          TELEGRAM_BOT_TOKEN: api.token,
          TELEGRAM_API_ROOT: api.apiRoot,
          BOT_DATA_DIR: dataDir(),
          HEALTH_PORT: String(port),
        },
        { bot: 'telegram' },
      ),
      { groups: memoryGroupStore(), logger: pino({ level: 'silent' }) },
    );
    await expect(start).rejects.toThrow(
      `Port ${port} is already in use (another bot or program listens there): set HEALTH_PORT to a free port`,
    );
  });
});
