import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';

// Reversals as the operator (issue 35 §2): POST /admin/brands/:brandId/reversals calls the same reversal
// service as the signed API (same answer, a reversalId applied once, another brand's event is a 404), and
// `pts reversal create` drives it. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'reversals-admin-route-token-0123456789ab';
let platform: TestPlatform;
let brand: CreatedBrand;
let other: CreatedBrand;
let n = 0;

const adminPost = async (brandId: string, body: unknown, token = ADMIN_TOKEN) => {
  const response = await fetch(`${platform.url}/admin/brands/${brandId}/reversals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: string; duplicate?: boolean } & Record<string, unknown>,
  };
};

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: ADMIN_TOKEN },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** A purchase worth `amount` USD (2 pts per $1), rewarded and minted; its event id and the member's wallet. */
async function purchase(amount: string, extra: Record<string, unknown> = {}) {
  const response = await platform.signedPost(
    '/pts-api/manual-event',
    {
      brandId: brand.brandId,
      eventType: 'purchase',
      userEmail: `admin-refund${++n}@example.com`,
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
  return { eventId: response.body.eventId as string, wallet: mint.wallet_address };
}

const reversalRows = (eventId: string) =>
  platform.deps.db.selectFrom('reward_reversals').select('pts').where('event_id', '=', eventId).execute();

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'Admin Refund Shop', domain: 'admin-refund.example.com' });
  other = await platform.createBrand({ name: 'Other Admin Shop', domain: 'other-admin.example.com' });
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

describe('POST /admin/brands/:brandId/reversals', () => {
  it('reverses by order id and applies the same reversalId once, also 10 at once', async () => {
    const { eventId, wallet } = await purchase('10.00', { externalId: 'admin-order-1' });
    const body = {
      reversalId: 'admin-refund-1',
      eventType: 'purchase',
      externalId: 'admin-order-1',
      value: { amount: '2.50', currency: 'USD' },
    };
    const answers = await Promise.all(Array.from({ length: 10 }, () => adminPost(brand.brandId, body)));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answers.filter((answer) => answer.body.duplicate !== true)).toHaveLength(1);
    const again = await adminPost(brand.brandId, body);
    expect(again.body).toMatchObject({ eventId, requested: 5, duplicate: true, refunded: { amount: '2.50' } });
    expect((await reversalRows(eventId)).map((row) => Number(row.pts))).toEqual([5]);
    await platform.deps.minter.reverse([], { waitMs: 0 });
    expect(await tokenBalance(platform, wallet)).toBe(15n);
  });

  it('answers 404 for another brand’s event, 400 with what to fix, 401 without the admin token', async () => {
    const { eventId } = await purchase('4.00');
    const wrongBrand = await adminPost(other.brandId, { reversalId: 'admin-wrong-brand', eventId });
    expect(wrongBrand.status).toBe(404);
    expect(wrongBrand.body.error).toMatch(/No event with eventId/);
    expect(await reversalRows(eventId)).toEqual([]);
    const neither = await adminPost(brand.brandId, { reversalId: 'admin-neither' });
    expect(neither.status).toBe(400);
    expect(JSON.stringify(neither.body)).toMatch(/name the event to reverse/);
    const tooMuch = await adminPost(brand.brandId, {
      reversalId: 'admin-too-much',
      eventId,
      value: { amount: '4.01', currency: 'USD' },
    });
    expect(tooMuch.status).toBe(400);
    const noToken = await adminPost(brand.brandId, { reversalId: 'admin-no-token', eventId }, 'wrong-token');
    expect(noToken.status).toBe(401);
  });

  it('is in the OpenAPI document with its request and answer', async () => {
    const docs = await platform.get('/openapi.json');
    const operation = docs.body.paths['/admin/brands/{brandId}/reversals']?.post;
    expect(operation).toBeDefined();
    expect(JSON.stringify(operation)).toContain('AdminReversalRequest');
    expect(JSON.stringify(operation)).toContain('ReversalResponse');
  });
});

describe('pts reversal create', () => {
  it('reverses part of an event with --json, then in full with the human answer, a repeat applied once', async () => {
    const { eventId, wallet } = await purchase('6.00');
    const base = ['reversal', 'create', '--brand', brand.brandId, '--event-id', eventId];
    const part = await pts([...base, '--reversal-id', 'cli-1', '--amount', '1.50', '--currency', 'USD', '--json']);
    expect(part.code, part.stderr).toBe(0);
    expect(JSON.parse(part.stdout)).toMatchObject({ eventId, requested: 3, refunded: { amount: '1.50' } });
    const repeat = await pts([...base, '--reversal-id', 'cli-1', '--amount', '1.50', '--currency', 'USD', '--json']);
    expect(JSON.parse(repeat.stdout)).toMatchObject({ requested: 3, duplicate: true });
    const rest = await pts([...base, '--reversal-id', 'cli-2']);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain(`Reversal cli-2 of purchase event ${eventId} (in full)`);
    expect(rest.stdout).toContain('takes back 9 pts');
    expect((await reversalRows(eventId)).map((row) => Number(row.pts)).sort()).toEqual([3, 9]);
    await platform.deps.minter.reverse([], { waitMs: 0 });
    expect(await tokenBalance(platform, wallet)).toBe(0n);
  });

  it('says what is wrong: an unknown event, an amount without currency, the event named twice', async () => {
    const unknown = await pts([
      'reversal',
      'create',
      '--brand',
      brand.brandId,
      '--reversal-id',
      'cli-unknown',
      '--event-type',
      'purchase',
      '--external-id',
      'no-such-order',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No event with eventType purchase with externalId no-such-order/);
    const base = ['reversal', 'create', '--brand', brand.brandId, '--reversal-id', 'cli-bad'];
    const noCurrency = await pts([...base, '--event-id', '00000000-0000-4000-8000-000000000000', '--amount', '1']);
    expect(noCurrency.code).toBe(2);
    expect(noCurrency.stderr).toMatch(/--amount needs --currency/);
    const twice = await pts([...base, '--event-id', 'x', '--external-id', 'y']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/either by --event-id or by --event-type and --external-id/);
    const none = await pts([...base]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--event-id/);
  });
});
