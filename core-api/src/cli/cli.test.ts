import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createManualClock } from '@pts/shared';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { createErrorHandler } from '../http/errors.ts';
import { routerFrom } from '../http/route-table.ts';
import { createBrandAdminService } from '../modules/brands/brand-admin.service.ts';
import { brandAdminRoutes } from '../modules/brands/brands.routes.ts';
import { referralAdminRoutes } from '../modules/referrals/referrals.routes.ts';
import { readReferralProgram, referralStats, setReferralProgram } from '../modules/referrals/referrals.service.ts';
import { simulatorAdminRoutes } from '../modules/simulator/simulator.routes.ts';
import { createSimulatorService } from '../modules/simulator/simulator.service.ts';
import { tierAdminRoutes } from '../modules/tiers/tiers.routes.ts';
import { readTierTable, setTierTable } from '../modules/tiers/tiers.service.ts';
import { createSecretBox } from '../security/secret-box.ts';
import { runCli } from './run-cli.ts';

const ADMIN_TOKEN = 'cli-test-admin-token-0123456789';

let database: TestDatabase;
let server: Server;
let baseUrl: string;
let requests = 0;
const tempDirs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const app = express();
  app.use((_req, _res, next) => {
    requests += 1;
    next();
  });
  app.use(express.json());
  app.use(
    '/admin',
    routerFrom(
      brandAdminRoutes({
        brands: createBrandAdminService({
          db: database.db,
          secrets: createSecretBox(randomBytes(32).toString('hex')),
          clock: createManualClock('2026-03-01T12:00:00Z'),
        }),
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  const tierClock = createManualClock('2026-03-01T12:00:00Z');
  app.use(
    '/admin',
    routerFrom(
      tierAdminRoutes({
        tiers: {
          table: (brandId) => readTierTable(database.db, brandId),
          setTable: (brandId, input, actor) =>
            setTierTable({ db: database.db, clock: tierClock }, brandId, input, actor),
        },
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  app.use(
    '/admin',
    routerFrom(
      referralAdminRoutes({
        referrals: {
          program: (brandId) => readReferralProgram(database.db, brandId),
          setProgram: (brandId, input, actor) =>
            setReferralProgram({ db: database.db, clock: tierClock }, brandId, input, actor),
          stats: (brandId) => referralStats(database.db, brandId),
        },
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  app.use(
    '/admin',
    routerFrom(
      simulatorAdminRoutes({
        simulator: createSimulatorService({
          db: database.db,
          clock: tierClock,
          settings: { duplicateWindowSeconds: 60 },
        }),
        adminToken: ADMIN_TOKEN,
      }),
    ),
  );
  app.use(createErrorHandler(pino({ level: 'silent' })));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await database?.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function pts(argv: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: baseUrl, PTS_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** Runs a `--json` command that must succeed; its stdout must be exactly one JSON object. */
// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary fields of the printed object
async function ptsJson(argv: string[]): Promise<any> {
  const run = await pts([...argv, '--json']);
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
  const value = JSON.parse(run.stdout);
  expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  return value;
}

async function createBrand(): Promise<{ brandId: string; securityKey: string; apiKey: string }> {
  return ptsJson(['brand', 'create', '--name', 'Acme', '--domain', 'acme.example']);
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pts-cli-'));
  tempDirs.push(dir);
  return dir;
}

describe('pts help and usage errors', () => {
  it('prints usage for help and --help with exit 0', async () => {
    for (const argv of [['help'], ['--help']]) {
      const run = await pts(argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('pts brand create --name NAME --domain DOMAIN');
      expect(run.stdout).toContain('pts rule set --brand ID --event-type TYPE --reward N');
    }
    const command = await pts(['rule', 'set', '--help']);
    expect(command).toMatchObject({ code: 0, stderr: '' });
    expect(command.stdout).toMatch(/^usage: pts rule set /);
  });

  it('exits 2 with usage on stderr for a missing, unknown or incomplete command', async () => {
    for (const argv of [[], ['launch'], ['brand'], ['brand', 'delete']]) {
      const run = await pts(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/usage/i);
    }
  });

  it('exits 2 naming the flag for unknown flags, stray arguments and missing required flags', async () => {
    const cases: [string[], string][] = [
      [['brand', 'create', '--name', 'A', '--domain', 'a.example', '--colour', 'red'], "Unknown option '--colour'"],
      [['brand', 'create', '--name', 'A', '--domain', 'a.example', 'extra'], "Unexpected argument 'extra'"],
      [['brand', 'create', '--name', 'A'], '--domain is required'],
      [['brand', 'set', '--brand', '0x0000000000000000000000000000000000000001'], 'at least one of'],
      [['rule', 'list'], '--brand is required'],
    ];
    for (const [argv, message] of cases) {
      const run = await pts(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
      expect(run.stderr).toContain('usage: pts ');
      expect(run.stdout).toBe('');
    }
  });

  it('validates numbers and choices locally, without calling the server', async () => {
    const before = requests;
    const brand = '0x0000000000000000000000000000000000000001';
    const cases: [string[], string][] = [
      [['--reward', '-3'], '--reward must be a whole number ≥ 0, got "-3"'],
      [['--reward', '5', '--max-claims', '-2'], '--max-claims must be a whole number ≥ 1 or "unlimited"'],
      [['--reward=-3'], '--reward must be a whole number ≥ 0, got "-3"'],
      [['--reward', '1.5'], '--reward must be a whole number ≥ 0'],
      [['--reward', 'ten'], '--reward must be a whole number ≥ 0'],
      [['--reward', '5', '--cooldown-hours', 'x'], '--cooldown-hours must be a whole number ≥ 0'],
      [['--reward', '5', '--max-claims', '0'], '--max-claims must be a whole number ≥ 1 or "unlimited"'],
      [['--reward', '5', '--detection', 'psychic'], '--detection must be one of manual, url_pattern'],
      [[], '--reward is required'],
    ];
    for (const [flags, message] of cases) {
      const run = await pts(['rule', 'set', '--brand', brand, '--event-type', 'purchase', ...flags]);
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
    const automation = await pts(['brand', 'set', '--brand', brand, '--automation', 'maybe']);
    expect(automation.code).toBe(2);
    expect(automation.stderr).toContain('--automation must be on or off');
    expect(requests).toBe(before);
  });
});

describe('pts brand', () => {
  it('brand create --json prints exactly one JSON object with the id and both keys', async () => {
    const brand = await createBrand();
    expect(brand).toMatchObject({
      brandId: expect.stringMatching(/^0x[0-9a-f]{40}$/),
      securityKey: expect.stringMatching(/^pts_sk_/),
      apiKey: expect.stringMatching(/^pts_ak_/),
      name: 'Acme',
      domain: 'acme.example',
      automation: true,
    });
  });

  it('brand create without --json prints a summary with the keys and a warning to keep them', async () => {
    const address = `0x${randomBytes(20).toString('hex')}`;
    const run = await pts(['brand', 'create', '--name', 'Readable', '--domain', 'r.example', '--address', address]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`brand id      ${address}`);
    expect(run.stdout).toMatch(/security key {2}pts_sk_/);
    expect(run.stdout).toContain('shown only once');
  });

  it('brand set changes automation, name and domain', async () => {
    const { brandId } = await createBrand();
    const brand = await ptsJson(['brand', 'set', '--brand', brandId, '--automation', 'off', '--name', 'Renamed']);
    expect(brand).toMatchObject({ brandId, automation: false, name: 'Renamed', domain: 'acme.example' });
    const domain = await ptsJson(['brand', 'set', '--brand', brandId, '--domain', 'shop.acme.example']);
    expect(domain).toMatchObject({ automation: false, domain: 'shop.acme.example' });
  });

  it('brand list prints a table, or one JSON object with --json', async () => {
    const { brandId } = await createBrand();
    const listed = await ptsJson(['brand', 'list']);
    expect(listed.brands.map((brand: { brandId: string }) => brand.brandId)).toContain(brandId);
    const table = await pts(['brand', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^BRAND ID\s+NAME\s+DOMAIN\s+AUTOMATION/);
    expect(table.stdout).toContain(brandId);
  });
});

describe('pts rule', () => {
  it("rule set takes the spec's -1 and 999999 as unlimited per-user claims", async () => {
    const { brandId } = await createBrand();
    const base = ['rule', 'set', '--brand', brandId, '--event-type', 'referral', '--reward', '500'];
    const minusOne = await ptsJson([...base, '--max-claims', '-1']);
    expect(minusOne).toMatchObject({ eventType: 'referral', maxClaims: -1 });
    const big = await ptsJson([...base, '--max-claims', '999999']);
    expect(big).toMatchObject({ eventType: 'referral', maxClaims: 999999 });
    const readable = await pts([...base, '--max-claims', '-1']);
    expect(readable.code).toBe(0);
    expect(readable.stdout).toContain('max claims    unlimited per user');
  });

  it('rule set --json returns the rule with its eventId, kept when the rule is set again', async () => {
    const { brandId } = await createBrand();
    const rule = await ptsJson([
      'rule',
      'set',
      '--brand',
      brandId,
      '--event-type',
      'purchase',
      '--reward',
      '5',
      '--cooldown-hours',
      '0',
      '--max-claims',
      'unlimited',
      '--max-total',
      '10',
      '--channels',
      'general, vip',
      '--detection',
      'sdk_auto',
      '--inactive',
    ]);
    expect(rule).toMatchObject({
      eventId: expect.stringMatching(/^custom_[0-9a-f]{16}$/), // a custom event type (docs/compatibility.md)
      eventType: 'purchase',
      rewardAmount: 5,
      cooldownHours: 0,
      maxClaims: -1,
      maxTotal: 10,
      detectionMethod: 'sdk_auto',
      detectionConfig: { channels: ['general', 'vip'] },
      active: false,
    });
    const again = await ptsJson(['rule', 'set', '--brand', brandId, '--event-type', 'purchase', '--reward', '7']);
    expect(again).toMatchObject({
      eventId: rule.eventId,
      rewardAmount: 7,
      cooldownHours: 24,
      maxClaims: 1,
      active: true,
    });
    const custom = await ptsJson([
      'rule',
      'set',
      '--brand',
      brandId,
      '--event-type',
      `custom_${brandId.slice(2, 10)}`,
      '--reward',
      '1',
    ]);
    expect(custom).toMatchObject({ eventId: `custom_${brandId.slice(2, 10)}`, isCustom: true });
  });

  it('rule set --url-patterns and --success-selectors configure what the browser SDK detects', async () => {
    const { brandId } = await ptsJson(['brand', 'create', '--name', 'Sdk', '--domain', 'sdk.example']);
    const rule = await ptsJson([
      'rule',
      'set',
      '--brand',
      brandId,
      '--event-type',
      'newsletter_subscribe',
      '--reward',
      '25',
      '--detection',
      'form_auto',
      '--url-patterns',
      '/signup, /newsletter/*',
      '--success-selectors',
      '.signup-success,#thanks',
    ]);
    expect(rule).toMatchObject({
      detectionMethod: 'form_auto',
      detectionConfig: { urlPatterns: ['/signup', '/newsletter/*'], successSelectors: ['.signup-success', '#thanks'] },
    });
    const { rules } = await ptsJson(['rule', 'list', '--brand', brandId]);
    expect(rules).toContainEqual(
      expect.objectContaining({ eventId: rule.eventId, detectionConfig: rule.detectionConfig }),
    );
    const text = await pts([
      'rule',
      'set',
      '--brand',
      brandId,
      '--event-type',
      'thanks_visit',
      '--reward',
      '5',
      '--detection',
      'url_pattern',
      '--url-patterns',
      '/thank-you',
    ]);
    expect(text.stdout).toContain('url patterns  /thank-you');
  });

  it('rule list shows the default rules as a table, or one JSON object with --json', async () => {
    const { brandId } = await createBrand();
    const { rules } = await ptsJson(['rule', 'list', '--brand', brandId]);
    expect(rules).toHaveLength(6);
    const table = await pts(['rule', 'list', '--brand', brandId]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^EVENT TYPE\s+REWARD/);
    expect(table.stdout).toMatch(/account_creation\s+100\s+24\s+1\s/);
  });
});

describe('pts rule archive and restore', () => {
  it('archives a rule (the list says so), restores it paused, and exits 1 with the reason on a repeat', async () => {
    const { brandId } = await createBrand();
    const archived = await ptsJson(['rule', 'archive', '--brand', brandId, '--event-type', 'account_creation']);
    expect(archived).toMatchObject({ eventType: 'account_creation', active: false, archivedAt: expect.any(String) });
    const table = await pts(['rule', 'list', '--brand', brandId]);
    expect(table.stdout).toMatch(/account_creation\s.*\sarchived\s/);
    const again = await pts(['rule', 'archive', '--brand', brandId, '--event-type', 'account_creation']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already archived \[CONFLICT\]/);
    const restored = await pts(['rule', 'restore', '--brand', brandId, '--event-type', 'account_creation']);
    expect(restored, restored.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(restored.stdout).toMatch(/Restored rule account_creation for 0x[0-9a-f]{40}: it is paused until set active/);
    const { rules } = await ptsJson(['rule', 'list', '--brand', brandId]);
    expect(rules.find((r: { eventType: string }) => r.eventType === 'account_creation')).not.toHaveProperty(
      'archivedAt',
    );
  });

  it('exits 2 naming a missing flag, without calling the server', async () => {
    const before = requests;
    const run = await pts(['rule', 'archive', '--brand', '0x0000000000000000000000000000000000000001']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--event-type is required');
    expect(run.stderr).toContain('usage: pts rule archive --brand ID --event-type TYPE');
    expect(requests).toBe(before);
  });
});

describe('pts failures', () => {
  it('exits 1 with the server message on one line when the server refuses', async () => {
    const unknown = `0x${randomBytes(20).toString('hex')}`;
    const run = await pts(['rule', 'list', '--brand', unknown, '--json']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^pts: No brand with Brand ID 0x[0-9a-f]{40}.* \[BRAND_NOT_FOUND\]\n$/);
    const invalid = await pts(['brand', 'create', '--name', 'A', '--domain', 'not a domain']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('domain: must be a domain name');
  });

  it('exits 1 and asks whether `npm start` is running when nothing listens at PTS_URL', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = express().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const run = await pts(['brand', 'list'], { PTS_URL: `http://127.0.0.1:${closed}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach core-api at http://127.0.0.1:${closed}`);
    expect(run.stderr).toContain('is `npm start` running?');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('reads the admin token from <PTS_DATA_DIR>/admin-token when PTS_ADMIN_TOKEN is unset', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'admin-token'), `${ADMIN_TOKEN}\n`);
    const run = await pts(['brand', 'list', '--json'], { PTS_ADMIN_TOKEN: undefined, PTS_DATA_DIR: dir });
    expect(run.code, run.stderr).toBe(0);
  });

  it('exits 1 saying where the token comes from when there is none, or it is wrong', async () => {
    const missing = await pts(['brand', 'list'], { PTS_ADMIN_TOKEN: undefined, PTS_DATA_DIR: tempDir() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('set PTS_ADMIN_TOKEN');
    const wrong = await pts(['brand', 'list'], { PTS_ADMIN_TOKEN: 'not-the-token' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('admin-token');
    expect(wrong.stderr).toContain('[UNAUTHORIZED]');
  });

  it('exits 1 when PTS_URL answers with something that is not core-api', async () => {
    const answers = [
      new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
      new Response(JSON.stringify({ hello: 'world' }), { status: 200 }),
    ];
    for (const answer of answers) {
      let stderr = '';
      const code = await runCli(['brand', 'list'], {
        env: { PTS_URL: 'http://proxy.invalid', PTS_ADMIN_TOKEN: ADMIN_TOKEN },
        stdout: { write: () => true },
        stderr: { write: (text: string) => (stderr += text) },
        fetch: async () => answer,
      });
      expect(code).toBe(1);
      expect(stderr).toMatch(
        answer.status === 502 ? /answered 502 Bad Gateway \[HTTP_502\]/ : /is http:\/\/proxy.invalid a pts core-api\?/,
      );
    }
  });

  it('the real entry point prints one JSON object and exits 0, or exits 2 on bad flags', async () => {
    const run = promisify(execFile);
    const main = resolve(import.meta.dirname, 'main.ts');
    const env = { ...process.env, PTS_URL: baseUrl, PTS_ADMIN_TOKEN: ADMIN_TOKEN };
    const created = await run(
      process.execPath,
      ['--import', 'tsx', main, 'brand', 'create', '--name', 'Sub', '--domain', 'sub.example', '--json'],
      { env },
    );
    expect(JSON.parse(created.stdout)).toHaveProperty('securityKey');
    await expect(
      run(process.execPath, ['--import', 'tsx', main, 'brand', 'create', '--bogus'], { env }),
    ).rejects.toMatchObject({
      code: 2,
      stdout: '',
    });
  });
});

describe('pts rule set with a rate', () => {
  it('sets 2 pts per $1.00 with a minimum and a cap, and shows the rate in rule set and rule list', async () => {
    const { brandId } = await createBrand();
    const rateRule = [
      'rule',
      'set',
      '--brand',
      brandId,
      '--event-type',
      'purchase',
      '--per-unit',
      '2',
      '--unit',
      '1.00',
      '--currency',
      'USD',
    ];
    const rule = await ptsJson([...rateRule, '--min-value', '5.00', '--max-reward', '500']);
    expect(rule).toMatchObject({
      eventType: 'purchase',
      rewardAmount: 0,
      rate: { pts: 2, per: '1.00', currency: 'USD', rounding: 'down' },
      minValue: '5.00',
      maxReward: 500,
    });
    const shown = await pts([...rateRule, '--min-value', '5.00', '--max-reward', '500']);
    expect(shown.stdout).toContain('reward        2 pts per $1.00 (from 5.00, at most 500)');
    const list = await pts(['rule', 'list', '--brand', brandId]);
    expect(list.stdout).toContain('2 pts per $1.00 (from 5.00, at most 500)');
  });

  it('refuses --reward with rate flags, a rate without a unit, and says what the server refused', async () => {
    const { brandId } = await createBrand();
    const base = ['rule', 'set', '--brand', brandId, '--event-type', 'purchase'];
    const both = await pts([...base, '--reward', '5', '--per-unit', '2']);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--reward is a fixed reward: leave out --per-unit');
    const noUnit = await pts([...base, '--per-unit', '2', '--currency', 'USD']);
    expect(noUnit.code).not.toBe(0);
    expect(noUnit.stderr).toContain('--unit');
    const decimals = await pts([...base, '--per-unit', '2', '--unit', '1.005', '--currency', 'USD']);
    expect(decimals.code).not.toBe(0);
    expect(decimals.stderr).toContain('USD has 2 decimal places');
  });
});

describe('pts tiers', () => {
  it('sets the table from a file and shows it; a bad table exits 1 with what to fix', async () => {
    const { brandId } = await createBrand();
    const dir = tempDir();
    const file = join(dir, 'tiers.json');
    const table = {
      basis: 'earned',
      period: 'rolling_365',
      tiers: [
        { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
        { name: 'Gold', threshold: 1000, multiplier: 1.5, entryReward: 200 },
      ],
    };
    writeFileSync(file, JSON.stringify(table));
    const set = await ptsJson(['tiers', 'set', '--brand', brandId, '--file', file]);
    expect(set).toMatchObject({
      basis: 'earned',
      period: 'rolling_365',
      tiers: [{ name: 'Bronze' }, { name: 'Gold', threshold: '1000' }],
    });
    const shown = await pts(['tiers', 'show', '--brand', brandId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Gold: from 1000 pts, ×1.5, entry reward 200');
    writeFileSync(file, JSON.stringify({ ...table, tiers: [table.tiers[1], table.tiers[0]] }));
    const bad = await pts(['tiers', 'set', '--brand', brandId, '--file', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/first tier must start at 0/);
  });
});

describe('pts referrals', () => {
  it('sets the program from a file and shows it with its figures; a bad program exits 1 with what to fix', async () => {
    const { brandId } = await createBrand();
    const rule = await pts(['rule', 'set', '--brand', brandId, '--event-type', 'purchase', '--reward', '10']);
    expect(rule.code, rule.stderr).toBe(0);
    const file = join(tempDir(), 'referrals.json');
    const program = { qualifyingEventType: 'purchase', minValue: '25', referrerReward: 500, refereeReward: 200 };
    writeFileSync(file, JSON.stringify({ ...program, capPerReferrer: 10, capPeriodDays: 30 }));
    const set = await ptsJson(['referrals', 'set', '--brand', brandId, '--file', file]);
    expect(set).toMatchObject({ program: { qualifyingEventType: 'purchase', minValue: '25.00', capPerReferrer: 10 } });
    const shown = await pts(['referrals', 'show', '--brand', brandId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("paid on the referee's first purchase of at least 25.00 USD");
    expect(shown.stdout).toContain('cap: 10 paid referral(s) per referrer per 30 day(s)');
    expect(shown.stdout).toContain('codes used 0, waiting 0, qualified 0, paid 0, reversed 0');
    writeFileSync(file, JSON.stringify({ ...program, qualifyingEventType: 'first_order' }));
    const bad = await pts(['referrals', 'set', '--brand', brandId, '--file', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/first_order is not an active rule of this brand/);
  });
});

describe('pts simulate', () => {
  it('replays the window under a rules file, with progress on stderr and one JSON answer on stdout', async () => {
    const { brandId } = await createBrand();
    const dir = tempDir();
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify([{ eventType: 'purchase', rewardAmount: 150, maxClaims: 2 }]));
    const run = await pts(['simulate', '--brand', brandId, '--days', '30', '--rules-file', file, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/Replaying 30 day\(s\) of 0x[0-9a-f]{40}'s events under 1 proposed rule\(s\)/);
    expect(run.stderr).toMatch(/Replayed 0 event\(s\) in \d+ ms/);
    expect(JSON.parse(run.stdout)).toMatchObject({
      brandId,
      days: 30,
      actual: { ptsIssued: '0', cost: '0.000' },
      simulated: { ptsIssued: '0' },
      membersAffected: { earnMore: 0, earnLess: 0, same: 0 },
    });
    const text = await pts(['simulate', '--brand', brandId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('simulated: 0 pts (0.000 USD)');

    const days = await pts(['simulate', '--brand', brandId, '--days', '91']);
    expect(days.code).toBe(2);
    expect(days.stderr).toContain('--days must be a whole number of days from 1 to 90');
    writeFileSync(file, JSON.stringify([{ eventType: 'order', rate: { pts: 1, per: '1.00', currency: 'EUR' } }]));
    const currency = await pts(['simulate', '--brand', brandId, '--rules-file', file]);
    expect(currency.code).toBe(1);
    expect(currency.stderr).toMatch(/rules\.0\.rate\.currency must be the brand's currency USD/);
  });
});
