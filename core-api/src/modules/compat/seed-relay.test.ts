import { type Address, encodeFunctionData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerkCollectionOnChain, fundUser, type SignedPermit, signPermit } from '../../../test/perk-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { perkNFTAbi, pointsSaleAbi } from '../../chain/artifacts/index.ts';

// The seed relayer client sends the permit at the top level of POST /relay; pts reads it as metadata.permit.
// The user's access token is still required, as for every relay.

let platform: TestPlatform;
let brandId: string;
let contracts: { rewardToken: Address; perkNft: Address; pointsSale: Address };

function newUser() {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const token = platform.deps.tokenIssuer.issueAccessToken({
    subject: `did:pts:local:seed-${address}`,
    email: `${address.toLowerCase()}@example.com`,
    walletAddress: address,
  });
  return { key, address, headers: { authorization: `Bearer ${token}` } };
}

const permitBody = (permit: SignedPermit) => ({
  owner: permit.owner,
  spender: permit.spender,
  value: permit.value.toString(),
  deadline: Number(permit.deadline),
  v: permit.v,
  r: permit.r,
  s: permit.s,
});

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RELAYER_IP_PER_MINUTE: '100000', PTS_RELAYER_WAIT_MS: '20000' });
  brandId = (await platform.createBrand()).brandId;
  contracts = platform.deps.chain.contracts as typeof contracts;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('POST /relayer/relay with a top-level permit (seed relayer client)', () => {
  it('claims with the permit in one transaction', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 40n, maxPerUser: 1n });
    await fundUser(platform, user.address, 100n);
    const permit = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value: 40n });
    const data = encodeFunctionData({
      abi: pointsSaleAbi,
      functionName: 'claimPerk',
      args: [user.address, collectionId],
    });
    const body = { to: contracts.pointsSale, data, userAddress: user.address, permit: permitBody(permit) };

    expect((await platform.post('/relayer/relay', body)).status).toBe(401);
    const conflicting = await platform.post(
      '/relayer/relay',
      { ...body, metadata: { permit: { ...permitBody(permit), value: '41' } } },
      user.headers,
    );
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.error).toMatch(/permit and metadata\.permit differ/);

    const response = await platform.post('/relayer/relay', body, user.headers);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ success: true, status: 'confirmed', functionName: 'claimPerkWithPermit' });
    const held = await platform.deps.publicClient.readContract({
      address: contracts.perkNft,
      abi: perkNFTAbi,
      functionName: 'balanceOf',
      args: [user.address, collectionId],
    });
    expect(held).toBe(1n);
  });
});
