import { createManualClock } from '@pts/shared';
import { type Address, type Hex, parseEther, parseSignature } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANVIL_DEPLOYER_PRIVATE_KEY,
  ANVIL_MINTER_PRIVATE_KEY,
  ANVIL_RELAYER_PRIVATE_KEY,
  type AnvilInstance,
  startAnvil,
} from '../src/chain/anvil.ts';
import { businessEscrowAbi, perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../src/chain/artifacts/index.ts';
import {
  type ChainClients,
  createChainClients,
  type DeployedContracts,
  ensureContracts,
  OPERATOR_ROLE,
  RELAYER_ROLE,
  REWARD_TOKEN_NAME,
  SALE_ROLE,
} from '../src/chain/deploy.ts';
import { silentLogger, TEST_CLOCK_START } from '../src/chain/test-chain.ts';
import { createTestDatabase, type TestDatabase } from '../test/database.ts';

const deployer = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);
const minter = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
const relayer = privateKeyToAccount(ANVIL_RELAYER_PRIVATE_KEY);
const CHAIN_ID = 1868;

let database: TestDatabase;
let anvil: AnvilInstance;
let clients: ChainClients;
let contracts: DeployedContracts;
let brand: PrivateKeyAccount;
let nextCollectionId = 1n;

beforeAll(async () => {
  database = await createTestDatabase();
  anvil = await startAnvil({ port: 0, chainId: CHAIN_ID });
  clients = createChainClients(anvil.rpcUrl, CHAIN_ID);
  contracts = await ensureAll();
  brand = await fundedAccount();
});

afterAll(async () => {
  await anvil?.stop();
  await database?.close();
});

function ensureAll() {
  return ensureContracts({
    db: database.db,
    publicClient: clients.publicClient,
    walletClient: clients.walletClientFor(deployer),
    chainId: CHAIN_ID,
    minterAddress: minter.address,
    relayerAddress: relayer.address,
    logger: silentLogger,
    clock: createManualClock(TEST_CLOCK_START),
  });
}

/** A fresh account; with ETH only when it must send transactions itself (users never do: the relayer pays). */
async function fundedAccount(): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await clients.publicClient.request({
    method: 'anvil_setBalance',
    params: [account.address, `0x${parseEther('10').toString(16)}`],
  } as never);
  return account;
}

const freshUser = () => privateKeyToAccount(generatePrivateKey());

/** Simulates (so a revert surfaces with its decoded error name), then sends and waits for success. */
/** Reverts bubble up from nested calls (the token, PerkNFT), so every request decodes every contract's errors. */
const allErrors = [...rewardTokenAbi, ...perkNFTAbi, ...pointsSaleAbi, ...businessEscrowAbi].filter(
  (item) => item.type === 'error',
);
const withAllErrors = (request: Record<string, unknown>) => ({
  ...request,
  abi: [...(request.abi as readonly unknown[]), ...allErrors],
});

async function send(account: PrivateKeyAccount, request: Record<string, unknown>): Promise<Hex> {
  const { request: simulated } = await clients.publicClient.simulateContract({
    account,
    ...withAllErrors(request),
  } as never);
  const hash = await clients.walletClientFor(account).writeContract(simulated as never);
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return hash;
}

function simulate(account: PrivateKeyAccount, request: Record<string, unknown>) {
  return clients.publicClient.simulateContract({ account, ...withAllErrors(request) } as never);
}

const token = (functionName: string, args: readonly unknown[]) => ({
  address: contracts.rewardToken,
  abi: rewardTokenAbi,
  functionName,
  args,
});
const perk = (functionName: string, args: readonly unknown[]) => ({
  address: contracts.perkNft,
  abi: perkNFTAbi,
  functionName,
  args,
});
const sale = (functionName: string, args: readonly unknown[]) => ({
  address: contracts.pointsSale,
  abi: pointsSaleAbi,
  functionName,
  args,
});
const escrow = (functionName: string, args: readonly unknown[]) => ({
  address: contracts.businessEscrow,
  abi: businessEscrowAbi,
  functionName,
  args,
});

const read = <T>(request: { address: Address; abi: unknown; functionName: string; args: readonly unknown[] }) =>
  clients.publicClient.readContract(request as never) as Promise<T>;

