import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

let platform: TestPlatform;
let brand: CreatedBrand;

/** Each call signs afresh: the clock moves a second, so identical bodies get distinct signatures. */
const signed = (path: string, body: unknown) => {
  platform.clock.advance(1_000);
  return platform.signedPost(path, body, brand.securityKey);
};
const inHours = (hours: number) => new Date(platform.clock.now().getTime() + hours * 3600_000).toISOString();

async function createDrop(body: Record<string, unknown>): Promise<string> {
  const res = await signed('/services/drops/create', { brandId: brand.brandId, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.drop.dropId;
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '10000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '10000',
  });
  brand = await platform.createBrand({ domain: 'drops.example.com' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('drops (seed /services/drops/*)', () => {
  it('creates a drop (brand-signed) and its drop_claim rule', async () => {
    const res = await signed('/services/drops/create', {
      brandId: brand.brandId,
      name: 'Launch drop',
      amount: 50,
      totalSupply: 3,
      perUserLimit: 1,
      endsAt: inHours(2),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.drop).toMatchObject({
      dropId: expect.stringMatching(/^drop_[0-9a-f]{16}$/),
      amount: 50,
      totalSupply: 3,
      claimed: 0,
      remaining: 3,
      perUserLimit: 1,
    });
    const rule = await platform.deps.db
      .selectFrom('event_rules')
      .selectAll()
      .where('brand_id', '=', brand.brandId)
      .where('event_type', '=', 'drop_claim')
      .executeTakeFirst();
    expect(rule).toMatchObject({ active: true, cooldown_hours: 0, max_claims_per_user: -1 });

    const unsigned = await platform.post('/services/drops/create', {
      brandId: brand.brandId,
      amount: 50,
      totalSupply: 3,
      endsAt: inHours(2),
    });
    expect(unsigned.status).toBe(401);
    const past = await signed('/services/drops/create', {
      brandId: brand.brandId,
      amount: 50,
      totalSupply: 3,
      endsAt: inHours(-1),
    });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatch(/endsAt/);
  });

  it('pays a claim once per user through the event path and mints it', async () => {
    const dropId = await createDrop({ amount: 30, totalSupply: 10, endsAt: inHours(1) });
    const user = 'telegram_31337@pts.local';
    const first = await signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: user });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, dropId, amount: 30, remaining: 9 });
    const event = await platform.deps.db
      .selectFrom('events')
      .select(['event_type', 'status', 'reward_amount'])
      .where('id', '=', first.body.eventId)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ event_type: 'drop_claim', status: 'accepted' });
    const second = await signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: user });
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'already_claimed' } });
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, first.body.walletAddress)).toBe(30n);
  });

  it('pays a unit reserved by a process that died before recording its reward, once, on the next claim', async () => {
    const dropId = await createDrop({ amount: 40, totalSupply: 5, endsAt: inHours(1) });
    const user = 'discord_777000@pts.local';
    // What a crash between the reservation's commit and the event's commit leaves behind.
    const eventId = '0b7c2a8e-4d1f-4c55-9e0a-7d3b9f1e2a61';
    await platform.deps.db
      .insertInto('drop_claims')
      .values({ drop_id: dropId, user_key: user, seq: 1, event_id: eventId, claimed_at: platform.clock.now() })
      .execute();
    await platform.deps.db
      .updateTable('drops')
      .set((eb) => ({ claimed: eb('claimed', '+', 1) }))
      .where('id', '=', dropId)
      .execute();

    // Too soon: the original may merely be slow, so the claim is refused and nothing is paid.
    const early = await signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: user });
    expect(early.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'already_claimed' } });

    platform.clock.advance(60_000);
    const redriven = await signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: user });
    expect(redriven.status, JSON.stringify(redriven.body)).toBe(200);
    expect(redriven.body).toMatchObject({ success: true, eventId, amount: 40, remaining: 4 });
    const again = await signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: user });
    expect(again.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'already_claimed' } });
    const drop = await platform.deps.db
      .selectFrom('drops')
      .select('claimed')
      .where('id', '=', dropId)
      .executeTakeFirstOrThrow();
    expect(drop.claimed).toBe(1);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, redriven.body.walletAddress)).toBe(40n);
  });

  it('20 concurrent claims: one per user, never past the supply', async () => {
    const dropId = await createDrop({ amount: 5, totalSupply: 7, endsAt: inHours(1) });
    const sameUser = 'discord_555000111@pts.local';
    const claims = [];
    for (let i = 0; i < 20; i++) {
      claims.push(signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: sameUser }));
    }
    const results = await Promise.all(claims);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).map((r) => r.body.details?.reason)).toEqual(
      Array(19).fill('already_claimed'),
    );

    const many = [];
    for (let i = 0; i < 20; i++) {
      many.push(
        signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier: `user${i}@example.com` }),
      );
    }
    const outcomes = await Promise.all(many);
    expect(outcomes.filter((r) => r.status === 200)).toHaveLength(6);
    expect(outcomes.filter((r) => r.status === 409).every((r) => r.body.code === 'SOLD_OUT')).toBe(true);
    expect(outcomes.filter((r) => r.status === 409)).toHaveLength(14);
    const drop = await platform.deps.db
      .selectFrom('drops')
      .selectAll()
      .where('id', '=', dropId)
      .executeTakeFirstOrThrow();
    expect(drop.claimed).toBe(7);
    const rows = await platform.deps.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('event_type', '=', 'drop_claim')
      .where('status', '=', 'accepted')
      .where(({ ref }) => ref('metadata', '->>').key('dropId'), '=', dropId)
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(7);
  });

  it('refuses claims outside the window and for unknown drops', async () => {
    const later = await createDrop({ amount: 5, totalSupply: 5, startsAt: inHours(1), endsAt: inHours(2) });
    const early = await signed('/services/drops/claim', {
      brandId: brand.brandId,
      dropId: later,
      userIdentifier: 'a@example.com',
    });
    expect(early.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'not_started' } });
    platform.clock.advance(3 * 3600_000);
    const late = await signed('/services/drops/claim', {
      brandId: brand.brandId,
      dropId: later,
      userIdentifier: 'a@example.com',
    });
    expect(late.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'ended' } });
    const unknown = await signed('/services/drops/claim', {
      brandId: brand.brandId,
      dropId: 'drop_0000000000000000',
      userIdentifier: 'a@example.com',
    });
    expect(unknown.status).toBe(404);
    const malformed = await signed('/services/drops/claim', {
      brandId: brand.brandId,
      dropId: 'x',
      userIdentifier: 'a',
    });
    expect(malformed.status).toBe(400);
  });

  it("answers each drop's status by the server's clock, with the one window rule its claims obey", async () => {
    const dropId = await createDrop({ amount: 5, totalSupply: 5, startsAt: inHours(1), endsAt: inHours(2) });
    const admin = { authorization: `Bearer ${platform.deps.adminToken}` };
    const statusOf = async () => {
      const res = await platform.get(`/admin/brands/${brand.brandId}/drops`, admin);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.drops.find((drop: { dropId: string }) => drop.dropId === dropId).status;
    };
    const claim = (userIdentifier: string) =>
      signed('/services/drops/claim', { brandId: brand.brandId, dropId, userIdentifier });
    expect(await statusOf()).toBe('scheduled');
    const drop = (await platform.get(`/admin/brands/${brand.brandId}/drops`, admin)).body.drops.find(
      (d: { dropId: string }) => d.dropId === dropId,
    );
    platform.clock.set(new Date(drop.startsAt));
    expect(await statusOf()).toBe('active');
    expect((await claim('opening@example.com')).status).toBe(200);
    // At endsAt exactly the drop has ended, in the list as for a claim.
    platform.clock.set(new Date(new Date(drop.endsAt).getTime() - 1));
    expect(await statusOf()).toBe('active');
    platform.clock.set(new Date(drop.endsAt));
    expect(await statusOf()).toBe('ended');
    platform.clock.set(new Date(new Date(drop.endsAt).getTime() - 1_000));
    const last = await claim('closing@example.com');
    expect(last.body).toMatchObject({ code: 'CLAIM_FAILED', details: { reason: 'ended' } });
  });
});
