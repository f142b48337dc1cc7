import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';

// Reversals (issue 35 §2): POST /pts-api/reversals takes an event's reward back on chain, answers what was
// taken and what became debt, applies a reversalId once (also 20 at once), and refuses what it cannot do with
// a 4xx that says what to fix. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'reversals-admin-token-0123456789abcdef';
let platform: TestPlatform;
let brand: CreatedBrand;
let other: CreatedBrand;
let n = 0;
const nextEmail = () => `refund${++n}@example.com`;
const nextId = () => `refund-${++n}`;

const reverse = (body: Record<string, unknown>, key = brand.securityKey) =>
  platform.signedPost('/pts-api/reversals', { brandId: brand.brandId, reversalId: nextId(), ...body }, key);

/** A purchase worth `amount` USD (2 pts per $1), rewarded and minted; its event id and the member's wallet. */
async function purchase(amount: string, extra: Record<string, unknown> = {}) {
  const response = await platform.signedPost(
    '/pts-api/manual-event',
    {
      brandId: brand.brandId,
      eventType: 'purchase',
      userEmail: nextEmail(),
      value: { amount, currency: 'USD' },
      ...extra,
    },
    brand.securityKey,
  );
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await waitForMintsSettled(platform);
  const mint = await platform.deps.db
    .selectFrom('reward_mints')
    .select('wallet_address')
    .where('event_id', '=', response.body.eventId)
    .executeTakeFirstOrThrow();
  return { eventId: response.body.eventId as string, wallet: mint.wallet_address, reward: response.body.rewardAmount };
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'Refund Shop', domain: 'refund.example.com' });
  other = await platform.createBrand({ name: 'Other Shop', domain: 'other.example.com' });
  const rule = await fetch(`${platform.url}/admin/brands/${brand.brandId}/rules/purchase`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rate: { pts: 2, per: '1.00', currency: 'USD' }, cooldownHours: 0, maxClaims: -1 }),
  });
  expect(rule.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('POST /pts-api/reversals', () => {
  it('reverses a whole event: burns its reward from the wallet and answers taken, no debt', async () => {
    const { eventId, wallet, reward } = await purchase('12.50');
    expect(reward).toBe(25);
    expect(await tokenBalance(platform, wallet)).toBe(25n);
    const answer = await reverse({ eventId });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ eventId, eventType: 'purchase', requested: 25, taken: 25, debt: 0 });
    expect(answer.body.status).toBe('confirmed');
    expect(answer.body.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await tokenBalance(platform, wallet)).toBe(0n);
  });

  it('names the event by eventType and externalId, and takes back the refunded share, never more in all', async () => {
    const { eventId, wallet } = await purchase('10.00', { externalId: 'order-1001' });
    expect(await tokenBalance(platform, wallet)).toBe(20n);
    // $3.33 of $10 refunded: floor(20 × 333/1000) = 6 pts.
    const first = await reverse({
      eventType: 'purchase',
      externalId: 'order-1001',
      value: { amount: '3.33', currency: 'USD' },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      eventId,
      requested: 6,
      taken: 6,
      debt: 0,
      refunded: { amount: '3.33', currency: 'USD' },
    });
    // $3.33 more: floor(20 × 666/1000) = 13 in all, 7 now.
    const second = await reverse({ eventId, value: { amount: '3.33', currency: 'USD' } });
    expect(second.body).toMatchObject({ requested: 7 });
    // The rest ($3.34) takes what is left: 20 in all, never 21.
    const third = await reverse({ eventId, value: { amount: '3.34', currency: 'USD' } });
    expect(third.body).toMatchObject({ requested: 7 });
    expect(await tokenBalance(platform, wallet)).toBe(0n);
    const more = await reverse({ eventId });
    expect(more.status).toBe(409);
    expect(more.body.error).toMatch(/already taken back/);
  });

  it('answers the first result for the same reversalId, and 409 when it is reused for another refund', async () => {
    const { eventId, wallet } = await purchase('5.00');
    const body = { reversalId: 'refund-once', eventId, value: { amount: '2.50', currency: 'USD' } };
    const first = await reverse(body);
    expect(first.body).toMatchObject({ requested: 5, taken: 5 });
    // A new request (its own signature; an identical signed retry gets the stored answer byte for byte).
    const again = await reverse({ ...body, attempt: 2 });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ requested: 5, taken: 5, duplicate: true, createdAt: first.body.createdAt });
    expect(await tokenBalance(platform, wallet)).toBe(5n);
    const reused = await reverse({ ...body, value: { amount: '1.00', currency: 'USD' } });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatch(/already used for another reversal/);
  });

  it('applies 20 parallel requests with the same reversalId once', async () => {
    const { eventId, wallet } = await purchase('8.00');
    const body = { reversalId: 'refund-parallel', eventId, value: { amount: '4.00', currency: 'USD' } };
    // Twenty distinct requests (each its own signature), not one request replayed.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, attempt) => reverse({ ...body, attempt })));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answers.filter((answer) => answer.body.duplicate !== true)).toHaveLength(1);
    const rows = await platform.deps.db
      .selectFrom('reward_reversals')
      .select('pts')
      .where('event_id', '=', eventId)
      .execute();
    expect(rows.map((row) => Number(row.pts))).toEqual([8]);
    await platform.deps.minter.reverse([], { waitMs: 0 });
    expect(await tokenBalance(platform, wallet)).toBe(8n);
  });

  it('never takes more than an event paid when 20 different refunds race', async () => {
    const { eventId, wallet } = await purchase('10.00');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => reverse({ eventId, value: { amount: '1.00', currency: 'USD' } })),
    );
    const ok = answers.filter((answer) => answer.status === 200);
    // $10 holds ten $1 refunds; the other ten are above what is left of the value.
    expect(ok).toHaveLength(10);
    expect(ok.reduce((sum, answer) => sum + answer.body.requested, 0)).toBe(20);
    // Refused once the value is all refunded (400) or every pt was taken back (409).
    for (const answer of answers.filter((a) => a.status !== 200)) expect([400, 409]).toContain(answer.status);
    expect(await tokenBalance(platform, wallet)).toBe(0n);
  });

  it('refuses with a 4xx that says what to fix', async () => {
    const { eventId } = await purchase('4.00');
    const unknown = await reverse({ eventId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/No event with eventId/);
    const unknownOrder = await reverse({ eventType: 'purchase', externalId: 'no-such-order' });
    expect(unknownOrder.status).toBe(404);
    const otherBrand = await platform.signedPost(
      '/pts-api/reversals',
      { brandId: other.brandId, reversalId: nextId(), eventId },
      other.securityKey,
    );
    expect(otherBrand.status).toBe(404);
    const tooMuch = await reverse({ eventId, value: { amount: '4.01', currency: 'USD' } });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error).toMatch(/at most what is left of the event's value \(400 minor units\)/);
    const euros = await reverse({ eventId, value: { amount: '1.00', currency: 'EUR' } });
    expect(euros.status).toBe(400);
    expect(euros.body.error).toMatch(/send the refund in USD/);
    const both = await reverse({ eventId, eventType: 'purchase', externalId: 'x' });
    expect(both.status).toBe(400);
    const neither = await reverse({});
    expect(neither.status).toBe(400);
    const unsigned = await platform.post('/pts-api/reversals', { brandId: brand.brandId, reversalId: 'x', eventId });
    expect(unsigned.status).toBe(401);
    const wrongKey = await reverse({ eventId }, other.securityKey);
    expect(wrongKey.status).toBe(401);
  });

  it('is in the OpenAPI document with its request and answer', async () => {
    const docs = await platform.get('/openapi.json');
    const operation = docs.body.paths['/pts-api/reversals']?.post;
    expect(operation).toBeDefined();
    expect(JSON.stringify(operation)).toContain('ReversalRequest');
    expect(JSON.stringify(operation)).toContain('ReversalResponse');
  });

  it('shows everywhere from the one ledger: totals, member ledger, boards, achievements, reward.reversed', async () => {
    // An active endpoint (its URL is never called here: the notice is read from the outbox).
    await platform.deps.db
      .insertInto('webhook_endpoints')
      .values({
        brand_id: brand.brandId,
        url: 'https://hooks.example.com/pts',
        secret_encrypted: 'unused',
        active: true,
      })
      .execute();
    const { eventId } = await purchase('30.00');
    const member = await platform.deps.db
      .selectFrom('events')
      .select('user_email')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    const email = member.user_email;
    const board = () =>
      platform.deps.db
        .selectFrom('leaderboard_scores')
        .select('value')
        .where('brand_id', '=', brand.brandId)
        .where('metric', '=', 'pts_earned')
        .where('period', '=', 'all_time')
        .where('platform', '=', '*')
        .where('user_key', '=', email)
        .executeTakeFirst();
    const totals = () =>
      platform.deps.db
        .selectFrom('brand_member_totals')
        .select(['earned', 'balance'])
        .where('brand_id', '=', brand.brandId)
        .where('member', '=', email)
        .executeTakeFirstOrThrow();
    const progress = () =>
      platform.deps.db
        .selectFrom('achievement_progress')
        .select('value')
        .where('brand_id', '=', brand.brandId)
        .where('user_key', '=', email)
        .where('type', '=', 'tokens_earned')
        .executeTakeFirst();
    expect(Number((await board())?.value)).toBe(60);
    expect(Number((await totals()).earned)).toBe(60);

    const answer = await reverse({ eventId, value: { amount: '10.00', currency: 'USD' } });
    expect(answer.body).toMatchObject({ requested: 20, taken: 20, debt: 0 });

    expect(Number((await totals()).earned)).toBe(40);
    expect(Number((await totals()).balance)).toBe(40);
    const ledger = await readMemberLedger(platform.deps.db, brand.brandId, { identityKeys: [email] } as never);
    expect(ledger.earned).toBe(40n);
    expect(ledger.reversed).toBe(20n);
    expect(ledger.byEventType).toEqual([{ eventType: 'purchase', count: 1, amount: 40n }]);
    expect(Number((await board())?.value)).toBe(40);
    const tokens = await progress();
    if (tokens) expect(Number(tokens.value)).toBe(40);
    const notices = await platform.deps.db
      .selectFrom('webhook_deliveries')
      .select(['type', 'body'])
      .where('brand_id', '=', brand.brandId)
      .where('type', '=', 'reward.reversed')
      .execute();
    expect(notices).toHaveLength(1);
    expect(JSON.parse(notices[0]!.body).data).toMatchObject({
      eventId,
      requested: 20,
      taken: 20,
      debt: 0,
      refunded: { amount: '10.00', currency: 'USD' },
      email,
    });
  });
});
