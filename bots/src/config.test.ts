import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from './config.ts';

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
    expect(existsSync(join(dir, 'master-key'))).toBe(true);
  });
});
