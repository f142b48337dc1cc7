import fc from 'fast-check';
import { type Address, encodeFunctionData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerkCollectionOnChain, fundUser, type SignedPermit, signPermit } from '../../../test/perk-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY } from '../../chain/anvil.ts';
import { perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import { createChainClients } from '../../chain/deploy.ts';
import { createLocalTokenIssuer } from '../identity/local-token-issuer.ts';

// POST /relayer/relay and GET /relayer/transactions/:id end to end: the real app, the real relayer sender
// and our contracts on anvil (spec 4.9, docs/relayer.md "Relay endpoint").

let platform: TestPlatform;
let brandId: string;
let contracts: { rewardToken: Address; perkNft: Address; pointsSale: Address; businessEscrow: Address };
let userCount = 0;

interface TestUser {
  key: Hex;
  address: Address;
  headers: Record<string, string>;
}

function newUser(): TestUser {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const token = platform.deps.tokenIssuer.issueAccessToken({
    subject: `did:pts:local:relay-${++userCount}`,
    email: `relay${userCount}@example.com`,
    walletAddress: address,
  });
  return { key, address, headers: { authorization: `Bearer ${token}` } };
}

function claimData(user: Address, collectionId: bigint): Hex {
  return encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user, collectionId] });
}

function permitBody(permit: SignedPermit) {
  return {
    owner: permit.owner,
    spender: permit.spender,
    value: permit.value.toString(),
    deadline: Number(permit.deadline),
    v: permit.v,
    r: permit.r,
    s: permit.s,
  };
}

function relayPost(user: TestUser, body: Record<string, unknown>) {
  return platform.post('/relayer/relay', { userAddress: user.address, ...body }, user.headers);
}

function claim(user: TestUser, collectionId: bigint, extra: Record<string, unknown> = {}) {
  return relayPost(user, { to: contracts.pointsSale, data: claimData(user.address, collectionId), ...extra });
}

async function read<T>(address: Address, abi: readonly unknown[], functionName: string, args: unknown[]): Promise<T> {
  return platform.deps.publicClient.readContract({ address, abi: abi as never, functionName, args } as never) as T;
}

const tokenBalance = (wallet: Address) => read<bigint>(contracts.rewardToken, rewardTokenAbi, 'balanceOf', [wallet]);
const perkBalance = (wallet: Address, id: bigint) =>
  read<bigint>(contracts.perkNft, perkNFTAbi, 'balanceOf', [wallet, id]);

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

