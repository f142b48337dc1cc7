import { randomUUID } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { claimExternalIds, settleExternalIds } from './events.repository.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
const DAY_MS = 24 * 3600 * 1000;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    domain: 'posts.example',
    rules: [
      // No cooldown, no duplicate-window escape needed, unlimited claims: only externalId stops a repeat.
      { eventType: 'post_mention', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'post_quote', rewardAmount: 75, cooldownHours: 24, maxClaims: -1 },
      { eventType: 'purchase', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 },
    ],
  });
});

afterAll(async () => {
  await platform?.stop();
});

const event = (eventType: string, identityKey: string, externalId?: string) => ({
  brandId: brand.brandId,
  eventType,
  userEmail: identityKey,
  domain: 'posts.example',
  ...(externalId === undefined ? {} : { externalId }),
});

/** A brand-signed manual event (the brand's server), each with its own timestamp. */
function signed(body: Record<string, unknown>, path = '/pts-api/manual-event') {
  platform.clock.advance(1_000);
  return platform.signedPost(path, body, brand.securityKey);
}

async function mintsFor(wallet: string) {
  return platform.deps.db.selectFrom('reward_mints').selectAll().where('wallet_address', '=', wallet).execute();
}

describe('manual-event externalId', () => {
  it('pays 20 concurrent identical requests once: one reward, one mint, 19 answers marked duplicate', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => signed(event('post_mention', 'racer@example.com', '1800000000000000001'))),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const first = responses.filter((r) => r.body.duplicate !== true);
    expect(first).toHaveLength(1);
    const eventId = first[0]!.body.eventId;
    for (const r of responses) {
      expect(r.body.eventId).toBe(eventId);
      expect(r.body.rewardAmount).toBe(10);
    }
    expect(responses.filter((r) => r.body.duplicate === true)).toHaveLength(19);

    await waitForMintsSettled(platform);
    const wallet = first[0]!.body.walletAddress;
    expect(await mintsFor(wallet)).toHaveLength(1);
    expect(await tokenBalance(platform, wallet)).toBe(10n);
  });

  it('tells its sender how a confirmed reward was proven: by its receipt, or by the token supply (issue 24 §13)', async () => {
    const body = event('purchase', 'proof@example.com', 'order-proof-1');
    const first = await signed(body);
    expect(first.status).toBe(200);
    await waitForMintsSettled(platform);
    const byReceipt = await signed(body);
    expect(byReceipt.body).toMatchObject({ duplicate: true, mintStatus: 'confirmed', confirmedBy: 'receipt' });
    expect(byReceipt.body.transactionHash).toBe(first.body.transactionHash);

    // The tracker confirms a batch from the token supply when the chain lost every receipt of its hashes
    // (a chain restored from a state dump taken mid-block, chain/supply-witness.ts); it records that here.
    const mint = await platform.deps.db
      .selectFrom('reward_mints')
      .select(['chain_tx_id', 'status'])
      .where('event_id', '=', first.body.eventId)
      .executeTakeFirstOrThrow();
    expect(mint.status).toBe('confirmed');
    await platform.deps.db
      .updateTable('chain_txs')
      .set({ confirmed_by: 'supply' })
      .where('id', '=', mint.chain_tx_id!)
      .execute();
    const bySupply = await signed(body);
    expect(bySupply.body).toMatchObject({ duplicate: true, mintStatus: 'confirmed', confirmedBy: 'supply' });
  });

  it('answers a repeat days later with the first event, its transaction and duplicate: true', async () => {
    const body = event('post_mention', 'later@example.com', 'order-77');
    const first = await signed(body);
    expect(first.status).toBe(200);
    expect(first.body.duplicate).toBeUndefined();
    await waitForMintsSettled(platform);
    platform.clock.advance(30 * DAY_MS);

    const repeat = await signed(body);
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({
      success: true,
      duplicate: true,
      eventId: first.body.eventId,
      rewardAmount: 10,
      walletAddress: first.body.walletAddress,
      walletCreated: false,
      transactionHash: first.body.transactionHash,
    });
    expect(['submitted', 'confirmed']).toContain(repeat.body.mintStatus);
    expect(repeat.body.message).toMatch(/nothing new was rewarded/);
    expect(await mintsFor(first.body.walletAddress)).toHaveLength(1);
    expect(await tokenBalance(platform, first.body.walletAddress)).toBe(10n);

    // The repeat is in the audit trail, as a duplicate.
    const rows = await platform.deps.db
      .selectFrom('events')
      .select(['status', 'reason'])
      .where('user_email', '=', 'later@example.com')
      .orderBy('created_at')
      .execute();
    expect(rows).toEqual([
      { status: 'accepted', reason: null },
      { status: 'rejected', reason: 'DUPLICATE_EXTERNAL_ID' },
    ]);
  });

  it('is one key per brand and event type, whoever sends it', async () => {
    const a = await signed(event('post_mention', 'alice@example.com', 'shared-1'));
    expect(a.status).toBe(200);
    const b = await signed(event('post_mention', 'bob@example.com', 'shared-1'));
    expect(b.status).toBe(409);
    expect(JSON.stringify(b.body)).not.toContain(a.body.walletAddress);
    // Another event type is another key.
    const c = await platform.post('/pts-api/manual-event', event('purchase', 'bob@example.com', 'shared-1'));
    expect(c.status).toBe(200);
    expect(c.body.duplicate).toBeUndefined();
    expect(c.body.rewardAmount).toBe(40);
  });

  it('pays concurrent repeats from different users once', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        platform.post('/pts-api/manual-event', event('post_mention', `crowd${i}@example.com`, 'crowd-post')),
      ),
    );
    // One is paid; the others, another user each, learn nothing of it (409 duplicate).
    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    const rewarded = await platform.deps.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'accepted')
      .where('user_email', 'like', 'crowd%')
      .executeTakeFirstOrThrow();
    expect(Number(rewarded.n)).toBe(1);
  });

  it('skips the 60 s duplicate window for events named by an externalId (two orders within a minute both pay)', async () => {
    const a = await platform.post('/pts-api/manual-event', event('purchase', 'shopper@example.com', 'o-1'));
    const b = await platform.post('/pts-api/manual-event', event('purchase', 'shopper@example.com', 'o-2'));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.duplicate).toBeUndefined();
    // Without an externalId the window still applies.
    const c = await platform.post('/pts-api/manual-event', event('purchase', 'shopper@example.com'));
    expect(c.status).toBe(409);
  });

  it('does not let a refused event hold its key: the same externalId is paid once the cooldown is over', async () => {
    const email = 'quoter@example.com';
    const first = await platform.post('/pts-api/manual-event', event('post_quote', email, 'q-1'));
    expect(first.status).toBe(200);
    const refused = await platform.post('/pts-api/manual-event', event('post_quote', email, 'q-2'));
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('COOLDOWN_ACTIVE');
    platform.clock.advance(DAY_MS + 1000);
    const later = await platform.post('/pts-api/manual-event', event('post_quote', email, 'q-2'));
    expect(later.status).toBe(200);
    expect(later.body.duplicate).toBeUndefined();
    expect(later.body.rewardAmount).toBe(75);
  });

  it.each([
    ['', /externalId/],
    ['x'.repeat(129), /externalId.*128/],
    [42, /externalId/],
  ])('refuses externalId %j with 400 naming the field', async (externalId, message) => {
    const response = await platform.post('/pts-api/manual-event', {
      ...event('post_mention', 'bad@example.com'),
      externalId,
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toMatch(message);
  });

  it('accepts an externalId of exactly 128 characters', async () => {
    const response = await platform.post(
      '/pts-api/manual-event',
      event('post_mention', 'long@example.com', 'y'.repeat(128)),
    );
    expect(response.status).toBe(200);
  });
});

