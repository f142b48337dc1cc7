import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadXBotConfig } from './config.ts';

const complete = {
  PTS_BRAND_ID: '0x1111111111111111111111111111111111111111',
  PTS_BRAND_SECURITY_KEY: 'pts_sk_test',
  X_BEARER_TOKEN: 'AAAA-bearer',
  X_BOT_ADMIN_TOKEN: 'admin-token-0123456789',
};
const scratch = mkdtempSync(join(tmpdir(), 'pts-x-config-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('X bot configuration', () => {
  it('names every missing variable and what to put there', () => {
    expect(() => loadXBotConfig({})).toThrow(
      /PTS_BRAND_ID is required.*PTS_BRAND_SECURITY_KEY is required.*X_BEARER_TOKEN is required.*X_BOT_ADMIN_TOKEN is required/,
    );
  });

  it.each([
    ['X_POLL_CRON', 'every now and then', /X_POLL_CRON must be a cron expression/],
    ['X_API_TIER', 'platinum', /X_API_TIER must be one of free, basic, pro, enterprise/],
    ['PTS_BRAND_ID', 'acme', /PTS_BRAND_ID must be a Brand ID/],
    ['X_BOT_ADMIN_TOKEN', 'short', /X_BOT_ADMIN_TOKEN must be at least 16 characters/],
    ['X_API_ROOT', 'not a url', /X_API_ROOT must be an http\(s\) URL/],
  ])('refuses %s=%j', (name, value, message) => {
    expect(() => loadXBotConfig({ ...complete, [name]: value })).toThrow(message);
  });

  it('defaults to the real API, every 15 minutes, basic tier', () => {
    expect(loadXBotConfig(complete)).toMatchObject({
      X_API_ROOT: 'https://api.x.com',
      X_POLL_CRON: '*/15 * * * *',
      X_API_TIER: 'basic',
      PORT: 8083,
    });
  });

  it('npm run bot:x without X_BEARER_TOKEN: names it, exits 1 and writes nothing', () => {
    const dataDir = join(scratch, 'never-created');
    const { X_BEARER_TOKEN: _omitted, ...env } = complete;
    const root = resolve(import.meta.dirname, '../../..');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bots/src/x/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, ...env, BOT_DATA_DIR: dataDir, PORT: '0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('X_BEARER_TOKEN is required');
    expect(existsSync(dataDir)).toBe(false);
  });
});