async function mintPoints(to: Address, amount: bigint): Promise<void> {
  await send(minter, token('mint', [to, amount]));
}

interface CollectionOptions {
  price: bigint;
  maxSupply?: bigint;
  maxPerUser?: bigint;
  charges?: bigint;
  active?: boolean;
}

async function createCollection(options: CollectionOptions): Promise<bigint> {
  const id = nextCollectionId++;
  await send(
    deployer,
    perk('createCollection', [
      id,
      brand.address,
      options.price,
      options.maxSupply ?? 0n,
      options.maxPerUser ?? 0n,
      options.charges ?? 0n,
      options.active ?? true,
    ]),
  );
  return id;
}

/** The user's EIP-2612 permit for PointsSale to spend `value`, signed locally (no gas, no RPC write). */
async function signPermit(user: PrivateKeyAccount, value: bigint, deadline = 2n ** 40n) {
  const nonce = await read<bigint>(token('nonces', [user.address]));
  const signature = await user.signTypedData({
    domain: { name: REWARD_TOKEN_NAME, version: '1', chainId: CHAIN_ID, verifyingContract: contracts.rewardToken },
    types: {
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: { owner: user.address, spender: contracts.pointsSale, value, nonce, deadline },
  });
  const { r, s, v, yParity } = parseSignature(signature);
  return { deadline, v: Number(v ?? BigInt(yParity + 27)), r, s };
}

async function claimWithPermit(user: PrivateKeyAccount, collectionId: bigint, price: bigint): Promise<Hex> {
  const permit = await signPermit(user, price);
  return send(
    relayer,
    sale('claimPerkWithPermit', [user.address, collectionId, permit.deadline, permit.v, permit.r, permit.s]),
  );
}

async function simulateClaimWithPermit(user: PrivateKeyAccount, collectionId: bigint, price: bigint) {
  const permit = await signPermit(user, price);
  return simulate(
    relayer,
    sale('claimPerkWithPermit', [user.address, collectionId, permit.deadline, permit.v, permit.r, permit.s]),
  );
}

const balanceOfPerk = (user: Address, id: bigint) => read<bigint>(perk('balanceOf', [user, id]));
const points = (holder: Address) => read<bigint>(token('balanceOf', [holder]));

describe('ensureContracts (perk contracts)', () => {
  it('records every contract, wires the roles and reuses them without a transaction', async () => {
    const rows = await database.db
      .selectFrom('chain_deployments')
      .select(['name', 'address'])
      .where('chain_id', '=', CHAIN_ID)
      .orderBy('name')
      .execute();
    expect(rows.map((row) => [row.name, row.address])).toEqual([
      ['BusinessEscrow', contracts.businessEscrow.toLowerCase()],
      ['PerkNFT', contracts.perkNft.toLowerCase()],
      ['PointsSale', contracts.pointsSale.toLowerCase()],
      ['RewardToken', contracts.rewardToken.toLowerCase()],
    ]);
    expect(await read(perk('hasRole', [SALE_ROLE, contracts.pointsSale]))).toBe(true);
    expect(await read(perk('hasRole', [OPERATOR_ROLE, relayer.address]))).toBe(true);
    expect(await read(sale('hasRole', [RELAYER_ROLE, relayer.address]))).toBe(true);
    expect(await read(sale('treasury', []))).toBe(contracts.businessEscrow);
    expect(await read(sale('perkNft', []))).toBe(contracts.perkNft);
    expect(await read(escrow('token', []))).toBe(contracts.rewardToken);

    const nonce = await clients.publicClient.getTransactionCount({ address: deployer.address });
    expect(await ensureAll()).toEqual(contracts);
    expect(await clients.publicClient.getTransactionCount({ address: deployer.address })).toBe(nonce);
  });
});

describe('PointsSale', () => {
  it('claims with a permit: the price moves to the escrow for the brand and the perk is minted', async () => {
    const id = await createCollection({ price: 30n, maxSupply: 10n, maxPerUser: 2n, charges: 3n });
    const user = freshUser();
    await mintPoints(user.address, 100n);
    const escrowBefore = await read<bigint>(escrow('tokenBalanceOf', [brand.address]));

    const hash = await claimWithPermit(user, id, 30n);

    expect(await balanceOfPerk(user.address, id)).toBe(1n);
    expect(await points(user.address)).toBe(70n);
    expect(await read<bigint>(escrow('tokenBalanceOf', [brand.address]))).toBe(escrowBefore + 30n);
    expect(await points(contracts.businessEscrow)).toBeGreaterThanOrEqual(30n);
    expect(await points(contracts.pointsSale)).toBe(0n);
    expect(await read(perk('claimedBy', [user.address, id]))).toBe(1n);
    expect(await read(perk('totalClaimed', [id]))).toBe(1n);
    expect(await read(perk('remainingCharges', [user.address, id]))).toBe(3n);
    const receipt = await clients.publicClient.getTransactionReceipt({ hash });
    const pointsSaleLogs = receipt.logs.filter(
      (log) => log.address.toLowerCase() === contracts.pointsSale.toLowerCase(),
    );
    expect(pointsSaleLogs).toHaveLength(1);
  });

  it('enforces the per-user maximum', async () => {
    const id = await createCollection({ price: 5n, maxPerUser: 2n, charges: 1n });
    const user = freshUser();
    await mintPoints(user.address, 100n);
    await claimWithPermit(user, id, 5n);
    await claimWithPermit(user, id, 5n);
    await expect(simulateClaimWithPermit(user, id, 5n)).rejects.toThrow(/MaxPerUserExceeded/);
    expect(await balanceOfPerk(user.address, id)).toBe(2n);
    expect(await points(user.address)).toBe(90n);
  });

  it('enforces the max supply and the active flag', async () => {
    const id = await createCollection({ price: 1n, maxSupply: 2n });
    const users = [freshUser(), freshUser(), freshUser()];
    for (const user of users) await mintPoints(user.address, 10n);
    await claimWithPermit(users[0]!, id, 1n);
    await claimWithPermit(users[1]!, id, 1n);
    await expect(simulateClaimWithPermit(users[2]!, id, 1n)).rejects.toThrow(/MaxSupplyExceeded/);
    expect(await read(perk('totalClaimed', [id]))).toBe(2n);

    const inactive = await createCollection({ price: 1n, active: false });
    await expect(simulateClaimWithPermit(users[2]!, inactive, 1n)).rejects.toThrow(/CollectionInactive/);
    // The brand may switch its own collection on; a stranger may not.
    const stranger = await fundedAccount();
    await expect(simulate(stranger, perk('setActive', [inactive, true]))).rejects.toThrow(/NotCollectionManager/);
    await send(brand, perk('setActive', [inactive, true]));
    await claimWithPermit(users[2]!, inactive, 1n);
    expect(await balanceOfPerk(users[2]!.address, inactive)).toBe(1n);
  });

  it('still claims when the permit was already used (front-run) and the allowance suffices', async () => {
    const id = await createCollection({ price: 20n, charges: 1n });
    const user = freshUser();
    await mintPoints(user.address, 50n);
    const permit = await signPermit(user, 20n);
    // Someone else submits the user's permit first: the relayer's permit call will now revert.
    const frontRunner = await fundedAccount();
    await send(
      frontRunner,
      token('permit', [user.address, contracts.pointsSale, 20n, permit.deadline, permit.v, permit.r, permit.s]),
    );
    const args = [user.address, id, permit.deadline, permit.v, permit.r, permit.s] as const;
    await send(relayer, sale('claimPerkWithPermit', args));
    expect(await balanceOfPerk(user.address, id)).toBe(1n);
    expect(await points(user.address)).toBe(30n);

    // Replaying it now: the permit is spent and so is the allowance.
    await expect(simulate(relayer, sale('claimPerkWithPermit', args))).rejects.toThrow(/InsufficientAllowance/);
  });

  it('claimPerk uses an existing allowance; only the relayer may claim', async () => {
    const id = await createCollection({ price: 4n });
    const user = await fundedAccount();
    await mintPoints(user.address, 10n);
    await expect(simulate(relayer, sale('claimPerk', [user.address, id]))).rejects.toThrow(
      /ERC20InsufficientAllowance/,
    );
    await send(user, token('approve', [contracts.pointsSale, 4n]));
    await expect(simulate(user, sale('claimPerk', [user.address, id]))).rejects.toThrow(
      /AccessControlUnauthorizedAccount/,
    );
    await send(relayer, sale('claimPerk', [user.address, id]));
    expect(await balanceOfPerk(user.address, id)).toBe(1n);
    expect(await points(user.address)).toBe(6n);
  });
});

describe('PerkNFT', () => {
  it('decrements charges through the operator only, never below zero', async () => {
    const id = await createCollection({ price: 2n, charges: 3n });
    const user = freshUser();
    await mintPoints(user.address, 10n);
    await claimWithPermit(user, id, 2n);
    await claimWithPermit(user, id, 2n);
    expect(await read(perk('remainingCharges', [user.address, id]))).toBe(6n);

    await send(relayer, perk('useCharge', [user.address, id, 1n]));
    await send(relayer, perk('useCharge', [user.address, id, 4n]));
    expect(await read(perk('remainingCharges', [user.address, id]))).toBe(1n);
    await expect(simulate(relayer, perk('useCharge', [user.address, id, 2n]))).rejects.toThrow(/InsufficientCharges/);
    await expect(simulate(deployer, perk('useCharge', [user.address, id, 1n]))).rejects.toThrow(
      /AccessControlUnauthorizedAccount/,
    );
    await send(relayer, perk('useCharge', [user.address, id, 1n]));
    expect(await read(perk('remainingCharges', [user.address, id]))).toBe(0n);
    // The perks themselves stay with the holder.
    expect(await balanceOfPerk(user.address, id)).toBe(2n);
  });

  it('mints only through the sale role and refuses transfers', async () => {
    const id = await createCollection({ price: 1n });
    await expect(simulate(deployer, perk('mint', [deployer.address, id, 1n]))).rejects.toThrow(
      /AccessControlUnauthorizedAccount/,
    );
    const holder = await fundedAccount();
    await mintPoints(holder.address, 1n);
    await claimWithPermit(holder, id, 1n);
    await expect(
      simulate(holder, perk('safeTransferFrom', [holder.address, deployer.address, id, 1n, '0x'])),
    ).rejects.toThrow(/PerkNonTransferable/);
  });
});

describe('BusinessEscrow', () => {
  it('takes deposits from anyone for a brand and lets only the brand withdraw', async () => {
    const owner = await fundedAccount();
    const other = await fundedAccount();
    const donor = await fundedAccount();
    await mintPoints(donor.address, 100n);
    await send(donor, token('approve', [contracts.businessEscrow, 40n]));
    await send(donor, escrow('depositToken', [owner.address, 40n]));
    await send(donor, { ...escrow('depositNative', [owner.address]), value: parseEther('1') });
    expect(await read(escrow('tokenBalanceOf', [owner.address]))).toBe(40n);
    expect(await read(escrow('nativeBalanceOf', [owner.address]))).toBe(parseEther('1'));

    await expect(simulate(other, escrow('withdrawToken', [other.address, 1n]))).rejects.toThrow(/InsufficientBalance/);
    await expect(simulate(other, escrow('withdrawNative', [other.address, 1n]))).rejects.toThrow(/InsufficientBalance/);
    await expect(simulate(owner, escrow('withdrawToken', [owner.address, 41n]))).rejects.toThrow(/InsufficientBalance/);

    const receiver = freshUser();
    await send(owner, escrow('withdrawToken', [receiver.address, 15n]));
    await send(owner, escrow('withdrawNative', [receiver.address, parseEther('0.25')]));
    expect(await points(receiver.address)).toBe(15n);
    expect(await clients.publicClient.getBalance({ address: receiver.address })).toBe(parseEther('0.25'));
    expect(await read(escrow('tokenBalanceOf', [owner.address]))).toBe(25n);
    expect(await read(escrow('nativeBalanceOf', [owner.address]))).toBe(parseEther('0.75'));

    // Plain ETH would not say which brand it is for.
    await expect(
      clients.publicClient.call({ account: donor, to: contracts.businessEscrow, value: 1n }),
    ).rejects.toThrow();
  });
});
