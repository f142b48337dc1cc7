import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { readBrandAnalytics } from './brand-analytics.ts';

// The dashboard's member counts and series on events placed around the window's edges (issue 22): who is a
// member, new, active in the day/week/month before `to`, in the window; a member active on two days of one
// week is one member of that week; refused events, agents and events after `to` count as members nowhere.
// The counts are computed from the events grouped by member (docs/benchmarks.md, "Portal dashboard").

const BRAND = '0x00000000000000000000000000000000000000b1';
const NOW = new Date('2026-03-18T12:00:00Z'); // a Wednesday
const H = 3_600_000;
const D = 24 * H;
let database: TestDatabase;

async function event(identityKey: string, at: number, status: 'accepted' | 'rejected' = 'accepted') {
  await database.db
    .insertInto('events')
    .values({
      id: randomUUID(),
      brand_id: BRAND,
      event_type: 'earn',
      user_email: identityKey,
      status,
      reason: status === 'rejected' ? 'COOLDOWN_ACTIVE' : null,
      metadata: '{}',
      reward_amount: status === 'accepted' ? 10n : 0n,
      created_at: new Date(NOW.getTime() + at),
    })
    .execute();
}

beforeAll(async () => {
  database = await createTestDatabase();
  await event('ann@example.com', -40 * D); // first long ago
  await event('ann@example.com', -3 * D); // Sunday 15th: the week of Monday the 9th
  await event('ann@example.com', -2 * H); // today
  await event('bob@example.com', -10 * D); // active in the month only
  await event('cy@example.com', -5 * D); // new: Friday 13th, twice, and Saturday 14th
  await event('cy@example.com', -5 * D + H);
  await event('cy@example.com', -4 * D);
  await event('dee@example.com', -1 * D, 'rejected'); // refused only: no member
  await event('agent:bot', -1 * H); // an agent identity: never a member
  await event('eve@example.com', -20 * D);
  await event('eve@example.com', H); // after `to`: counts nowhere
  await event('fay@example.com', -7 * D); // first exactly at `from`: new, in the window
}, 120_000);

afterAll(async () => {
  await database?.close();
});

describe('the dashboard read model: members and series', () => {
  it('counts members all, new, active and in the window by their events before `to`', async () => {
    const d = await readBrandAnalytics(
      { db: database.db, chain: { chainId: 31337 }, logger: pino({ level: 'silent' }) },
      { brandId: BRAND, from: new Date(NOW.getTime() - 7 * D), to: NOW },
    );
    expect(d.members).toEqual({ total: 5, new: 2, inWindow: 3, active: { day: 1, week: 3, month: 5 } });
    expect(d.events).toEqual({
      accepted: 6,
      refused: 1,
      refusedByReason: [{ reason: 'COOLDOWN_ACTIVE', count: 1 }],
    });
    expect(d.ptsIssued).toBe('60');
    const day = (start: string) => d.series.day.find((bucket) => bucket.start === start);
    expect(day('2026-03-13')).toMatchObject({ acceptedEvents: 2, activeMembers: 1, ptsIssued: '20' });
    expect(day('2026-03-14')).toMatchObject({ acceptedEvents: 1, activeMembers: 1 });
    expect(day('2026-03-17')).toMatchObject({ acceptedEvents: 0, refusedEvents: 1, activeMembers: 0 });
    expect(d.series.week).toEqual([
      expect.objectContaining({ start: '2026-03-09', acceptedEvents: 5, activeMembers: 3, ptsIssued: '50' }),
      expect.objectContaining({ start: '2026-03-16', acceptedEvents: 1, refusedEvents: 1, activeMembers: 1 }),
    ]);
    expect(d.topEventTypes).toEqual([{ eventType: 'earn', accepted: 6, refused: 1, members: 3, ptsIssued: '60' }]);
  });
});
