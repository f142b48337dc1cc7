import type { CreatedBrand } from '@pts/shared';
import { type Address, encodeFunctionData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance } from '../../../test/chain-helpers.ts';
import { fundUser, signPermit } from '../../../test/perk-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { perkNFTAbi, pointsSaleAbi } from '../../chain/artifacts/index.ts';

// POST /relayer/relay checks a perk's constraints (docs/constraints.md) before simulating a claim:
// the real app, relayer and constraint checker, our contracts on anvil.

let platform: TestPlatform;
let brand: CreatedBrand;
let userCount = 0;

const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

async function perkWithMinBalance(cost: number, minBalance: number): Promise<bigint> {
  const created = await platform.post(
    '/admin/perks',
    { brandId: brand.brandId, name: `Gated ${cost}/${minBalance}/${userCount}`, cost, maxPerUser: 0 },
    admin(),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const perkId = created.body.perk.perkId as number;
  const added = await platform.post(
    `/admin/perks/${perkId}/constraints`,
    { kind: 'min_balance', amount: minBalance },
    admin(),
  );
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  return BigInt(perkId);
}

async function fundedUser(amount: bigint) {
  const key: Hex = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const token = platform.deps.tokenIssuer.issueAccessToken({
    subject: `did:pts:local:gated-${++userCount}`,
    email: `gated${userCount}@example.com`,
    walletAddress: address,
  });
  await fundUser(platform, address, amount);
  return { key, address, headers: { authorization: `Bearer ${token}` } };
}

async function claimWithPermit(user: Awaited<ReturnType<typeof fundedUser>>, collectionId: bigint, cost: bigint) {
  const pointsSale = platform.deps.chain.contracts.pointsSale as Address;
  const permit = await signPermit(platform, { privateKey: user.key, spender: pointsSale, value: cost });
  const data = encodeFunctionData({
    abi: pointsSaleAbi,
    functionName: 'claimPerkWithPermit',
    args: [user.address, collectionId, permit.deadline, permit.v, permit.r, permit.s],
  });
  return platform.post('/relayer/relay', { userAddress: user.address, to: pointsSale, data }, user.headers);
}

const perkBalance = (wallet: Address, id: bigint) =>
  platform.deps.publicClient.readContract({
    address: platform.deps.chain.contracts.perkNft as Address,
    abi: perkNFTAbi,
    functionName: 'balanceOf',
    args: [wallet, id],
  });

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RELAYER_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ domain: 'gated.example.com' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('relayed perk claims and constraints', () => {
  it('refuses a claim whose min_balance constraint is above the balance: 403 not_eligible, nothing sent', async () => {
    const perk = await perkWithMinBalance(10, 500);
    const user = await fundedUser(50n);
    const res = await claimWithPermit(user, perk, 10n);
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body).toMatchObject({
      success: false,
      code: 'VALIDATION_FAILED',
      details: { reason: 'not_eligible', collectionId: Number(perk) },
    });
    expect(res.body.details.failed).toEqual([expect.objectContaining({ kind: 'min_balance' })]);
    expect(res.body.error).toContain('min_balance');
    // The plain claimPerk path is refused the same way.
    const plain = await platform.post(
      '/relayer/relay',
      {
        userAddress: user.address,
        to: platform.deps.chain.contracts.pointsSale,
        data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user.address, perk] }),
      },
      user.headers,
    );
    expect(plain.status, JSON.stringify(plain.body)).toBe(403);
    expect(plain.body.details.reason).toBe('not_eligible');
    expect(await tokenBalance(platform, user.address)).toBe(50n);
    expect(await perkBalance(user.address, perk)).toBe(0n);
  }, 60_000);

  it('relays a claim whose constraint is met', async () => {
    const perk = await perkWithMinBalance(10, 20);
    const user = await fundedUser(50n);
    const res = await claimWithPermit(user, perk, 10n);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('confirmed');
    expect(await tokenBalance(platform, user.address)).toBe(40n);
    expect(await perkBalance(user.address, perk)).toBe(1n);
  }, 60_000);
});
