import { randomUUID } from 'node:crypto';
import { type CreatedBrand, signRequest } from '@pts/shared';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { perkNFTAbi } from '../../chain/artifacts/index.ts';
import { relayContractsOf } from '../../chain/contract-addresses.ts';
import {
  CONFIRMATION_CODE_PATTERN,
  createRedemptionService,
  custodialKeyOf,
  type RedemptionDeps,
} from './redemption.service.ts';

// POST /services/perks/redeem end to end: the real app, real minter and relayer, our contracts on anvil.
// Users earn their tokens through real brand-signed manual events (rule: 100 tokens per event).

let platform: TestPlatform;
let brand: CreatedBrand;
let otherBrand: CreatedBrand;
let userCount = 0;

const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

async function createPerk(body: Record<string, unknown>, owner = brand) {
  const created = await platform.post(
    '/admin/perks',
    { brandId: owner.brandId, name: `Perk ${randomUUID().slice(0, 8)}`, ...body },
    admin(),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.perk as { perkId: number; uuid: string; cost: number; name: string; category: string };
}

/** A new user who earned `100 × times` confirmed tokens; returns the identifier and wallet. */
async function earningUser(times = 1): Promise<{ email: string; wallet: Address }> {
  const email = `redeemer${++userCount}@example.com`;
  let wallet = '' as Address;
  for (let i = 0; i < times; i++) {
    platform.clock.advance(1_000);
    const res = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'earn', userEmail: email, domain: 'shop.example.com', metadata: { i } },
      brand.securityKey,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    wallet = res.body.walletAddress;
  }
  await waitForMintsSettled(platform);
  expect(await tokenBalance(platform, wallet)).toBe(100n * BigInt(times));
  return { email, wallet };
}

function redeem(body: Record<string, unknown>, securityKey = brand.securityKey) {
  platform.clock.advance(1_000); // a fresh timestamp: identical signed requests would be replays
  return platform.signedPost('/services/perks/redeem', { brandId: brand.brandId, ...body }, securityKey);
}

