import { randomUUID } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { readMemberDebt } from './reversals.repository.ts';

// Reversals against the real chain (issue 35 §2): a reversal racing a perk redemption of the same points never
// lets the member spend them twice (the token burns only what the wallet holds; the rest is debt), no balance
// goes below zero, and the member's next rewards pay the debt before anything is minted to them. Runs on
// PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

let platform: TestPlatform;
let brand: CreatedBrand;
let n = 0;

async function earn(email: string): Promise<{ eventId: string; wallet: Address; mintStatus: string }> {
  platform.clock.advance(61_000); // past the duplicate window
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'earn', userEmail: email, domain: 'race.example.com', metadata: { n: ++n } },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await waitForMintsSettled(platform);
  return { eventId: res.body.eventId, wallet: res.body.walletAddress, mintStatus: res.body.mintStatus };
}

function reverse(eventId: string) {
  platform.clock.advance(1_000);
  return platform.signedPost(
    '/pts-api/reversals',
    { brandId: brand.brandId, reversalId: `race-${++n}`, eventId },
    brand.securityKey,
  );
}

function redeem(perkId: string, email: string) {
  platform.clock.advance(1_000);
  return platform.signedPost(
    '/services/perks/redeem',
    { brandId: brand.brandId, perkId, userIdentifier: email, idempotencyKey: `redeem-${++n}` },
    brand.securityKey,
  );
}

/** Waits until no reversal is open (sent and settled from its receipt). */
async function waitForReversalsSettled(timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const open = await platform.deps.db
      .selectFrom('reward_reversals')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '<>', 'confirmed')
      .executeTakeFirstOrThrow();
    if (Number(open.count) === 0) return;
    if (performance.now() > deadline) throw new Error(`${open.count} reversals still open`);
    await platform.deps.minter.processPending().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  brand = await platform.createBrand({
    domain: 'race.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('reversals on chain', () => {
  it('a reversal racing a redemption of the same points: spent once, the rest owed, no balance below zero', async () => {
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: `Race ${randomUUID().slice(0, 8)}`, cost: 100, maxPerUser: 0 },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const perk = created.body.perk as { uuid: string };
    const members = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const email = `racer${i}-${randomUUID().slice(0, 6)}@example.com`;
        return { email, ...(await earn(email)) };
      }),
    );
    const results = await Promise.all(
      members.map(async (member) => {
        const [reversal, redemption] = await Promise.all([reverse(member.eventId), redeem(perk.uuid, member.email)]);
        return { member, reversal, redemption };
      }),
    );
    await waitForReversalsSettled();
    for (const { member, reversal, redemption } of results) {
      expect(reversal.status, JSON.stringify(reversal.body)).toBe(200);
      expect(redemption.status, JSON.stringify(redemption.body)).toBeLessThan(500);
      const row = await platform.deps.db
        .selectFrom('reward_reversals')
        .select(['pts', 'taken', 'debt'])
        .where('event_id', '=', member.eventId)
        .executeTakeFirstOrThrow();
      const redeemed = await platform.deps.db
        .selectFrom('perk_redemptions')
        .select('cost')
        .where('user_key', '=', member.email)
        .where('status', '=', 'confirmed')
        .execute();
      const spent = redeemed.reduce((sum, r) => sum + BigInt(r.cost), 0n);
      // The 100 pts went exactly once: burned by the reversal, or spent on the perk and then owed.
      expect(BigInt(row.taken as bigint) + spent).toBe(100n);
      expect(BigInt(row.debt as bigint)).toBe(spent);
      expect(await tokenBalance(platform, member.wallet)).toBe(0n);
      expect(await readMemberDebt(platform.deps.db, brand.brandId, member.wallet)).toBe(spent);
    }
  }, 120_000);

  it('records what the wallet no longer held as debt, which the next rewards pay before anything is minted', async () => {
    const email = `spender-${randomUUID().slice(0, 6)}@example.com`;
    const first = await earn(email);
    const reversal = await reverse(first.eventId);
    expect(reversal.body).toMatchObject({ requested: 100, taken: 100, debt: 0 });
    // The first reward again: nothing left to take back.
    expect((await reverse(first.eventId)).status).toBe(409);

    // A reward whose wallet is emptied before its reversal: the reversal takes 0 and owes 100.
    const second = await earn(email);
    expect(await tokenBalance(platform, second.wallet)).toBe(100n);
    const perk = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: `Spend ${randomUUID().slice(0, 8)}`, cost: 100, maxPerUser: 0 },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    const spent = await redeem(perk.body.perk.uuid, email);
    expect(spent.status, JSON.stringify(spent.body)).toBe(200);
    expect(await tokenBalance(platform, second.wallet)).toBe(0n);
    const owed = await reverse(second.eventId);
    expect(owed.status).toBe(200);
    expect(owed.body).toMatchObject({ requested: 100, taken: 0, debt: 100, status: 'confirmed' });
    expect(await readMemberDebt(platform.deps.db, brand.brandId, second.wallet)).toBe(100n);

    // The next reward (100) pays the debt: nothing minted, debt 0; the one after is minted in full.
    const paying = await earn(email);
    expect(paying.mintStatus).toBe('none');
    expect(await readMemberDebt(platform.deps.db, brand.brandId, second.wallet)).toBe(0n);
    expect(await tokenBalance(platform, second.wallet)).toBe(0n);
    const free = await earn(email);
    expect(free.mintStatus).not.toBe('none');
    expect(await tokenBalance(platform, second.wallet)).toBe(100n);
  }, 120_000);
});
