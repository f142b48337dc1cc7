import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { getStreakStatus, readDailyStreaks, recordActivity, updateStreakSettings } from './streaks.service.ts';

// readDailyStreaks (one statement for many brands, used by the agent member tools) must show exactly what
// getStreakStatus (one brand at a time, the streak API) shows, whatever each brand's settings.

let platform: TestPlatform;
let brands: CreatedBrand[];

const deps = () => ({
  db: platform.deps.db,
  clock: platform.clock,
  logger: platform.deps.logger,
  events: platform.services.eventService,
});

beforeAll(async () => {
  platform = await startTestPlatform();
  platform.clock.set('2026-05-01T09:00:00Z');
  brands = [];
  for (const domain of ['a.daily.example', 'b.daily.example', 'c.daily.example']) {
    brands.push(await platform.createBrand({ domain }));
  }
  // Brand b: its own multipliers and no freezes; brand a and c keep the defaults.
  await updateStreakSettings(deps(), brands[1]!.brandId, {
    multipliers: [{ days: 2, multiplier: 3 }],
    freezeEveryDays: 0,
  });
});

afterAll(async () => {
  await platform?.stop();
});

async function compare(user: string) {
  const ids = brands.map((b) => b.brandId);
  const batched = await readDailyStreaks(deps(), ids, await resolveAccountKey(platform.deps.db, user));
  expect([...batched.keys()]).toEqual(ids);
  for (const brandId of ids) {
    const one = await getStreakStatus(deps(), brandId, user);
    expect(batched.get(brandId), brandId).toEqual({
      currentStreak: one.currentStreak,
      longestStreak: one.longestStreak,
      multiplier: one.multiplier,
      checkedInToday: one.checkedInToday,
      lapsed: one.lapsed,
      lastActivityAt: one.lastActivityAt,
      streakExpiresAt: one.streakExpiresAt,
    });
  }
  return batched;
}

describe('readDailyStreaks', () => {
  it('equals getStreakStatus at every brand, day after day, through a lapse', async () => {
    const user = 'daily-1@example.com';
    const [a, b] = brands as [CreatedBrand, CreatedBrand];
    // Nothing anywhere yet: empty streaks.
    expect((await compare(user)).get(a.brandId)).toMatchObject({ currentStreak: 0, longestStreak: 0 });
    for (let day = 0; day < 3; day++) {
      for (const brand of [a, b]) {
        await recordActivity(deps(), {
          brandId: brand.brandId,
          userIdentifier: user,
          platform: 'web',
          streakType: 'daily',
        });
      }
      const views = await compare(user);
      expect(views.get(a.brandId)?.currentStreak).toBe(day + 1);
      platform.clock.advance(86_400_000);
    }
    // Brand b's custom multiplier applies there only.
    const views = await compare(user);
    expect(views.get(b.brandId)?.multiplier).toBe(3);
    expect(views.get(a.brandId)?.multiplier).not.toBe(3);
    // A week without activity: lapsed (brand b has no freezes to spend).
    platform.clock.advance(7 * 86_400_000);
    const later = await compare(user);
    expect(later.get(b.brandId)).toMatchObject({ lapsed: true, longestStreak: 3 });
  });

  it('answers an empty map for no brands', async () => {
    expect(
      (await readDailyStreaks(deps(), [], await resolveAccountKey(platform.deps.db, 'nobody@example.com'))).size,
    ).toBe(0);
  });
});