/** The service as the route builds it, with overrides (a short wait, another identity provider). */
function service(overrides: Partial<RedemptionDeps> = {}) {
  return createRedemptionService({
    db: platform.deps.db,
    clock: platform.clock,
    relayer: platform.deps.relayer,
    publicClient: platform.deps.publicClient,
    contracts: relayContractsOf(platform.deps),
    constraints: platform.deps.constraints,
    custodialKey: custodialKeyOf(platform.deps.wallets),
    identityProvider: 'local',
    waitMs: 15_000,
    ...overrides,
  });
}

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(platform.deps.chain.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

const perkBalance = (wallet: Address, perkId: number) =>
  platform.deps.publicClient.readContract({
    address: platform.deps.chain.contracts.perkNft as Address,
    abi: perkNFTAbi,
    functionName: 'balanceOf',
    args: [wallet, BigInt(perkId)],
  });

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  brand = await platform.createBrand({
    domain: 'shop.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  otherBrand = await platform.createBrand({ name: 'Other', domain: 'other.example.com' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('POST /services/perks/redeem', () => {
  it('pays on chain and answers a confirmation code and the perk; activity and the claims board follow', async () => {
    const perk = await createPerk({ cost: 30, maxPerUser: 1, category: 'merch' });
    const user = await earningUser();
    const catalogue = await platform.get(`/services/perks/${brand.brandId}`);
    expect(catalogue.body.perks.find((p: { id: number }) => p.id === perk.perkId).uuid).toBe(perk.uuid);

    const res = await redeem({ perkId: perk.uuid, userIdentifier: user.email.toUpperCase(), platform: 'discord' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      status: 'confirmed',
      perk: { id: perk.uuid, perkId: perk.perkId, name: perk.name, cost: 30, category: 'merch' },
      walletAddress: user.wallet.toLowerCase(),
    });
    expect(res.body.confirmationCode).toMatch(CONFIRMATION_CODE_PATTERN);
    expect(res.body.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await tokenBalance(platform, user.wallet)).toBe(70n);
    expect(await perkBalance(user.wallet, perk.perkId)).toBe(1n);

    const activity = await platform.deps.db
      .selectFrom('activity_log')
      .select(['kind', 'amount', 'platform', 'detail'])
      .where('user_key', '=', user.email)
      .where('kind', 'in', ['claimed', 'spent'])
      .orderBy('kind')
      .execute();
    expect(activity.map((row) => [row.kind, Number(row.amount), row.platform])).toEqual([
      ['claimed', 0, 'discord'],
      ['spent', 30, 'discord'],
    ]);
    expect(activity[0]?.detail).toMatchObject({ perkId: perk.perkId, confirmationCode: res.body.confirmationCode });

    const path = `/services/leaderboard/${brand.brandId}?metric=claims&period=all`;
    const board = await platform.get(
      path,
      signRequest({
        securityKey: brand.securityKey,
        method: 'GET',
        pathWithQuery: path,
        body: '',
        timestamp: Math.floor(platform.clock.now().getTime() / 1000),
      }),
    );
    expect(board.status, JSON.stringify(board.body)).toBe(200);
    expect(board.body.leaderboard).toContainEqual(expect.objectContaining({ userIdentifier: user.email, value: 1 }));

    // Limit reached: maxPerUser 1.
    const again = await redeem({ perkId: perk.uuid, userIdentifier: user.email });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({
      success: false,
      code: 'CLAIM_LIMIT_REACHED',
      details: { currentClaims: 1, maxPerUser: 1 },
    });
    expect(await tokenBalance(platform, user.wallet)).toBe(70n);
  }, 60_000);

  it('accepts the integer id as a number or digits as well as the uuid', async () => {
    const perk = await createPerk({ cost: 10, maxPerUser: 0 });
    const user = await earningUser();
    for (const perkId of [perk.perkId, String(perk.perkId), perk.uuid.toUpperCase()]) {
      const res = await redeem({ perkId, userIdentifier: user.email });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.perk.id).toBe(perk.uuid);
    }
    expect(await tokenBalance(platform, user.wallet)).toBe(70n);
    expect(await perkBalance(user.wallet, perk.perkId)).toBe(3n);
  }, 60_000);

  it('a platform identity linked to an email account redeems from the account wallet', async () => {
    const perk = await createPerk({ cost: 40, maxPerUser: 1 });
    const owner = await earningUser();
    const discord = `discord_${randomUUID().slice(0, 8)}@pts.local`;
    platform.clock.advance(1_000);
    const linked = await platform.signedPost(
      '/services/link/email',
      { brandId: brand.brandId, userIdentifier: discord, email: owner.email },
      brand.securityKey,
    );
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.walletAddress.toLowerCase()).toBe(owner.wallet.toLowerCase());

    const res = await redeem({ perkId: perk.uuid, userIdentifier: discord });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'confirmed', walletAddress: owner.wallet.toLowerCase() });
    expect(await tokenBalance(platform, owner.wallet)).toBe(60n);
    expect(await perkBalance(owner.wallet, perk.perkId)).toBe(1n);
    // One person, one per-user allowance: the account's own email cannot take a second one.
    const again = await redeem({ perkId: perk.uuid, userIdentifier: owner.email });
    expect(again.status).toBe(409);
    expect(await tokenBalance(platform, owner.wallet)).toBe(60n);
  });

  it('says how much is missing when the balance does not cover the cost', async () => {
    const perk = await createPerk({ cost: 150 });
    const user = await earningUser();
    const res = await redeem({ perkId: perk.uuid, userIdentifier: user.email });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body).toMatchObject({
      code: 'INSUFFICIENT_BALANCE',
      details: { balance: 100, cost: 150, missing: 50 },
    });
    expect(res.body.error).toContain('50 more needed');
    expect(await tokenBalance(platform, user.wallet)).toBe(100n);
  }, 60_000);

  it('redeems while the platform clock runs hours behind the chain: the permit deadline follows block time', async () => {
    const perk = await createPerk({ cost: 10 });
    const user = await earningUser();
    const restore = platform.clock.now();
    // Blocks are stamped with the wall clock; a deadline taken from a clock three hours behind it would have
    // passed on chain before the claim was mined (the claim reverts with InsufficientAllowance).
    platform.clock.set(new Date(Date.now() - 3 * 3_600_000));
    try {
      const res = await redeem({ perkId: perk.perkId, userIdentifier: user.email });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await tokenBalance(platform, user.wallet)).toBe(90n);
    } finally {
      platform.clock.set(restore);
    }
  }, 60_000);

  it('answers SOLD_OUT when the supply is gone', async () => {
    const perk = await createPerk({ cost: 10, maxSupply: 1 });
    const first = await earningUser();
    const second = await earningUser();
    expect((await redeem({ perkId: perk.perkId, userIdentifier: first.email })).status).toBe(200);
    const res = await redeem({ perkId: perk.perkId, userIdentifier: second.email });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body).toMatchObject({ code: 'SOLD_OUT', details: { maxSupply: 1, totalClaimed: 1 } });
    expect(await tokenBalance(platform, second.wallet)).toBe(100n);
  }, 60_000);

  it('refuses with the failing constraint when the user is not eligible', async () => {
    const perk = await createPerk({ cost: 10 });
    const added = await platform.post(
      `/admin/perks/${perk.perkId}/constraints`,
      { kind: 'min_balance', amount: 500 },
      admin(),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const user = await earningUser();
    const res = await redeem({ perkId: perk.uuid, userIdentifier: user.email });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body).toMatchObject({ code: 'NOT_ELIGIBLE', details: { reason: 'not_eligible' } });
    expect(res.body.details.failed).toEqual([expect.objectContaining({ kind: 'min_balance' })]);
    expect(await tokenBalance(platform, user.wallet)).toBe(100n);
    const rows = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select('status')
      .where('user_key', '=', user.email)
      .execute();
    expect(rows.map((row) => row.status)).toEqual(['failed']);
  }, 60_000);

  it('10 concurrent redemptions by a user with balance for 2: exactly 2 succeed, nothing overspent', async () => {
    const perk = await createPerk({ cost: 50, maxPerUser: 0 });
    const user = await earningUser();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => redeem({ perkId: perk.uuid, userIdentifier: user.email })),
    );
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses, JSON.stringify(responses.map((res) => res.body))).toEqual([
      200, 200, 409, 409, 409, 409, 409, 409, 409, 409,
    ]);
    for (const res of responses.filter((r) => r.status === 409)) expect(res.body.code).toBe('INSUFFICIENT_BALANCE');
    const codes = responses.filter((r) => r.status === 200).map((r) => r.body.confirmationCode);
    expect(new Set(codes).size).toBe(2);
    // The refusals came from the reservation (under the lock), not from a claim the chain refused.
    const rows = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select('status')
      .where('user_key', '=', user.email)
      .execute();
    expect(rows.map((row) => row.status)).toEqual(['confirmed', 'confirmed']);
    expect(await tokenBalance(platform, user.wallet)).toBe(0n);
    expect(await perkBalance(user.wallet, perk.perkId)).toBe(2n);
  }, 90_000);

  it('10 concurrent redemptions of a one-per-user perk: exactly 1 succeeds', async () => {
    const perk = await createPerk({ cost: 10, maxPerUser: 1 });
    const user = await earningUser();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => redeem({ perkId: perk.perkId, userIdentifier: user.email })),
    );
    expect(responses.filter((res) => res.status === 200)).toHaveLength(1);
    expect(responses.filter((res) => res.body.code === 'CLAIM_LIMIT_REACHED')).toHaveLength(9);
    const rows = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select('status')
      .where('user_key', '=', user.email)
      .execute();
    expect(rows.map((row) => row.status)).toEqual(['confirmed']);
    expect(await tokenBalance(platform, user.wallet)).toBe(90n);
  }, 90_000);

  it('a repeated idempotency key answers the first redemption and spends nothing (ten retries, fresh signatures)', async () => {
    const perk = await createPerk({ cost: 10, maxPerUser: 0 });
    const user = await earningUser();
    const body = { perkId: perk.uuid, userIdentifier: user.email, idempotencyKey: 'order-1001' };
    const responses = [];
    for (let i = 0; i < 10; i++) responses.push(await redeem(body));
    const [first, ...repeats] = responses;
    expect(first?.status, JSON.stringify(first?.body)).toBe(200);
    expect(first?.body.replayed).toBeUndefined();
    for (const res of repeats) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        replayed: true,
        redemptionId: first?.body.redemptionId,
        confirmationCode: first?.body.confirmationCode,
        transactionHash: first?.body.transactionHash,
        status: 'confirmed',
      });
    }
    expect(await tokenBalance(platform, user.wallet)).toBe(90n);
    expect(await perkBalance(user.wallet, perk.perkId)).toBe(1n);
    // The header is the same key; a new key is a new redemption.
    const header = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId: perk.uuid, userIdentifier: user.email },
      brand.securityKey,
      { 'Idempotency-Key': 'order-1001' },
    );
    expect(header.body).toMatchObject({ replayed: true, redemptionId: first?.body.redemptionId });
    const second = await redeem({ ...body, idempotencyKey: 'order-1002' });
    expect(second.status).toBe(200);
    expect(second.body.redemptionId).not.toBe(first?.body.redemptionId);
    expect(await tokenBalance(platform, user.wallet)).toBe(80n);
  }, 90_000);

  it('10 concurrent identical requests with one idempotency key: one redemption, every answer is it', async () => {
    const perk = await createPerk({ cost: 10, maxPerUser: 0 });
    const user = await earningUser();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        redeem({ perkId: perk.perkId, userIdentifier: user.email, idempotencyKey: 'retry-storm' }),
      ),
    );
    for (const res of responses) expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
    expect(new Set(responses.map((res) => res.body.redemptionId)).size).toBe(1);
    expect(responses.filter((res) => res.body.replayed === true)).toHaveLength(9);
    const rows = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select(['status', 'idempotency_key'])
      .where('user_key', '=', user.email)
      .execute();
    expect(rows).toEqual([{ status: 'confirmed', idempotency_key: 'retry-storm' }]);
    expect(await tokenBalance(platform, user.wallet)).toBe(90n);
    expect(await perkBalance(user.wallet, perk.perkId)).toBe(1n);
  }, 90_000);

  it('an idempotency key reused for another perk is 409; it is scoped to the member; a bad key is 400', async () => {
    const perk = await createPerk({ cost: 10, maxPerUser: 0 });
    const other = await createPerk({ cost: 10, maxPerUser: 0 });
    const alice = await earningUser();
    const bob = await earningUser();
    const first = await redeem({ perkId: perk.uuid, userIdentifier: alice.email, idempotencyKey: 'k-1' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const reused = await redeem({ perkId: other.uuid, userIdentifier: alice.email, idempotencyKey: 'k-1' });
    expect(reused.status, JSON.stringify(reused.body)).toBe(409);
    expect(reused.body).toMatchObject({ code: 'CONFLICT', details: { reason: 'idempotency_key_reused' } });
    expect(reused.body.error).toMatch(/Idempotency key "k-1" was already used/);
    // Bob's k-1 is Bob's own: a new redemption from his wallet, nothing of Alice's is shown.
    const bobs = await redeem({ perkId: perk.uuid, userIdentifier: bob.email, idempotencyKey: 'k-1' });
    expect(bobs.status).toBe(200);
    expect(bobs.body.replayed).toBeUndefined();
    expect(bobs.body.redemptionId).not.toBe(first.body.redemptionId);
    expect(bobs.body.walletAddress).toBe(bob.wallet.toLowerCase());
    expect(await tokenBalance(platform, alice.wallet)).toBe(90n);
    expect(await tokenBalance(platform, bob.wallet)).toBe(90n);
    for (const idempotencyKey of ['', 'has space', 'x'.repeat(129)]) {
      const bad = await redeem({ perkId: perk.uuid, userIdentifier: alice.email, idempotencyKey });
      expect(bad.status, idempotencyKey).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('idempotencyKey');
    }
    const clash = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId: perk.uuid, userIdentifier: alice.email, idempotencyKey: 'k-1' },
      brand.securityKey,
      { 'Idempotency-Key': 'k-2' },
    );
    expect(clash.status).toBe(400);
    expect(clash.body.error).toMatch(/differ/);
  }, 90_000);

  it('refuses unsigned requests, unknown perks, other brands’ perks and users without tokens', async () => {
    const perk = await createPerk({ cost: 1 });
    const user = await earningUser();
    const unsigned = await platform.post('/services/perks/redeem', {
      brandId: brand.brandId,
      perkId: perk.uuid,
      userIdentifier: user.email,
    });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.code).toBe('INVALID_SIGNATURE');
    const wrongKey = await redeem({ perkId: perk.uuid, userIdentifier: user.email }, otherBrand.securityKey);
    expect(wrongKey.status).toBe(401);

    for (const perkId of [randomUUID(), 987_654_321]) {
      const res = await redeem({ perkId, userIdentifier: user.email });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.code).toBe('PERK_NOT_FOUND');
    }
    const foreign = await createPerk({ cost: 1 }, otherBrand);
    expect((await redeem({ perkId: foreign.uuid, userIdentifier: user.email })).status).toBe(404);

    const nobody = await redeem({ perkId: perk.uuid, userIdentifier: 'nobody@example.com' });
    expect(nobody.status).toBe(400);
    expect(nobody.body.code).toBe('NO_WALLET');
    expect(nobody.body.error).toContain('has no tokens yet');

    const bad = await redeem({ perkId: 'abc', userIdentifier: 'not-an-email' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.details)).toContain('perkId');

    const inactive = await createPerk({ cost: 1, active: false });
    const off = await redeem({ perkId: inactive.uuid, userIdentifier: user.email });
    expect(off.status).toBe(409);
    expect(off.body).toMatchObject({ code: 'PERK_UNAVAILABLE', details: { reason: 'inactive' } });
    expect(await tokenBalance(platform, user.wallet)).toBe(100n);
  }, 60_000);

  it('answers 202 pending when the claim is not mined within the wait; confirmed with its activity once mined', async () => {
    const perk = await createPerk({ cost: 40, maxPerUser: 0 });
    const user = await earningUser();
    await rpc('evm_setAutomine', [false]);
    let outcome: Awaited<ReturnType<ReturnType<typeof service>['redeem']>>;
    try {
      outcome = await service({ waitMs: 200 }).redeem({
        brandId: brand.brandId,
        perkId: perk.uuid,
        userIdentifier: user.email,
      });
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    expect(outcome.status).toBe(202);
    expect(outcome.body).toMatchObject({ status: 'pending', perk: { id: perk.uuid } });
    expect(outcome.body.confirmationCode).toMatch(CONFIRMATION_CODE_PATTERN);
    await rpc('evm_mine');
    const deadline = Date.now() + 15_000;
    let status = 'pending';
    while (status === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const row = await platform.deps.db
        .selectFrom('perk_redemptions')
        .select('status')
        .where('id', '=', outcome.body.redemptionId)
        .executeTakeFirstOrThrow();
      status = row.status;
    }
    expect(status).toBe('confirmed');
    const spent = await platform.deps.db
      .selectFrom('activity_log')
      .select('amount')
      .where('user_key', '=', user.email)
      .where('kind', '=', 'spent')
      .execute();
    expect(spent.map((row) => Number(row.amount))).toEqual([40]);
    expect(await tokenBalance(platform, user.wallet)).toBe(60n);
  }, 60_000);

  it('answers 501 when the wallets are not custodial here (Privy)', async () => {
    const perk = await createPerk({ cost: 1 });
    const user = await earningUser();
    const input = { brandId: brand.brandId, perkId: perk.uuid, userIdentifier: user.email };
    for (const overrides of [{ identityProvider: 'privy' }, { custodialKey: undefined }]) {
      await expect(service(overrides).redeem(input)).rejects.toMatchObject({
        code: 'NOT_IMPLEMENTED',
        status: 501,
        details: { reason: 'wallets_not_custodial' },
      });
    }
    expect(await tokenBalance(platform, user.wallet)).toBe(100n);
  }, 60_000);
});
