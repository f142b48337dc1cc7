import { createManualClock, perkStatusAt, windowStatusAt } from '@pts/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { withinWindow } from '../perks/redemption-rule.ts';
import { activeCampaigns, createCampaign, getCampaign } from './campaigns.service.ts';

// One window rule for drops, perks and campaigns (issue 34 §4): for any window and any moment, the drop's
// status, the perk's redemption window and status, and the campaign's status and the X bot's active list
// (a SQL query) say the same thing. Moments are drawn at and around the bounds, where rules used to differ
// (a campaign was still active at its end; a drop and a perk had ended).

const BRAND = `0x${'ab'.repeat(20)}`;
const BASE = Date.parse('2027-03-01T00:00:00.000Z');
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db
    .insertInto('brands')
    .values({
      address: BRAND,
      name: 'Window brand',
      website_domain: 'window.example',
      security_key_hash: `sk-${BRAND}`,
      security_key_encrypted: 'x',
      api_key_hash: `ak-${BRAND}`,
      created_at: new Date(BASE),
      updated_at: new Date(BASE),
    })
    .execute();
});

afterAll(async () => {
  await database?.close();
});

/** A window (start before end) and a moment drawn at a bound, a millisecond either side, or anywhere. */
const windowAndMoment = fc
  .record({ start: fc.integer({ min: 0, max: 10_000 }), length: fc.integer({ min: 1, max: 10_000 }) })
  .chain(({ start, length }) =>
    fc.record({
      start: fc.constant(start),
      end: fc.constant(start + length),
      now: fc.oneof(
        fc.constantFrom(start - 1, start, start + 1, start + length - 1, start + length, start + length + 1),
        fc.integer({ min: -100, max: 20_100 }),
      ),
    }),
  );

describe('one window rule for drops, perks and campaigns', () => {
  it('the drop, the perk and the campaign agree at every moment (start included, end excluded)', async () => {
    const clock = createManualClock(new Date(BASE));
    const deps = { db: database.db, clock };
    let n = 0;
    await fc.assert(
      fc.asyncProperty(windowAndMoment, async ({ start, end, now }) => {
        const startsAt = new Date(BASE + start * 1000);
        const endsAt = new Date(BASE + end * 1000);
        const at = new Date(BASE + now * 1000);
        const drop = windowStatusAt({ startsAt, endsAt }, at);
        const perk = perkStatusAt(
          { active: true, onChain: true, startsAt, endsAt, maxSupply: null, archivedAt: null },
          0,
          at,
        );
        const perkRedeemable = withinWindow({ starts_at: startsAt, ends_at: endsAt }, at);
        n += 1;
        const created = await createCampaign(deps, BRAND, {
          hashtag: `#w${n}`,
          reward: 1,
          startDate: startsAt.toISOString(),
          endDate: endsAt.toISOString(),
          maxClaimsPerUser: 1,
          excludeBrandPosts: true,
        });
        clock.set(at);
        const campaign = await getCampaign(deps, BRAND, created.id);
        const listedActive = (await activeCampaigns(deps, BRAND, at)).some((c) => c.id === created.id);
        await database.db.deleteFrom('hashtag_campaigns').where('id', '=', created.id).execute();

        expect(perk, `perk at ${now} of [${start}, ${end})`).toBe(drop);
        expect(campaign.status, `campaign at ${now} of [${start}, ${end})`).toBe(drop);
        expect(perkRedeemable).toBe(drop === 'active');
        expect(listedActive, `X bot's list at ${now} of [${start}, ${end})`).toBe(drop === 'active');
      }),
      { numRuns: 60 },
    );
  });

  it('an open side of a perk window bounds nothing', () => {
    const at = new Date(BASE);
    expect(windowStatusAt({ startsAt: null, endsAt: null }, at)).toBe('active');
    expect(windowStatusAt({ startsAt: null, endsAt: at }, at)).toBe('ended');
    expect(windowStatusAt({ startsAt: at, endsAt: null }, at)).toBe('active');
    expect(windowStatusAt({ startsAt: new Date(BASE + 1), endsAt: null }, at)).toBe('scheduled');
  });
});
