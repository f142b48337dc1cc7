import { type CreatedBrand, signRequest } from '@pts/shared';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimPerkOnChain, createPerkCollectionOnChain } from '../../../test/perk-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { perkNFTAbi } from '../../chain/artifacts/index.ts';
import { randomWallets } from '../../chain/test-chain.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let otherBrand: CreatedBrand;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RELAYER_WAIT_MS: '15000' });
  brand = await platform.createBrand({ name: 'Perk Brand' });
  otherBrand = await platform.createBrand({ name: 'Other Brand', domain: 'other.example.com' });
});

afterAll(async () => {
  await platform?.stop();
});

function signedGet(path: string, securityKey: string) {
  const headers = signRequest({
    securityKey,
    method: 'GET',
    pathWithQuery: path,
    body: '',
    timestamp: Math.floor(platform.clock.now().getTime() / 1000),
  });
  return platform.get(path, headers);
}

function redeem(body: Record<string, unknown>, securityKey = brand.securityKey) {
  return platform.signedPost('/relayer/redeem-perk', body, securityKey);
}

async function holderWithPerk(chargesPerToken: bigint, claims = 1): Promise<{ user: Address; collectionId: bigint }> {
  const [user] = randomWallets(1) as [Address];
  const collectionId = await createPerkCollectionOnChain(platform, { brand: brand.brandId, chargesPerToken });
  for (let i = 0; i < claims; i++) await claimPerkOnChain(platform, user, collectionId);
  return { user, collectionId };
}

