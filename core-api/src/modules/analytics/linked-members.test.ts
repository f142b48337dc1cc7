import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import * as rollupAccounts from '../../db/migrations/2026_12_07_z01_rollup_accounts.ts';
import { readWindowTotals } from './analytics.repository.ts';
import { readMemberCountsByBrand, readRawActivity } from './brand-analytics.ts';
import { compactBrandRollups, readRolledUpActivity, readRolledUpMemberCounts } from './brand-rollups.ts';
import { DAY_MS, type TimeWindow } from './periods.ts';

// Issue 34: a member is an ACCOUNT. A person whose Discord identity is linked to their e-mail counts once on
// the dashboard (the rollups, migration 2026_12_07_z01_rollup_accounts, and the raw reads) and in the agent's
// analytics (readWindowTotals), for the events written before the link and after it; an unlink splits them
// again. Every state is read from the rollups and from the raw events, which must agree.

const H = 3_600_000;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await database?.close();
});

async function event(brandId: string, member: string, agoMs: number, eventType = 'earn') {
  await database.db
    .insertInto('events')
    .values({
      id: randomUUID(),
      brand_id: brandId,
      event_type: eventType,
      user_email: member,
      status: 'accepted',
      reason: null,
      metadata: '{}',
      reward_amount: 10n,
      created_at: new Date(Date.now() - agoMs),
    })
    .execute();
}

async function link(identity: string, account: string, brandId: string) {
  await database.db
    .insertInto('account_links')
    .values({ identity_key: identity, account_key: account, method: 'code', brand_id: brandId, linked_at: new Date() })
    .execute();
}

/** The member counts every reader gives for `brandId`, over 7 days ending now (rollups) and ending 20 min ago
 * (a later event exists: the raw events answer). */
async function counts(brandId: string) {
  const now = new Date(Date.now() + 1000);
  const window: TimeWindow = { from: new Date(now.getTime() - 7 * DAY_MS), to: now, days: 7 };
  const earlier: TimeWindow = { ...window, to: new Date(Date.now() - 20 * 60_000) };
  const rolled = await readRolledUpActivity(database.db, brandId, window);
  const raw = await readRawActivity(database.db, brandId, window);
  expect(rolled).toEqual(raw);
  const dashboard = (await readMemberCountsByBrand(database.db, { ...window, endsNow: true }, [brandId])).get(brandId);
  const rolledCounts = (await readRolledUpMemberCounts(database.db, window, [brandId])).get(brandId);
  expect(dashboard).toEqual(rolledCounts);
  const rawEarlier = await readRawActivity(database.db, brandId, earlier);
  const agent = await readWindowTotals(database.db, brandId, window);
  return {
    total: rolled.memberCounts.total,
    members: rolled.members,
    week: rolled.memberCounts.active.week,
    types: Object.fromEntries(rolled.types.map((t) => [t.eventType, t.members])),
    earlierTotal: rawEarlier.memberCounts.total,
    earlierMembers: rawEarlier.members,
    agentMembers: agent.members,
    agentNew: agent.newMembers,
  };
}

const counted = (n: number, earlier: number, types: Record<string, number>) => ({
  total: n,
  members: n,
  week: n,
  types,
  earlierTotal: earlier,
  earlierMembers: earlier,
  agentMembers: n,
  agentNew: n,
});

describe('members are accounts (linked identities count once)', () => {
  it('counts a linked Discord and e-mail once, before and after the link, and twice again after an unlink', async () => {
    const brandId = randomUUID();
    const discord = `discord:${randomUUID()}`;
    const ann = `ann-${randomUUID()}@x.io`;
    const bob = `bob-${randomUUID()}@x.io`;
    await event(brandId, discord, 5 * H, 'share');
    await event(brandId, discord, 4 * H);
    await event(brandId, ann, 3 * H);
    await event(brandId, bob, 10 * 60_000);
    expect(await counts(brandId)).toEqual(counted(3, 2, { earn: 3, share: 1 }));

    // Linked: the events written before the link are the account's.
    await link(discord, ann, brandId);
    expect(await counts(brandId)).toEqual(counted(2, 1, { earn: 2, share: 1 }));
    await compactBrandRollups(database.db);
    expect(await counts(brandId)).toEqual(counted(2, 1, { earn: 2, share: 1 }));

    // An event after the link, on the Discord identity: still one member.
    await event(brandId, discord, 60_000);
    expect(await counts(brandId)).toEqual(counted(2, 1, { earn: 2, share: 1 }));

    // Unlinked: two members again.
    await database.db.deleteFrom('account_links').where('identity_key', '=', discord).execute();
    expect(await counts(brandId)).toEqual(counted(3, 2, { earn: 3, share: 1 }));
  });

  it('moves an identity between accounts (relink) and keeps the rollups equal to the raw events', async () => {
    const brandId = randomUUID();
    const [tg, a, b] = [`telegram:${randomUUID()}`, `a-${randomUUID()}@x.io`, `b-${randomUUID()}@x.io`];
    await event(brandId, tg, 2 * DAY_MS);
    await event(brandId, a, 3 * H);
    await event(brandId, b, 10 * 60_000);
    await link(tg, a, brandId);
    expect(await counts(brandId)).toEqual(counted(2, 1, { earn: 2 }));
    await sql`UPDATE account_links SET account_key = ${b} WHERE identity_key = ${tg}`.execute(database.db);
    // b's account now holds the Telegram event of two days ago: before b's own event, a and b are members.
    expect(await counts(brandId)).toEqual(counted(2, 2, { earn: 2 }));
  });

  it('migrates down to identity-keyed rollups and up again to accounts', async () => {
    const brandId = randomUUID();
    const [discord, ann] = [`discord:${randomUUID()}`, `ann-${randomUUID()}@x.io`];
    await event(brandId, discord, 3 * H);
    await event(brandId, ann, 10 * 60_000);
    await link(discord, ann, brandId);
    expect((await counts(brandId)).total).toBe(1);
    const window = { from: new Date(Date.now() - 7 * DAY_MS), to: new Date(Date.now() + 1000) };
    const rolledTotal = async () =>
      (await readRolledUpMemberCounts(database.db, window, [brandId])).get(brandId)?.total;
    // A migration is typed over any schema.
    const migrated = database.db as unknown as Kysely<unknown>;
    await rollupAccounts.down(migrated);
    expect(await rolledTotal()).toBe(2);
    await rollupAccounts.up(migrated);
    expect(await rolledTotal()).toBe(1);
    expect(await counts(brandId)).toEqual(counted(1, 1, { earn: 1 }));
  });
});