/** Waits until anvil's pool holds `count` pending transactions (20 s at most). */
async function waitForPool(count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = (await rpc('txpool_status')) as { pending: string };
    if (Number(status.pending) >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${Number(status.pending)} transactions reached the pool`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs `during` with anvil's automine off; once `pendingCount` transactions are in the pool, one block is mined. */
async function withManualMining<T>(pendingCount: number, during: () => Promise<T>): Promise<T> {
  await rpc('evm_setAutomine', [false]);
  try {
    const running = during();
    await waitForPool(pendingCount);
    await rpc('evm_mine');
    return await running;
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

/** Relays RewardToken.permit(owner, PointsSale, value) for the user: an allowance for several claims. */
async function relayAllowance(user: TestUser, value: bigint) {
  const permit = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value });
  const response = await relayPost(user, {
    to: contracts.rewardToken,
    data: encodeFunctionData({
      abi: rewardTokenAbi,
      functionName: 'permit',
      args: [permit.owner, permit.spender, permit.value, permit.deadline, permit.v, permit.r, permit.s],
    }),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response;
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RELAYER_IP_PER_MINUTE: '100000', PTS_RELAYER_WAIT_MS: '20000' });
  brandId = (await platform.createBrand()).brandId;
  contracts = platform.deps.chain.contracts as typeof contracts;
});

afterAll(async () => {
  await platform?.stop();
});

describe('POST /relayer/relay: a gasless perk claim', () => {
  it('claims with a permit: the user pays the price in tokens and no gas, the relayer pays gas for the brand', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 40n, maxPerUser: 1n });
    await fundUser(platform, user.address, 100n);
    const relayerEthBefore = await platform.deps.publicClient.getBalance({ address: platform.deps.relayer.address });
    const permit = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value: 40n });

    const response = await claim(user, collectionId, {
      metadata: { action: 'claim-perk', permit: permitBody(permit) },
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      success: true,
      status: 'confirmed',
      from: platform.deps.relayer.address,
      to: contracts.pointsSale,
      functionName: 'claimPerkWithPermit',
    });
    expect(response.body.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(response.body.explorerUrl).toBe(
      `${platform.deps.config.PTS_EXPLORER_URL}/tx/${response.body.transactionHash}`,
    );
    expect(BigInt(response.body.gasUsed)).toBeGreaterThan(0n);
    expect(Number.isInteger(response.body.blockNumber)).toBe(true);
    expect(response.headers.get('x-ratelimit-limit')).toBe('35');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('34');

    expect(await tokenBalance(user.address)).toBe(60n);
    expect(await perkBalance(user.address, collectionId)).toBe(1n);
    expect(await platform.deps.publicClient.getBalance({ address: user.address })).toBe(0n);
    const relayerEthAfter = await platform.deps.publicClient.getBalance({ address: platform.deps.relayer.address });
    expect(relayerEthBefore - relayerEthAfter).toBe(
      BigInt(response.body.gasUsed) * BigInt(response.body.effectiveGasPrice),
    );
    const recorded = await platform.deps.relayer.get(response.body.id);
    expect(recorded).toMatchObject({ brandId, collectionId, status: 'confirmed' });

    // The owner can follow it; someone else cannot see it.
    const mine = await platform.get(`/relayer/transactions/${response.body.id}`, user.headers);
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({
      id: response.body.id,
      status: 'confirmed',
      state: 'confirmed',
      transactionHash: response.body.transactionHash,
      hashes: [response.body.transactionHash],
      gasUsed: response.body.gasUsed,
    });
    expect((await platform.get(`/relayer/transactions/${response.body.id}`, newUser().headers)).status).toBe(404);
    expect((await platform.get(`/relayer/transactions/${response.body.id}`)).status).toBe(401);

    // A second claim hits the per-user maximum of 1 before anything is sent.
    const again = await claim(user, collectionId);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      success: false,
      code: 'CLAIM_LIMIT_REACHED',
      details: { collectionId: Number(collectionId), currentClaims: 1, maxPerUser: 1 },
    });
  });

  it('sends the permit first when it approves more than the price, then the claim', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 10n });
    await fundUser(platform, user.address, 100n);
    const permit = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value: 30n });
    const response = await claim(user, collectionId, { metadata: { permit: permitBody(permit) } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ functionName: 'claimPerk', status: 'confirmed' });
    expect(response.body.permitTransactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    // The remaining allowance pays the next claim without a new permit.
    expect((await claim(user, collectionId)).status).toBe(200);
    expect(await tokenBalance(user.address)).toBe(80n);
    expect(await perkBalance(user.address, collectionId)).toBe(2n);
  });

  it('a permit someone else submitted first does not stop the claim', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 25n });
    await fundUser(platform, user.address, 50n);
    const permit = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value: 25n });
    const { walletClientFor, publicClient } = createChainClients(
      platform.deps.chain.rpcUrl,
      platform.deps.chain.chainId,
    );
    const frontRunner = walletClientFor(privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY));
    const frontRun = () =>
      frontRunner.writeContract({
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'permit',
        args: [permit.owner, permit.spender, permit.value, permit.deadline, permit.v, permit.r, permit.s],
        maxPriorityFeePerGas: 50_000_000_000n,
        maxFeePerGas: 90_000_000_000n,
      });

    // Front-run in the same block, ahead of the relayer's claimPerkWithPermit: the contract tolerates the used permit.
    const [response, hash] = await withManualMining(2, async () => {
      const hashPromise = frontRun();
      await hashPromise;
      return Promise.all([claim(user, collectionId, { metadata: { permit: permitBody(permit) } }), hashPromise]);
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.functionName).toBe('claimPerkWithPermit');
    const frontRunReceipt = await publicClient.getTransactionReceipt({ hash });
    expect(frontRunReceipt.status).toBe('success');
    expect(frontRunReceipt.blockNumber).toBe(BigInt(response.body.blockNumber));
    expect(await perkBalance(user.address, collectionId)).toBe(1n);

    // Front-run before the request arrives: the allowance is there, the relayer sends a plain claim.
    const permit2 = await signPermit(platform, { privateKey: user.key, spender: contracts.pointsSale, value: 25n });
    await publicClient.waitForTransactionReceipt({
      hash: await frontRunner.writeContract({
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'permit',
        args: [permit2.owner, permit2.spender, permit2.value, permit2.deadline, permit2.v, permit2.r, permit2.s],
      }),
    });
    const second = await claim(user, collectionId, { metadata: { permit: permitBody(permit2) } });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.functionName).toBe('claimPerk');
    expect(await tokenBalance(user.address)).toBe(0n);
  });

  it("spends the holder's own perk charge (useCharge), gas on the collection's brand", async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, chargesPerToken: 3n });
    expect((await claim(user, collectionId)).status).toBe(200);
    const useCharge = (holder: Address) =>
      encodeFunctionData({ abi: perkNFTAbi, functionName: 'useCharge', args: [holder, collectionId, 1n] });
    const used = await relayPost(user, { to: contracts.perkNft, data: useCharge(user.address) });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    expect(used.body.functionName).toBe('useCharge');
    expect(await read<bigint>(contracts.perkNft, perkNFTAbi, 'remainingCharges', [user.address, collectionId])).toBe(
      2n,
    );
    expect((await platform.deps.relayer.get(used.body.id))?.brandId).toBe(brandId);
    // Someone else's charges are not theirs to spend.
    const other = await relayPost(newUser(), { to: contracts.perkNft, data: useCharge(user.address) });
    expect(other.status).toBe(403);
    expect(other.body.details).toMatchObject({ field: 'tokenHolder' });
  });

  it('20 concurrent claims against maxPerUser 2 mint exactly 2', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 5n, maxPerUser: 2n });
    await fundUser(platform, user.address, 100n);
    await relayAllowance(user, 100n);

    const responses = await Promise.all(Array.from({ length: 20 }, () => claim(user, collectionId)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(2);
    expect(statuses.filter((status) => status === 409)).toHaveLength(18);
    for (const refused of responses.filter((response) => response.status === 409)) {
      expect(refused.body.details).toEqual({ collectionId: Number(collectionId), currentClaims: 2, maxPerUser: 2 });
    }
    expect(await perkBalance(user.address, collectionId)).toBe(2n);
    expect(await tokenBalance(user.address)).toBe(90n);
  });

  it('answers 500 TRANSACTION_FAILED when a transaction that passed simulation reverts when mined', async () => {
    // The claim passes its simulation and waits in the pool; the collection's admin closes the collection in
    // the same block with a higher tip, so the claim reverts when mined. (Two racing claims would not do:
    // the relayer simulates against the pending state, so the second is refused with 409 once the first is
    // in the pool.)
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, maxSupply: 1n });
    const user = newUser();
    const admin = createChainClients(platform.deps.chain.rpcUrl, platform.deps.chain.chainId).walletClientFor(
      privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY),
    );
    const response = await withManualMining(2, async () => {
      const claimed = claim(user, collectionId, { gasLimit: 300_000 });
      await waitForPool(1);
      await admin.writeContract({
        address: contracts.perkNft,
        abi: perkNFTAbi,
        functionName: 'setActive',
        args: [collectionId, false],
        maxPriorityFeePerGas: 50_000_000_000n,
        maxFeePerGas: 90_000_000_000n,
      });
      return claimed;
    });
    expect(response.status, JSON.stringify(response.body)).toBe(500);
    expect(response.body).toMatchObject({ success: false, code: 'TRANSACTION_FAILED' });
    expect(response.body.details.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const tx = await platform.deps.relayer.get(response.body.details.id);
    expect(tx?.status).toBe('failed');
    expect((await platform.deps.publicClient.getTransactionReceipt({ hash: tx!.hash! })).status).toBe('reverted');
    expect(await perkBalance(user.address, collectionId)).toBe(0n);
  });
});

describe('POST /relayer/relay: refusals', () => {
  it('400 MISSING_FIELDS lists what is missing; 400 INVALID_FORMAT names the field', async () => {
    const user = newUser();
    const missing = await platform.post('/relayer/relay', { data: '0x12345678' }, user.headers);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 'MISSING_FIELDS',
      details: { required: ['to', 'data', 'userAddress'], missing: ['to', 'userAddress'] },
    });
    // Missing fields come before the token check.
    expect((await platform.post('/relayer/relay', {})).body.code).toBe('MISSING_FIELDS');

    const bad = await relayPost(user, { to: '0x1234', data: '0x12345678' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_FORMAT', details: { field: 'to' } });
    const gas = await relayPost(user, {
      to: contracts.pointsSale,
      data: claimData(user.address, 1n),
      gasLimit: 1_000_001,
    });
    expect(gas.body).toMatchObject({ code: 'INVALID_FORMAT', details: { field: 'gasLimit' } });
    const value = await relayPost(user, { to: contracts.pointsSale, data: claimData(user.address, 1n), value: '1' });
    expect(value.status).toBe(400);
    expect(value.body).toMatchObject({ code: 'INVALID_FORMAT', details: { field: 'value' } });
    const big = await platform.post(
      '/relayer/relay',
      { to: contracts.pointsSale, data: `0x${'00'.repeat(9000)}` },
      user.headers,
    );
    expect(big.status).toBe(413);
  });

  it('401 UNAUTHORIZED for a missing, forged, wrong-audience or expired token', async () => {
    const user = newUser();
    const body = { to: contracts.pointsSale, data: claimData(user.address, 1n), userAddress: user.address };
    const missing = await platform.post('/relayer/relay', body);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('UNAUTHORIZED');

    const issuer = platform.deps.tokenIssuer;
    const claims = { subject: 'did:pts:local:mallory', email: 'm@example.com', walletAddress: user.address };
    const forger = createLocalTokenIssuer({ issuer: issuer.issuer, audience: issuer.audience, clock: platform.clock });
    const forged = await platform.post('/relayer/relay', body, {
      authorization: `Bearer ${forger.issueAccessToken(claims)}`,
    });
    expect(forged.status).toBe(401);
    const otherAudience = createLocalTokenIssuer({
      privateJwk: issuer.exportPrivateJwk(),
      issuer: issuer.issuer,
      audience: 'someone-else',
      clock: platform.clock,
    });
    const wrongAudience = await platform.post('/relayer/relay', body, {
      authorization: `Bearer ${otherAudience.issueAccessToken(claims)}`,
    });
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.body.error).toMatch(/audience/);

    const soonExpired = createLocalTokenIssuer({
      privateJwk: issuer.exportPrivateJwk(),
      issuer: issuer.issuer,
      audience: issuer.audience,
      clock: { now: () => new Date(platform.clock.now().getTime() - 3_600_000) },
      ttlSeconds: 60,
    });
    const expired = await platform.post('/relayer/relay', body, {
      authorization: `Bearer ${soonExpired.issueAccessToken(claims)}`,
    });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/expired/);
  });

  it("403 VALIDATION_FAILED when userAddress is not the user's wallet or the call is for someone else", async () => {
    const [user, victim] = [newUser(), newUser()];
    const notMine = await platform.post(
      '/relayer/relay',
      { to: contracts.pointsSale, data: claimData(victim.address, 1n), userAddress: victim.address },
      user.headers,
    );
    expect(notMine.status).toBe(403);
    expect(notMine.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'userAddress' } });
    const forVictim = await relayPost(user, { to: contracts.pointsSale, data: claimData(victim.address, 1n) });
    expect(forVictim.status).toBe(403);
    expect(forVictim.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'user' } });
  });

  it('403 CONTRACT_NOT_WHITELISTED for other contracts; 403 VALIDATION_FAILED for functions outside the list', async () => {
    const user = newUser();
    const other = await relayPost(user, { to: user.address, data: '0x12345678' });
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'CONTRACT_NOT_WHITELISTED', details: { contract: user.address } });
    expect(new Set(other.body.details.allowed)).toEqual(new Set(Object.values(contracts)));

    const transferFrom = encodeFunctionData({
      abi: rewardTokenAbi,
      functionName: 'transferFrom',
      args: [newUser().address, user.address, 1n],
    });
    const refused = await relayPost(user, { to: contracts.rewardToken, data: transferFrom });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { contract: contracts.rewardToken, selector: transferFrom.slice(0, 10) },
    });
    expect(refused.body.details.allowedFunctions).toHaveLength(1);
  });

  it('403 VALIDATION_FAILED for a bad permit or a call that would revert; nothing is sent', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId, price: 10n });
    await fundUser(platform, user.address, 10n);
    const wrongKey = await signPermit(platform, {
      privateKey: generatePrivateKey(),
      spender: contracts.pointsSale,
      value: 10n,
    });
    const forged = await claim(user, collectionId, {
      metadata: { permit: { ...permitBody(wrongKey), owner: user.address } },
    });
    expect(forged.status).toBe(403);
    expect(forged.body.details).toMatchObject({ reason: 'bad_signature' });
    const past = await signPermit(platform, {
      privateKey: user.key,
      spender: contracts.pointsSale,
      value: 10n,
      deadline: BigInt(Math.floor(platform.clock.now().getTime() / 1000) - 1),
    });
    expect((await claim(user, collectionId, { metadata: { permit: permitBody(past) } })).body.details).toMatchObject({
      reason: 'expired',
    });

    // No allowance and no permit: simulation reverts, no transaction is recorded.
    const before = await platform.deps.db.selectFrom('relay_transactions').select('id').execute();
    const reverts = await claim(user, collectionId);
    expect(reverts.status).toBe(403);
    expect(reverts.body.code).toBe('VALIDATION_FAILED');
    expect(reverts.body.details.reason).toMatch(/allowance/i);
    expect(await platform.deps.db.selectFrom('relay_transactions').select('id').execute()).toHaveLength(before.length);

    const unknown = await claim(user, 987_654_321n);
    expect(unknown.body.details).toMatchObject({ reason: 'unknown_collection' });
  });

  it('36th relay within the hour is 429 RATE_LIMIT_EXCEEDED; an hour later it passes', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId });
    for (let i = 0; i < 35; i++) {
      const response = await claim(user, collectionId, { gasLimit: 300_000 });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(34 - i));
    }
    const limited = await claim(user, collectionId);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      success: false,
      code: 'RATE_LIMIT_EXCEEDED',
      details: { reason: 'rate_limit_exceeded' },
    });
    expect(limited.body.details.message).toEqual(expect.any(String));
    expect(limited.body.retryAfter).toBeGreaterThan(3500);
    expect(limited.body.retryAfter).toBeLessThanOrEqual(3600);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('35');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(platform.clock.now().getTime() / 1000);

    platform.clock.advance(3_600_001);
    // A fresh token: the old one expired with the hour.
    const refreshed = { ...user, headers: newUserHeaders(user.address) };
    const after = await claim(refreshed, collectionId, { gasLimit: 300_000 });
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(await perkBalance(user.address, collectionId)).toBe(36n);
  });

  it('503 when the network gas price is above the 100 gwei cap; nothing is sent or counted', async () => {
    const user = newUser();
    const collectionId = await createPerkCollectionOnChain(platform, { brand: brandId });
    await rpc('anvil_setNextBlockBaseFeePerGas', ['0x2e90edd000']); // 200 gwei
    await rpc('evm_mine');
    try {
      const expensive = await claim(user, collectionId);
      expect(expensive.status).toBe(503);
      expect(expensive.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'gas_price_above_cap' } });
      expect(expensive.body.retryAfter).toBeGreaterThan(0);
    } finally {
      await rpc('anvil_setNextBlockBaseFeePerGas', ['0x3b9aca00']); // 1 gwei
      await rpc('evm_mine');
    }
    const cheap = await claim(user, collectionId);
    expect(cheap.status, JSON.stringify(cheap.body)).toBe(200);
    expect(cheap.headers.get('x-ratelimit-remaining')).toBe('34');
  });

  it('answers CORS preflight for the relay routes', async () => {
    const response = await fetch(`${platform.url}/relayer/relay`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(response.headers.get('access-control-allow-methods')).toMatch(/POST/);
  });

  it('never answers 5xx to arbitrary bodies (fuzz)', async () => {
    const user = newUser();
    const hex = (min: number, max: number) =>
      fc.uint8Array({ minLength: min, maxLength: max }).map((bytes) => `0x${Buffer.from(bytes).toString('hex')}`);
    const to = fc.oneof(fc.constantFrom(...Object.values(contracts)), hex(20, 20), fc.string());
    const data = fc.oneof(
      hex(0, 100),
      fc
        .constantFrom(...Object.values(contracts))
        .chain(() =>
          fc
            .tuple(fc.constantFrom('0x5e6c4f5b', '0xd505accf', '0x3d9e2b7f', '0x12345678'), hex(0, 200))
            .map(([selector, rest]) => selector + rest.slice(2)),
        ),
      fc.string(),
    );
    const body = fc.record(
      {
        to,
        data,
        userAddress: fc.oneof(fc.constant(user.address), hex(20, 20), fc.anything()),
        value: fc.oneof(fc.constant('0'), fc.string(), fc.integer()),
        gasLimit: fc.oneof(fc.integer(), fc.double(), fc.string()),
        metadata: fc.oneof(
          fc.anything(),
          fc.record({ permit: fc.record({ owner: fc.constant(user.address), v: fc.integer(), r: hex(0, 40) }) }),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (input) => {
        const response = await platform.post('/relayer/relay', input, user.headers);
        expect(response.status, JSON.stringify({ input, body: response.body })).toBeLessThan(500);
        expect(response.body.success).toBe(false);
      }),
      { numRuns: 150 },
    );
  });
});

function newUserHeaders(walletAddress: Address): Record<string, string> {
  const token = platform.deps.tokenIssuer.issueAccessToken({
    subject: `did:pts:local:relay-${++userCount}`,
    email: `relay${userCount}@example.com`,
    walletAddress,
  });
  return { authorization: `Bearer ${token}` };
}