describe('perk charge endpoints', () => {
  it('redeems a charge on chain and reports the status before and after', async () => {
    const { user, collectionId } = await holderWithPerk(3n);
    const statusPath = `/relayer/check-perk-status?brand_id=${brand.brandId}&user_address=${user}&collection_id=${collectionId}`;
    const before = await signedGet(statusPath, brand.securityKey);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      success: true,
      collectionId: Number(collectionId),
      userAddress: user,
      claimed: 1,
      remainingCharges: 3,
      chargesPerToken: 3,
      active: true,
    });

    const response = await redeem({ brand_id: brand.brandId, user_address: user, collection_id: Number(collectionId) });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      success: true,
      status: 'confirmed',
      collectionId: Number(collectionId),
      userAddress: user,
      amount: 1,
      remainingCharges: 2,
    });
    const receipt = await platform.deps.publicClient.getTransactionReceipt({ hash: response.body.transactionHash });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(platform.deps.relayer.address.toLowerCase());
    expect(response.body.gasUsed).toBe(receipt.gasUsed.toString());
    const remaining = await platform.deps.publicClient.readContract({
      address: platform.deps.chain.contracts.perkNft!,
      abi: perkNFTAbi,
      functionName: 'remainingCharges',
      args: [user, collectionId],
    });
    expect(remaining).toBe(2n);

    // A fresh signature (a new second) for the same query: the first one was recorded as used.
    platform.clock.advance(1000);
    const after = await signedGet(statusPath, brand.securityKey);
    expect(after.body.remainingCharges).toBe(2);

    const usage = await platform.deps.relayer.gasByBrand(brand.brandId);
    expect(usage[0]?.transactions).toBeGreaterThanOrEqual(1);
    expect(usage[0]?.gasUsed).toBeGreaterThanOrEqual(receipt.gasUsed);
  });

  it('never spends more charges than exist: 10 concurrent redeems of 3 charges → 3 succeed, 7 get 409', async () => {
    const { user, collectionId } = await holderWithPerk(3n);
    // Ten distinct signatures (identical requests signed in the same second would be refused as replays).
    const now = Math.floor(platform.clock.now().getTime() / 1000);
    const raw = JSON.stringify({ brand_id: brand.brandId, user_address: user, collection_id: Number(collectionId) });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        platform.post('/relayer/redeem-perk', JSON.parse(raw), {
          ...signRequest({
            securityKey: brand.securityKey,
            method: 'POST',
            pathWithQuery: '/relayer/redeem-perk',
            body: raw,
            timestamp: now - index,
          }),
        }),
      ),
    );
    const ok = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status === 409);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(7);
    expect(ok.map((response) => response.body.remainingCharges).sort()).toEqual([0, 1, 2]);
    for (const response of refused) {
      expect(response.body).toMatchObject({
        success: false,
        code: 'INSUFFICIENT_CHARGES',
        details: { remaining: 0, requested: 1 },
      });
    }
    // Only the three successful redemptions were sent: no reverted useCharge burned gas.
    const sent = await platform.deps.db
      .selectFrom('relay_transactions')
      .select(['status'])
      .where('purpose', '=', 'perk-redeem')
      .where('collection_id', '=', collectionId.toString())
      .execute();
    expect(sent.map((row) => row.status)).toEqual(['confirmed', 'confirmed', 'confirmed']);
  });

  it('answers 409 with the remaining charges when asked for more than are left', async () => {
    const { user, collectionId } = await holderWithPerk(2n);
    const response = await redeem({
      brand_id: brand.brandId,
      user_address: user,
      collection_id: Number(collectionId),
      amount: 5,
    });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'INSUFFICIENT_CHARGES', details: { remaining: 2, requested: 5 } });
  });

  it('refuses unsigned, foreign-brand, unknown-collection and malformed requests', async () => {
    const { user, collectionId } = await holderWithPerk(1n);
    const body = { brand_id: brand.brandId, user_address: user, collection_id: Number(collectionId) };

    const unsigned = await platform.post('/relayer/redeem-perk', body);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.code).toBe('UNAUTHORIZED');

    const wrongKey = await redeem(body, otherBrand.securityKey);
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.code).toBe('INVALID_SIGNATURE');

    const foreign = await redeem({ ...body, brand_id: otherBrand.brandId }, otherBrand.securityKey);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('FORBIDDEN');

    const unknown = await redeem({ ...body, collection_id: 987_654_321_012 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('PERK_NOT_FOUND');

    const malformed = await redeem({ brand_id: brand.brandId, user_address: 'nope', collection_id: -1, amount: 0 });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
    expect(malformed.body.details.errors.join(' ')).toMatch(/user_address/);

    const unsignedGet = await platform.get(
      `/relayer/check-perk-status?brand_id=${brand.brandId}&user_address=${user}&collection_id=${collectionId}`,
    );
    expect(unsignedGet.status).toBe(401);
    const badQuery = await signedGet(`/relayer/check-perk-status?brand_id=${brand.brandId}`, brand.securityKey);
    expect(badQuery.status).toBe(400);

    // Nothing was spent by any of them.
    platform.clock.advance(1000);
    const status = await signedGet(
      `/relayer/check-perk-status?brand_id=${brand.brandId}&user_address=${user}&collection_id=${collectionId}`,
      brand.securityKey,
    );
    expect(status.body.remainingCharges).toBe(1);
  });

  it('lists holders page by page with their claims and remaining charges', async () => {
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brand.brandId, chargesPerToken: 2n });
    const users = randomWallets(3) as Address[];
    await claimPerkOnChain(platform, users[0]!, collectionId);
    await claimPerkOnChain(platform, users[0]!, collectionId);
    await claimPerkOnChain(platform, users[1]!, collectionId);
    await claimPerkOnChain(platform, users[2]!, collectionId);
    const spent = await redeem({
      brand_id: brand.brandId,
      user_address: users[1],
      collection_id: Number(collectionId),
      amount: 2,
    });
    expect(spent.status).toBe(200);

    const sorted = [...users].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    const expected = new Map<string, { claimed: number; remainingCharges: number }>([
      [users[0]!, { claimed: 2, remainingCharges: 4 }],
      [users[1]!, { claimed: 1, remainingCharges: 0 }],
      [users[2]!, { claimed: 1, remainingCharges: 2 }],
    ]);
    const first = await signedGet(
      `/relayer/list-perk-holders?brand_id=${brand.brandId}&collection_id=${collectionId}&limit=2`,
      brand.securityKey,
    );
    expect(first.status).toBe(200);
    expect(first.body.chargesPerToken).toBe(2);
    expect(first.body.holders.map((holder: { userAddress: string }) => holder.userAddress)).toEqual(sorted.slice(0, 2));
    expect(first.body.nextCursor).toBe(sorted[1]);
    const second = await signedGet(
      `/relayer/list-perk-holders?brand_id=${brand.brandId}&collection_id=${collectionId}&limit=2&cursor=${first.body.nextCursor}`,
      brand.securityKey,
    );
    expect(second.body.holders.map((holder: { userAddress: string }) => holder.userAddress)).toEqual(sorted.slice(2));
    expect(second.body.nextCursor).toBeNull();
    for (const holder of [...first.body.holders, ...second.body.holders]) {
      expect({ claimed: holder.claimed, remainingCharges: holder.remainingCharges }).toEqual(
        expected.get(holder.userAddress),
      );
    }

    const foreign = await signedGet(
      `/relayer/list-perk-holders?brand_id=${otherBrand.brandId}&collection_id=${collectionId}`,
      otherBrand.securityKey,
    );
    expect(foreign.status).toBe(403);
  });
});

describe('perk charge endpoints: per-IP limit', () => {
  it('answers 429 after PTS_RELAYER_IP_PER_MINUTE requests from one IP', async () => {
    const limited = await startTestPlatform({ PTS_RELAYER_IP_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await limited.post('/relayer/redeem-perk', {})).status);
      }
      expect(statuses).toEqual([400, 400, 400, 429]);
      const refused = await limited.get('/relayer/check-perk-status');
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { reason: 'rate_limit_exceeded' } });
    } finally {
      await limited.stop();
    }
  });
});
