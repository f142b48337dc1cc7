import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { compactBrandRollups, readRawReversals, readRolledUpReversals } from './brand-rollups.ts';
import { DAY_MS } from './periods.ts';

// The dashboard reads what reversals and manual deductions took back from the reversal rollups
// (brand_reversal_days, migration 2026_12_08_c01_deductions), kept by a trigger as reversals are written: the
// rollups equal the raw ledger after refunds and deductions over several days, before and after compaction,
// for whole and partial windows, and the dashboard's pts taken back and net issued are theirs. Runs on PGlite,
// and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'reversal-rollups-admin-token-0123456789';
let platform: TestPlatform;
let brand: { brandId: string; securityKey: string };
let owner: PortalBrowser;
let n = 0;

async function earn(email: string): Promise<string> {
  platform.clock.advance(61_000);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'earn', userEmail: email },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.eventId;
}

async function refund(eventId: string) {
  platform.clock.advance(1_000);
  const res = await platform.signedPost(
    '/pts-api/reversals',
    { brandId: brand.brandId, reversalId: `r-${++n}`, eventId },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function deduct(member: string, amount: number) {
  platform.clock.advance(1_000);
  const res = await platform.post(
    `/admin/brands/${brand.brandId}/deductions`,
    { member, amount, reason: 'Correction', idempotencyKey: `d-${++n}` },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The rollup rows and the raw rows, both summed per day and kind. */
async function bothWays() {
  const rolled = await sql<{ day: string; kind: string; n: string; pts: string }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, kind, sum(reversals)::text AS n, sum(pts)::text AS pts
      FROM brand_reversal_days WHERE brand_id = ${brand.brandId} GROUP BY 1, 2 ORDER BY 1, 2`.execute(platform.deps.db);
  const raw = await sql<{ day: string; kind: string; n: string; pts: string }>`
    SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, kind, count(*)::text AS n,
           sum(pts)::text AS pts
      FROM reward_reversals WHERE brand_id = ${brand.brandId} GROUP BY 1, 2 ORDER BY 1, 2`.execute(platform.deps.db);
  return { rolled: rolled.rows, raw: raw.rows };
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_ADMIN_TOKEN: ADMIN_TOKEN,
    PTS_TRUST_PROXY: 'true',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
  });
  brand = await platform.createBrand({
    name: 'Rollup Shop',
    domain: 'rollup-reversals.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('reversal rollups', () => {
  it('equal the raw ledger after refunds and deductions over several days, and the dashboard reads them', async () => {
    const start = platform.clock.now();
    const a = await earn('a@rollup.example');
    const b = await earn('b@rollup.example');
    await earn('c@rollup.example');
    await earn('c@rollup.example');
    await waitForMintsSettled(platform);
    await refund(a);
    platform.clock.advance(DAY_MS);
    await deduct('c@rollup.example', 30);
    await refund(b);
    platform.clock.advance(DAY_MS);
    await deduct('c@rollup.example', 45);

    const before = await bothWays();
    expect(before.rolled.length).toBeGreaterThanOrEqual(3);
    expect(before.rolled).toEqual(before.raw);
    await compactBrandRollups(platform.deps.db);
    const after = await bothWays();
    expect(after.rolled).toEqual(after.raw);

    const now = platform.clock.now();
    const windows = [
      { from: new Date(start.getTime() - 7 * DAY_MS), to: new Date(now.getTime() + 1) },
      { from: new Date(start.getTime() + 1_000), to: new Date(now.getTime() - 500) },
      { from: new Date(Math.floor(start.getTime() / DAY_MS) * DAY_MS + DAY_MS), to: new Date(now.getTime() + 1) },
      { from: new Date(start.getTime() + 12 * 3_600_000), to: new Date(start.getTime() + 36 * 3_600_000) },
    ];
    for (const window of windows) {
      const raw = await readRawReversals(platform.deps.db, brand.brandId, window);
      expect(await readRolledUpReversals(platform.deps.db, brand.brandId, window)).toEqual(raw);
    }
    const all = await readRawReversals(platform.deps.db, brand.brandId, windows[0]!);
    expect(all).toEqual({ count: 4, ptsReversed: 275n, ptsDeducted: 75n });

    platform.clock.advance(1_000);
    // Signed in now: a session ends after 8 idle hours, and the clock moved two days.
    owner = await portalMember(platform, brand.brandId, 'owner@rollup-reversals.example.com', 'owner');
    const dashboard = await owner.request('GET', `/brands/${brand.brandId}/dashboard?days=30`);
    expect(dashboard.status, JSON.stringify(dashboard.body)).toBe(200);
    expect(dashboard.body.ptsIssued).toBe('400');
    expect(dashboard.body.reversals).toEqual({ count: 4, ptsReversed: '275', ptsDeducted: '75' });
    expect(dashboard.body.ptsNetIssued).toBe('125');
  }, 120_000);
});
