import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { readMemberCountsByBrand, readRawActivity } from './brand-analytics.ts';
import { CLOCK_SKEW_MS, compactBrandRollups, readRolledUpActivity, settleWindow } from './brand-rollups.ts';
import { DAY_MS, type TimeWindow } from './periods.ts';
import { startRollupCompactionJob } from './rollup-compaction.job.ts';

// The rollups the database keeps beside the events (migration 2026_12_05_a01_brand_rollups) must answer
// exactly what the raw events answer, for any events, written in any grouping of statements, folded by
// compactions at any point, over any window that ends at the present: first partial day, windows shorter
// than a day, weeks cut by the window, refused events by reason, agents left out. A window with a later
// event is not theirs to answer (undefined: the raw events answer it).

const NOW = new Date('2026-05-20T15:30:00Z'); // a Wednesday
const H = 3_600_000;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await database?.close();
});

interface SeedEvent {
  member: string;
  type: string;
  accepted: boolean;
  reason: string | null;
  reward: number;
  /** ms before NOW (≥ 1). */
  ago: number;
}

const seedEvent = fc.record({
  member: fc.constantFrom('ann@x.io', 'Bob@x.io', 'cy@x.io', 'dee@x.io', 'eve@x.io', 'agent:k1', 'agent_k2'),
  type: fc.constantFrom('earn', 'daily_checkin', 'Purchase', 'share_x'),
  accepted: fc.boolean(),
  reason: fc.constantFrom('COOLDOWN_ACTIVE', 'MAX_CLAIMS_REACHED', null),
  reward: fc.integer({ min: 0, max: 500 }),
  ago: fc.integer({ min: 1, max: 40 * DAY_MS }),
});

/** Writes the events in the given statement groups, compacting after the groups flagged so. */
async function write(brandId: string, groups: { events: SeedEvent[]; compactAfter: boolean }[]) {
  for (const group of groups) {
    if (group.events.length > 0) {
      await database.db
        .insertInto('events')
        .values(
          group.events.map((e) => ({
            id: randomUUID(),
            brand_id: brandId,
            event_type: e.type,
            user_email: e.member,
            status: e.accepted ? ('accepted' as const) : ('rejected' as const),
            reason: e.accepted ? null : e.reason,
            metadata: '{}',
            reward_amount: e.accepted ? BigInt(e.reward) : 0n,
            created_at: new Date(NOW.getTime() - e.ago),
          })),
        )
        .execute();
    }
    if (group.compactAfter) await compactBrandRollups(database.db);
  }
}

/** Windows ending now: a day-aligned start, a start within a day, a Monday, less than a day, 40 days. */
const windowFrom = fc.oneof(
  fc.integer({ min: 1, max: 45 * DAY_MS }).map((ms) => new Date(NOW.getTime() - ms)),
  fc.integer({ min: 0, max: 45 }).map((days) => new Date(Math.floor(NOW.getTime() / DAY_MS) * DAY_MS - days * DAY_MS)),
  fc.constantFrom(new Date('2026-05-18T00:00:00Z'), new Date('2026-05-11T00:00:00Z'), new Date(NOW.getTime() - H)),
);

const windowOf = (from: Date): TimeWindow => ({ from, to: NOW, days: (NOW.getTime() - from.getTime()) / DAY_MS });

