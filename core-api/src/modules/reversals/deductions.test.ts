import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// Manual deductions (issue 33 §11, issue 35 §2): an admin or owner takes pts back from a member with a reason,
// through the reversal path — one ledger entry of kind `deduction`, burned by reverseBatch, audited with the
// person, once per idempotency key (also 10 at once), never above what the member holds spendable (also under
// parallel deductions). The member page lists reversals beside their event, and the open debt. Runs on PGlite,
// and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'deductions-admin-token-0123456789abcdef';
let platform: TestPlatform;
let brand: { brandId: string; securityKey: string };
let other: { brandId: string; securityKey: string };
let owner: PortalBrowser;
let admin: PortalBrowser;
let viewer: PortalBrowser;
let otherOwner: PortalBrowser;
let n = 0;

/** A member with `times` × 100 pts earned and minted; their identity key and wallet. */
async function member(times = 1): Promise<{ email: string; wallet: string; eventId: string }> {
  const email = `deduct${++n}@customer.example`;
  let wallet = '';
  let eventId = '';
  for (let i = 0; i < times; i++) {
    platform.clock.advance(61_000);
    const earned = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'earn', userEmail: email },
      brand.securityKey,
    );
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    wallet = earned.body.walletAddress;
    eventId = earned.body.eventId;
  }
  await waitForMintsSettled(platform);
  return { email, wallet, eventId };
}

const deductPath = (email: string, brandId = brand.brandId) =>
  `/brands/${brandId}/loyalty-members/${encodeURIComponent(email)}/deductions`;
