import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBotConfig, parseBotEnv } from '../config.ts';
import { createFileGroupStore } from './group-store.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pts-bot-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const credentials = { brandId: '0x2222222222222222222222222222222222222222', securityKey: 'pts_sk_secret_value_1234' };

describe('file group store', () => {
  it('keeps credentials encrypted at rest and reads them back in a new instance', async () => {
    const dir = tempDir();
    const masterKey = randomBytes(32);
    const store = createFileGroupStore({ dir, masterKey });
    expect(await store.get('telegram', '-1')).toBeUndefined();
    await store.set('telegram', '-1', credentials);
    const raw = readFileSync(join(dir, 'groups.json'), 'utf8');
    expect(raw).not.toContain('pts_sk_');
    expect(raw).not.toContain(credentials.brandId);
    expect(await createFileGroupStore({ dir, masterKey }).get('telegram', '-1')).toEqual(credentials);
    expect(await createFileGroupStore({ dir, masterKey }).get('discord', '-1')).toBeUndefined();
    await expect(createFileGroupStore({ dir, masterKey: randomBytes(32) }).get('telegram', '-1')).rejects.toThrow(
      /BOT_MASTER_KEY/,
    );
    await store.delete('telegram', '-1');
    expect(await createFileGroupStore({ dir, masterKey }).get('telegram', '-1')).toBeUndefined();
  });

  it('serializes 20 concurrent writes without losing one, leaving no temporary files', async () => {
    const dir = tempDir();
    const masterKey = randomBytes(32);
    const store = createFileGroupStore({ dir, masterKey });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.set('telegram', `-${i}`, credentials)));
    const fresh = createFileGroupStore({ dir, masterKey });
    for (let i = 0; i < 20; i++) expect(await fresh.get('telegram', `-${i}`)).toEqual(credentials);
    expect(readdirSync(dir)).toEqual(['groups.json']);
  });
});

describe('bot configuration', () => {
  it('generates the master key into the data dir once, and prefers BOT_MASTER_KEY', () => {
    const dir = tempDir();
    const first = loadBotConfig({ BOT_DATA_DIR: dir });
    expect(first.masterKey).toHaveLength(32);
    first.keepMasterKey(); // what an adapter does once the platform accepted its token
    expect(loadBotConfig({ BOT_DATA_DIR: dir }).masterKey.equals(first.masterKey)).toBe(true);
    const hex = 'ab'.repeat(32);
    expect(loadBotConfig({ BOT_DATA_DIR: dir, BOT_MASTER_KEY: hex }).masterKey.toString('hex')).toBe(hex);
    expect(first).toMatchObject({ TELEGRAM_MODE: 'polling', PTS_SERVICE_DOMAIN: 'pts.local', HEALTH_PORT: 8081 });
  });

  it('names every wrong variable', () => {
    expect(() => parseBotEnv({ BOT_MASTER_KEY: 'short', TELEGRAM_MODE: 'webhook' })).toThrow(
      /BOT_MASTER_KEY must be 32 bytes.*TELEGRAM_WEBHOOK_URL is required.*TELEGRAM_WEBHOOK_SECRET is required/,
    );
    expect(() => parseBotEnv({ TELEGRAM_BOT_TOKEN: 'nope' })).toThrow(
      /TELEGRAM_BOT_TOKEN must be a token from @BotFather/,
    );
  });
});
