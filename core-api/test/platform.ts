import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CreatedBrand, createManualClock, type ManualClock, signRequest } from '@pts/shared';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import type { TxtResolver } from '../src/deps.ts';
import { createBrand, setRule } from '../src/modules/brands/brands.service.ts';

type RuleInput = Parameters<typeof setRule>[2];

import { type Platform, startPlatform } from '../src/startup/platform.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export interface TestPlatform extends Platform {
  clock: ManualClock;
  database: TestDatabase;
  /** Creates a brand (and optional rules) through the real service. */
  createBrand(input?: { domain?: string; name?: string; rules?: RuleInput[] }): Promise<CreatedBrand>;
  setRule(brandId: string, rule: RuleInput): Promise<void>;
  /** POSTs JSON; returns status, headers and parsed body. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** POSTs JSON signed with the brand's security key at the platform clock's time. */
  signedPost(path: string, body: unknown, securityKey: string, headers?: Record<string, string>): Promise<TestResponse>;
  get(path: string, headers?: Record<string, string>): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

/**
 * The whole platform as `npm start` builds it (real app, real minter, anvil on a free port), over a fresh
 * test database and a manual clock that starts at the real time.
 */
export async function startTestPlatform(
  env: Record<string, string> = {},
  options: { resolveTxt?: TxtResolver; database?: TestDatabase; logger?: pino.Logger } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pts-test-'));
  const config = loadConfig({
    PORT: '0',
    PTS_DATA_DIR: dataDir,
    PTS_ANVIL_PORT: '0',
    LOG_LEVEL: 'silent',
    PTS_SEED_DEMO: 'false',
    PTS_RECEIPT_POLL_MS: '50',
    PTS_REWARD_PROCESSOR_CRON: '0 0 1 1 *',
    ...env,
  });
  const clock = createManualClock(new Date());
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  let platform: Platform;
  try {
    platform = await startPlatform(config, {
      database,
      clock,
      logger: options.logger ?? pino({ level: process.env.PTS_TEST_LOG_LEVEL ?? 'silent' }),
      ...(options.resolveTxt ? { resolveTxt: options.resolveTxt } : {}),
    });
  } catch (error) {
    if (ownsDatabase) await database.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const serviceDeps = () => ({
    db: platform.deps.db,
    secrets: platform.deps.secrets,
    clock,
    changes: platform.changes,
  });
  const request = async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${platform.url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
  return {
    ...platform,
    clock,
    database,
    async createBrand(input = {}) {
      const brand = await createBrand(serviceDeps(), {
        name: input.name ?? 'Test Brand',
        domain: input.domain ?? 'shop.example.com',
      });
      for (const rule of input.rules ?? []) await setRule(serviceDeps(), brand.brandId, rule);
      return brand;
    },
    async setRule(brandId, rule) {
      await setRule(serviceDeps(), brandId, rule);
    },
    post: (path, body, headers) => request('POST', path, JSON.stringify(body), headers),
    signedPost: (path, body, securityKey, headers = {}) => {
      const raw = JSON.stringify(body);
      const signature = signRequest({
        securityKey,
        method: 'POST',
        pathWithQuery: path,
        body: raw,
        timestamp: Math.floor(clock.now().getTime() / 1000),
      });
      return request('POST', path, raw, { ...signature, ...headers });
    },
    get: (path, headers) => request('GET', path, undefined, headers),
    async stop() {
      await platform.stop();
      if (ownsDatabase) await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