const profile = (email: string) =>
  owner.request('GET', `/brands/${brand.brandId}/loyalty-members/${encodeURIComponent(email)}`);

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_ADMIN_TOKEN: ADMIN_TOKEN,
    PTS_TRUST_PROXY: 'true',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
  });
  const rules = [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }];
  brand = await platform.createBrand({ name: 'Deduct Shop', domain: 'deduct.example.com', rules });
  other = await platform.createBrand({ name: 'Other Shop', domain: 'other-deduct.example.com', rules });
  owner = await portalMember(platform, brand.brandId, 'owner@deduct.example.com', 'owner');
  admin = await portalMember(platform, brand.brandId, 'admin@deduct.example.com', 'admin');
  viewer = await portalMember(platform, brand.brandId, 'viewer@deduct.example.com', 'viewer');
  otherOwner = await portalMember(platform, other.brandId, 'owner@other-deduct.example.com', 'owner');
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('manual deduction', () => {
  it('takes pts back through the reversal path: burned on chain, off the ledger, audited with the person', async () => {
    const { email, wallet, eventId } = await member(2);
    expect(await tokenBalance(platform, wallet as `0x${string}`)).toBe(200n);
    const answer = await admin.request('POST', deductPath(email), {
      amount: 30,
      reason: 'Duplicate account bonus',
      idempotencyKey: 'deduct-first',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      success: true,
      deduction: {
        kind: 'deduction',
        eventId: null,
        requested: 30,
        taken: 30,
        debt: 0,
        reason: 'Duplicate account bonus',
        actor: 'portal:admin@deduct.example.com',
        status: 'confirmed',
        reversalId: 'deduction:deduct-first',
      },
    });
    expect(answer.body.deduction.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await tokenBalance(platform, wallet as `0x${string}`)).toBe(170n);

    const page = await profile(email);
    expect(page.status).toBe(200);
    expect(page.body.figures).toMatchObject({ onChain: 170, earned: { total: 170, reversed: 30 }, debt: 0 });
    expect(page.body.debt).toBe(0);
    expect(page.body.reversals).toEqual([expect.objectContaining({ kind: 'deduction', requested: 30, taken: 30 })]);

    // A refund of one event lists beside it (its eventId), after the deduction.
    platform.clock.advance(1_000);
    const refund = await platform.signedPost(
      '/pts-api/reversals',
      { brandId: brand.brandId, reversalId: `refund-${n}`, eventId },
      brand.securityKey,
    );
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    const after = await profile(email);
    expect(after.body.reversals.map((r: { kind: string; eventId: string | null }) => [r.kind, r.eventId])).toEqual([
      ['reversal', eventId],
      ['deduction', null],
    ]);
    expect(after.body.figures).toMatchObject({ onChain: 70, earned: { total: 70, reversed: 130 } });
    const totals = await platform.deps.db
      .selectFrom('brand_member_totals')
      .select(['earned', 'balance'])
      .where('brand_id', '=', brand.brandId)
      .where('member', '=', email)
      .executeTakeFirstOrThrow();
    expect([Number(totals.earned), Number(totals.balance)]).toEqual([70, 70]);

    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'member.deduct')
      .orderBy('id')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'portal:admin@deduct.example.com', brand_id: brand.brandId });
    expect(audit[0]?.details).toMatchObject({ amount: 30, reason: 'Duplicate account bonus', userKey: email });
  });

  it('deducts once for 10 parallel identical requests, and 409 when the key is reused for another amount', async () => {
    const { email, wallet } = await member();
    const body = { amount: 25, reason: 'Chargeback on order 77', idempotencyKey: 'deduct-parallel' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => owner.request('POST', deductPath(email), body)));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answers.filter((answer) => answer.body.replayed !== true)).toHaveLength(1);
    const rows = await platform.deps.db
      .selectFrom('reward_reversals')
      .select('pts')
      .where('reversal_id', '=', 'deduction:deduct-parallel')
      .execute();
    expect(rows.map((row) => Number(row.pts))).toEqual([25]);
    await platform.deps.minter.reverse([], { waitMs: 0 });
    expect(await tokenBalance(platform, wallet as `0x${string}`)).toBe(75n);
    const reused = await owner.request('POST', deductPath(email), { ...body, amount: 26 });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatch(/already used for another deduction/);
  });

  it('never deducts more than the member holds when different deductions race', async () => {
    const { email, wallet } = await member();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        owner.request('POST', deductPath(email), { amount: 30, reason: 'Race', idempotencyKey: `race-${n}-${i}` }),
      ),
    );
    const ok = answers.filter((answer) => answer.status === 200);
    expect(ok).toHaveLength(3);
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/Cannot deduct 30 pts: the member holds 10 pts/);
    }
    await platform.deps.minter.reverse([], { waitMs: 0 });
    expect(await tokenBalance(platform, wallet as `0x${string}`)).toBe(10n);
  });

  it('refuses above what the member holds with a 400 that says so, and a missing reason', async () => {
    const { email } = await member();
    const tooMuch = await owner.request('POST', deductPath(email), { amount: 101, reason: 'Too much' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error).toMatch(/Cannot deduct 101 pts: the member holds 100 pts .*it is not a refund/);
    const noReason = await owner.request('POST', deductPath(email), { amount: 1 });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error).toMatch(/reason/);
    const zero = await owner.request('POST', deductPath(email), { amount: 0, reason: 'Nothing' });
    expect(zero.status).toBe(400);
    const unknown = await owner.request('POST', deductPath('nobody@customer.example'), { amount: 1, reason: 'Who' });
    expect(unknown.status).toBe(404);
  });

  it('a viewer is refused with 403 before the body is read, another brand with 404; nothing changes', async () => {
    const { email } = await member();
    const before = await platform.deps.db.selectFrom('reward_reversals').select('id').execute();
    expect((await viewer.request('POST', deductPath(email), { amount: 1, reason: 'Viewer' })).status).toBe(403);
    expect((await viewer.request('POST', deductPath(email), { amount: 'x' })).status).toBe(403);
    expect((await otherOwner.request('POST', deductPath(email), { amount: 1, reason: 'Mole' })).status).toBe(404);
    const throughOwn = await otherOwner.request('POST', deductPath(email, other.brandId), {
      amount: 1,
      reason: 'Mole',
    });
    expect(throughOwn.status).toBe(404);
    const noCsrf = await owner.request('POST', deductPath(email), { amount: 1, reason: 'Forged' }, { csrf: false });
    expect(noCsrf.status).toBe(403);
    expect(await platform.deps.db.selectFrom('reward_reversals').select('id').execute()).toHaveLength(before.length);
  });

  it('the admin API deducts the same way, audited as admin', async () => {
    const { email, wallet } = await member();
    const answer = await platform.post(
      `/admin/brands/${brand.brandId}/deductions`,
      { member: email, amount: 40, reason: 'Support correction', idempotencyKey: 'admin-deduct' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.deduction).toMatchObject({ requested: 40, actor: 'admin', kind: 'deduction' });
    expect(await tokenBalance(platform, wallet as `0x${string}`)).toBe(60n);
    const unknownBrand = await platform.post(
      `/admin/brands/${brand.brandId.slice(0, -1)}${brand.brandId.endsWith('0') ? '1' : '0'}/deductions`,
      { member: email, amount: 1, reason: 'Nope' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(unknownBrand.status).toBe(404);
    const docs = await platform.get('/openapi.json');
    expect(JSON.stringify(docs.body.paths['/admin/brands/{brandId}/deductions'])).toContain('MemberDeductionResponse');
    expect(
      JSON.stringify(docs.body.paths['/portal/api/brands/{brandId}/loyalty-members/{userKey}/deductions']),
    ).toContain('MemberDeductionRequest');
  });
});