describe('brand rollups', () => {
  it('answer exactly what the raw events answer, whatever the statements, compactions and window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ events: fc.array(seedEvent, { maxLength: 12 }), compactAfter: fc.boolean() }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.array(windowFrom, { minLength: 1, maxLength: 4 }),
        async (groups, froms) => {
          const brandId = `0x${randomUUID().replaceAll('-', '').padEnd(40, '0')}`;
          await write(brandId, groups);
          for (const from of froms) {
            const window = windowOf(from);
            expect(await settleWindow(database.db, window, { brandIds: [brandId] })).toEqual(window);
            const rolled = await readRolledUpActivity(database.db, brandId, window);
            const raw = await readRawActivity(database.db, brandId, window);
            expect(rolled).toEqual(raw);
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 600_000);

  it('leave a window with a later event to the raw events, unless it ends now and the event is just after', async () => {
    const brandId = `0x${'c1'.repeat(20)}`;
    const at = (msBeforeNow: number) => ({
      member: 'ann@x.io',
      type: 'earn',
      accepted: true,
      reason: null,
      reward: 5,
      ago: msBeforeNow,
    });
    await write(brandId, [{ events: [at(2 * H)], compactAfter: false }]);
    const past = { from: new Date(NOW.getTime() - 10 * DAY_MS), to: new Date(NOW.getTime() - 3 * H), days: 10 };
    expect(await settleWindow(database.db, past, { brandIds: [brandId] })).toBeUndefined();
    // Chosen by the caller: a `to` with later events is the raw events' to answer, even a moment before them.
    const chosen = { ...past, to: new Date(NOW.getTime() - 2 * H - 1) };
    expect(await settleWindow(database.db, chosen, { brandIds: [brandId] })).toBeUndefined();
    // Ending now, with an event stamped just after `to` (written meanwhile, or a clock ahead): it moves.
    const settled = await settleWindow(database.db, chosen, { brandIds: [brandId], endsNow: true });
    expect(settled?.to).toEqual(new Date(NOW.getTime() - 2 * H + 1));
    expect(settled && settled.to.getTime() - settled.from.getTime()).toBe(chosen.to.getTime() - chosen.from.getTime());
    expect(settled && (await readRolledUpActivity(database.db, brandId, settled))).toEqual(
      settled && (await readRawActivity(database.db, brandId, { ...settled, days: 10 })),
    );
    // Further ahead than a clock may run: the raw events.
    const early = { ...past, to: new Date(NOW.getTime() - 2 * H - CLOCK_SKEW_MS) };
    expect(await settleWindow(database.db, early, { brandIds: [brandId], endsNow: true })).toBeUndefined();
    expect(await settleWindow(database.db, windowOf(past.from), { brandIds: [brandId] })).toEqual(windowOf(past.from));
  });

  it('keep exact counts when batches and compactions run at the same time', async () => {
    const brandId = `0x${'c2'.repeat(20)}`;
    const members = Array.from({ length: 30 }, (_, i) => `m${i}@x.io`);
    const batch = (i: number) =>
      write(brandId, [
        {
          events: members.map((member, j) => ({
            member,
            type: j % 2 === 0 ? 'earn' : 'share',
            accepted: (i + j) % 5 !== 0,
            reason: 'COOLDOWN_ACTIVE',
            reward: 10,
            ago: ((i * 7 + j) % 20) * H + 1,
          })),
          compactAfter: i % 3 === 0,
        },
      ]);
    await Promise.all([...Array.from({ length: 12 }, (_, i) => batch(i)), compactBrandRollups(database.db)]);
    await compactBrandRollups(database.db);
    const window = windowOf(new Date(NOW.getTime() - 2 * DAY_MS));
    const rolled = await readRolledUpActivity(database.db, brandId, window);
    expect(rolled).toEqual(await readRawActivity(database.db, brandId, window));
    expect(rolled?.accepted).toBe(12 * 30 - 72);
    const rows = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM brand_event_days WHERE brand_id = ${brandId} AND NOT compacted`.execute(
      database.db,
    );
    expect(rows.rows[0]?.n).toBe(0);
  }, 120_000);

  it("the worker's job folds the fresh rows on its interval, and its stop waits for a pass", async () => {
    const brandId = `0x${'c3'.repeat(20)}`;
    await write(brandId, [
      {
        events: [{ member: 'ann@x.io', type: 'earn', accepted: true, reason: null, reward: 5, ago: H }],
        compactAfter: false,
      },
    ]);
    const fresh = async () =>
      (
        await sql<{ n: number }>`
          SELECT (SELECT count(*) FROM brand_event_days WHERE NOT compacted)
               + (SELECT count(*) FROM brand_active_counts WHERE NOT compacted)
               + (SELECT count(*) FROM brand_member_counts WHERE NOT compacted) AS n`.execute(database.db)
      ).rows[0]?.n;
    expect(Number(await fresh())).toBeGreaterThan(0);
    const job = startRollupCompactionJob({
      compact: () => compactBrandRollups(database.db),
      intervalSeconds: 1,
      logger: pino({ level: 'silent' }),
    });
    try {
      await expect.poll(async () => Number(await fresh()), { timeout: 10_000, interval: 200 }).toBe(0);
    } finally {
      await job.stop();
    }
  });

  it('count members of every brand as the raw events do (the operators’ brand list)', async () => {
    const window = windowOf(new Date(NOW.getTime() - 7 * DAY_MS));
    const all = await readMemberCountsByBrand(database.db, window);
    const brands = [...all.keys()];
    expect(brands.length).toBeGreaterThan(2);
    for (const brandId of brands) {
      expect(all.get(brandId)).toEqual((await readRawActivity(database.db, brandId, window)).memberCounts);
    }
  });

  it('refuse to change or delete an event (the rollups count each once)', async () => {
    await expect(sql`UPDATE events SET reward_amount = 1`.execute(database.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM events`.execute(database.db)).rejects.toThrow(/append-only/);
  });
});