describe('a repeated externalId shows the first event only to its sender, for the same user', () => {
  const secretsOf = (first: { eventId: string; walletAddress: string; transactionHash?: string }) =>
    [first.eventId, first.walletAddress, first.transactionHash].filter((value): value is string => Boolean(value));

  it('an unsigned browser request or a signed one for another user gets 409 duplicate, nothing of the first event', async () => {
    const first = await signed(event('purchase', 'buyer@example.com', 'order-5001'));
    expect(first.status).toBe(200);
    await waitForMintsSettled(platform);
    const original = await signed(event('purchase', 'buyer@example.com', 'order-5001'));
    expect(original.body.transactionHash).toMatch(/^0x/);
    const secrets = secretsOf(original.body);
    expect(secrets).toHaveLength(3);

    const attempts = [
      // The browser: its domain is only a claim.
      await platform.post('/pts-api/manual-event', event('purchase', 'buyer@example.com', 'order-5001')),
      await platform.post('/pts-api/manual-event', event('purchase', 'guesser@example.com', 'order-5001')),
      // The brand's own signature, but for another user.
      await signed(event('purchase', 'guesser@example.com', 'order-5001')),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(409);
      expect(attempt.body.details).toMatchObject({ reason: 'duplicate' });
      for (const secret of secrets) expect(JSON.stringify(attempt.body)).not.toContain(secret);
    }
    const bulk = await platform.post('/pts-api/bulk-events', {
      events: [event('purchase', 'buyer@example.com', 'order-5001')],
    });
    expect(bulk.body.results[0]).toMatchObject({ success: false, status: 409 });
    for (const secret of secrets) expect(JSON.stringify(bulk.body)).not.toContain(secret);
    // Nothing new was paid.
    expect(await mintsFor(original.body.walletAddress)).toHaveLength(1);
  });

  it('another agent key of the brand gets 409; the key that sent it gets the first event back', async () => {
    const sender = await createFixtureKey(platform, { name: 'sender', brandIds: [brand.brandId], ratePerMinute: 1000 });
    const other = await createFixtureKey(platform, { name: 'other', brandIds: [brand.brandId], ratePerMinute: 1000 });
    const body = {
      brandId: brand.brandId,
      eventType: 'purchase',
      userId: 'agent-buyer@example.com',
      externalId: 'order-6001',
    };
    const send = (key: typeof sender, payload: Record<string, unknown>) => {
      platform.clock.advance(1_000);
      return agentRequest(platform, { method: 'POST', path: '/events', body: payload, key });
    };
    const first = await send(sender, body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const secrets = secretsOf(first.body.data);

    const stranger = await send(other, body);
    expect(stranger.status).toBe(409);
    expect(stranger.body.error.code).toBe('conflict');
    expect(stranger.body.error.details).toMatchObject({ reason: 'duplicate' });
    for (const secret of secrets) expect(JSON.stringify(stranger.body)).not.toContain(secret);
    // The brand's signature is another sender too.
    const brandRepeat = await signed({
      brandId: brand.brandId,
      eventType: 'purchase',
      userEmail: 'agent-buyer@example.com',
      externalId: 'order-6001',
    });
    expect(brandRepeat.status).toBe(409);
    // The same key for another user: 409.
    expect((await send(sender, { ...body, userId: 'someone-else@example.com' })).status).toBe(409);

    const retry = await send(sender, body);
    expect(retry.status).toBe(200);
    expect(retry.body.data).toMatchObject({
      duplicate: true,
      eventId: first.body.data.eventId,
      walletAddress: first.body.data.walletAddress,
    });
  });
});

describe('bulk-events externalId', () => {
  it('pays an externalId once inside one bulk request and against an earlier request', async () => {
    const before = await signed(event('purchase', 'bulk@example.com', 'order-1'));
    expect(before.status).toBe(200);
    const response = await signed(
      {
        events: [
          event('purchase', 'bulk@example.com', 'order-1'),
          event('purchase', 'bulk@example.com', 'order-2'),
          event('purchase', 'bulk@example.com', 'order-2'),
          event('purchase', 'bulk@example.com', 'order-3'),
          { ...event('purchase', 'bulk@example.com'), externalId: 'z'.repeat(200) },
        ],
      },
      '/pts-api/bulk-events',
    );
    expect(response.status).toBe(200);
    const [r1, r2, r3, r4, r5] = response.body.results;
    expect(r1).toMatchObject({ success: true, duplicate: true, eventId: before.body.eventId });
    expect(r2.duplicate).toBeUndefined();
    expect(r3).toMatchObject({ success: true, duplicate: true, eventId: r2.eventId });
    expect(r4.duplicate).toBeUndefined();
    expect(r5).toMatchObject({ success: false, status: 400, code: 'VALIDATION_ERROR' });
    await waitForMintsSettled(platform);
    // order-1, order-2 and order-3: three rewards of 40.
    expect(await tokenBalance(platform, before.body.walletAddress)).toBe(120n);
  });
});

describe('externalId across processes (the unique index)', () => {
  it('makes a second transaction claiming the same key wait, then see it taken; a released key is free again', async () => {
    const { db } = platform.deps;
    const key = { brandId: brand.brandId, eventType: 'post_mention', externalId: 'replica-race' };
    const now = platform.clock.now();
    let releaseFirst!: () => void;
    const firstHolding = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const order: string[] = [];
    const first = db.transaction().execute(async (trx) => {
      const claimed = await claimExternalIds(trx, [{ ...key, eventId: randomUUID() }], now);
      order.push('first claimed');
      await firstHolding;
      order.push('first commits');
      return claimed.size;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = db.transaction().execute(async (trx) => {
      const claimed = await claimExternalIds(trx, [{ ...key, eventId: randomUUID() }], now);
      order.push('second claimed');
      return claimed.size;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    releaseFirst();
    expect(await first).toBe(1);
    expect(await second).toBe(0);
    expect(order).toEqual(['first claimed', 'first commits', 'second claimed']);

    // A transaction that claims and releases (its event was refused) leaves the key to the next one.
    const other = { ...key, externalId: 'replica-released' };
    await db.transaction().execute(async (trx) => {
      await claimExternalIds(trx, [{ ...other, eventId: randomUUID() }], now);
      await settleExternalIds(trx, { owners: [], released: [other] });
    });
    const again = await db
      .transaction()
      .execute(async (trx) => claimExternalIds(trx, [{ ...other, eventId: randomUUID() }], now));
    expect(again.size).toBe(1);
  });
});
