import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from './config.ts';
import { loadXBotConfig } from './x/config.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('loadBotConfig', () => {
  it('refuses a missing token by name before writing the master key', () => {
    const parent = mkdtempSync(join(tmpdir(), 'pts-bot-config-'));
    dirs.push(parent);
    const dir = join(parent, 'data');
    const required = [{ name: 'TELEGRAM_BOT_TOKEN', hint: 'create a bot with @BotFather' }];
    expect(() => loadBotConfig({ BOT_DATA_DIR: dir }, { required })).toThrow(/TELEGRAM_BOT_TOKEN is required/);
    expect(existsSync(join(dir, 'master-key'))).toBe(false);
    const config = loadBotConfig(
      { BOT_DATA_DIR: dir, TELEGRAM_BOT_TOKEN: '123456:ABCdefghijklmnopqrstuvwxyz' },
      { required },
    );
    expect(config.masterKey).toHaveLength(32);
    // Written only once the platform accepted the token (the adapter calls keepMasterKey).
    expect(existsSync(join(dir, 'master-key'))).toBe(false);
    config.keepMasterKey();
    expect(existsSync(join(dir, 'master-key'))).toBe(true);
    const again = loadBotConfig(
      { BOT_DATA_DIR: dir, TELEGRAM_BOT_TOKEN: '123456:ABCdefghijklmnopqrstuvwxyz' },
      { required },
    );
    expect(again.masterKey.equals(config.masterKey)).toBe(true);
  });

  it('gives each bot its own default data dir and health port (issue 24 §10)', () => {
    const discord = loadBotConfig({}, { bot: 'discord' });
    const telegram = loadBotConfig({}, { bot: 'telegram' });
    const x = loadXBotConfig({
      PTS_BRAND_ID: `0x${'1'.repeat(40)}`,
      PTS_BRAND_SECURITY_KEY: 'pts_sk_x',
      X_BEARER_TOKEN: 'AAAA',
      X_BOT_ADMIN_TOKEN: 'x'.repeat(24),
    });
    const dirs = [discord.BOT_DATA_DIR, telegram.BOT_DATA_DIR, x.BOT_DATA_DIR];
    const ports = [discord.HEALTH_PORT, telegram.HEALTH_PORT, x.PORT];
    expect(new Set(dirs).size).toBe(3);
    expect(new Set(ports).size).toBe(3);
    expect(ports).toEqual([8081, 8082, 8083]);
    // Nothing was written by reading the configuration.
    for (const dir of dirs) expect(existsSync(join(dir, 'master-key'))).toBe(false);
    expect(loadBotConfig({ BOT_DATA_DIR: '/tmp/x', HEALTH_PORT: '9000' }, { bot: 'telegram' })).toMatchObject({
      BOT_DATA_DIR: '/tmp/x',
      HEALTH_PORT: 9000,
    });
  });
});
