import { type Address, encodeFunctionData, type Hex, parseSignature } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_DEPLOYER_PRIVATE_KEY } from '../src/chain/anvil.ts';
import { perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../src/chain/artifacts/index.ts';
import { createChainClients, MINTER_ROLE, REWARD_TOKEN_NAME } from '../src/chain/deploy.ts';
import type { Platform } from '../src/startup/platform.ts';

// Test support for perks on the platform's anvil: collections (deployer = COLLECTION_ADMIN_ROLE), claims
// (through the platform's own relayer, which holds RELAYER_ROLE on PointsSale), token funding and permits.

const deployer = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);
/** One deployer transaction at a time per chain: they share the deployer's nonces. */
const deployerQueues = new Map<string, Promise<unknown>>();
let nextCollectionId = 1_000_000 + Math.floor(Math.random() * 1_000_000) * 100;

function contract(platform: Platform, name: 'rewardToken' | 'perkNft' | 'pointsSale'): Address {
  const address = platform.deps.chain.contracts[name];
  if (!address) throw new Error(`the platform did not deploy ${name}`);
  return address;
}

function clientsOf(platform: Platform) {
  return createChainClients(platform.deps.chain.rpcUrl, platform.deps.chain.chainId);
}

/** Sends one deployer transaction and waits for a successful receipt. */
function asDeployer(platform: Platform, call: { to: Address; data: Hex }): Promise<Hex> {
  const key = platform.deps.chain.rpcUrl;
  const run = (deployerQueues.get(key) ?? Promise.resolve()).then(async () => {
    const { publicClient, walletClientFor } = clientsOf(platform);
    const hash = await walletClientFor(deployer).sendTransaction({ to: call.to, data: call.data });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`deployer transaction ${hash} reverted`);
    return hash;
  });
  deployerQueues.set(
    key,
    run.catch(() => undefined),
  );
  return run;
}

export interface PerkCollectionInput {
  /** The brand owning the collection (its Brand ID, a lowercase address). */
  brand: string;
  /** Default: a fresh id no other test uses. */
  collectionId?: bigint;
  price?: bigint;
  maxSupply?: bigint;
  maxPerUser?: bigint;
  chargesPerToken?: bigint;
  active?: boolean;
}

/** Creates a PerkNFT collection on the platform's chain as the deployer (COLLECTION_ADMIN_ROLE); returns its id. */
export async function createPerkCollectionOnChain(platform: Platform, input: PerkCollectionInput): Promise<bigint> {
  const collectionId = input.collectionId ?? BigInt(nextCollectionId++);
  await asDeployer(platform, {
    to: contract(platform, 'perkNft'),
    data: encodeFunctionData({
      abi: perkNFTAbi,
      functionName: 'createCollection',
      args: [
        collectionId,
        input.brand as Address,
        input.price ?? 0n,
        input.maxSupply ?? 0n,
        input.maxPerUser ?? 0n,
        input.chargesPerToken ?? 1n,
        input.active ?? true,
      ],
    }),
  });
  return collectionId;
}

/**
 * Claims one perk of a collection for `user` through the platform's relayer (PointsSale.claimPerk). The user
 * must already have approved PointsSale for the price (free collections need nothing). Returns the hash.
 */
export async function claimPerkOnChain(platform: Platform, user: Address, collectionId: bigint): Promise<Hex> {
  const submitted = await platform.deps.relayer.submit({
    to: contract(platform, 'pointsSale'),
    data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user, collectionId] }),
    brandId: null,
    userAddress: user,
    purpose: 'test-claim',
    collectionId,
  });
  const done = await platform.deps.relayer.waitFor(submitted.id, 15_000);
  if (done.status !== 'confirmed' || !done.hash) throw new Error(`claim failed: ${done.status} ${done.error}`);
  return done.hash;
}

let minterGranted = new WeakSet<Platform>();

/** Mints reward tokens to a wallet as the deployer (granting itself MINTER_ROLE once; the minter key stays the minter's). */
export async function fundUser(platform: Platform, wallet: Address, amount: bigint): Promise<void> {
  const token = contract(platform, 'rewardToken');
  if (!minterGranted.has(platform)) {
    await asDeployer(platform, {
      to: token,
      data: encodeFunctionData({
        abi: rewardTokenAbi,
        functionName: 'grantRole',
        args: [MINTER_ROLE, deployer.address],
      }),
    });
    minterGranted.add(platform);
  }
  await asDeployer(platform, {
    to: token,
    data: encodeFunctionData({ abi: rewardTokenAbi, functionName: 'mint', args: [wallet, amount] }),
  });
}

/** Forgets which platforms granted the deployer MINTER_ROLE (a test restarting a chain). */
export function resetPerkHelpers(): void {
  minterGranted = new WeakSet<Platform>();
}

export interface SignedPermit {
  owner: Address;
  spender: Address;
  value: bigint;
  deadline: bigint;
  v: number;
  r: Hex;
  s: Hex;
  /** The whole 65-byte signature. */
  signature: Hex;
}

/**
 * Signs an EIP-2612 permit for the platform's RewardToken (domain: name `PTS Reward`, version `1` — OZ
 * ERC20Permit(name) — the chain id and the token address). The nonce is read from the token unless given.
 */
export async function signPermit(
  platform: Platform,
  input: { privateKey: Hex; spender: Address; value: bigint; deadline?: bigint; nonce?: bigint },
): Promise<SignedPermit> {
  const owner = privateKeyToAccount(input.privateKey);
  const token = contract(platform, 'rewardToken');
  const nonce =
    input.nonce ??
    (await platform.deps.publicClient.readContract({
      address: token,
      abi: rewardTokenAbi,
      functionName: 'nonces',
      args: [owner.address],
    }));
  const deadline = input.deadline ?? BigInt(Math.floor(platform.deps.clock.now().getTime() / 1000) + 3600);
  const signature = await owner.signTypedData({
    domain: { name: REWARD_TOKEN_NAME, version: '1', chainId: platform.deps.chain.chainId, verifyingContract: token },
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
    message: { owner: owner.address, spender: input.spender, value: input.value, nonce, deadline },
  });
  const parsed = parseSignature(signature);
  const v = parsed.v !== undefined ? Number(parsed.v) : parsed.yParity + 27;
  return {
    owner: owner.address,
    spender: input.spender,
    value: input.value,
    deadline,
    v,
    r: parsed.r,
    s: parsed.s,
    signature,
  };
}
