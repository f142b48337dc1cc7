import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  parseAbi,
  type Transport,
  toHex,
  type WalletClient,
} from 'viem';
import type { Database } from '../db/database.ts';
import {
  businessEscrowAbi,
  businessEscrowBytecode,
  perkNFTAbi,
  perkNFTBytecode,
  pointsSaleAbi,
  pointsSaleBytecode,
  rewardTokenAbi,
  rewardTokenBytecode,
} from './artifacts/index.ts';

export const SONEIUM_CHAIN_ID = 1868;
export const REWARD_TOKEN_NAME = 'PTS Reward';
export const REWARD_TOKEN_SYMBOL = 'PTS';
/** keccak256("MINTER_ROLE"), as in RewardToken.sol. */
export const MINTER_ROLE = '0x9f2df0fed2c77648de5860a4cc508cd0818c85b8b8a1ab4ceeef8d981c8956a6' as const;
/** keccak256("REVERSER_ROLE"), as in RewardToken.sol: takes reversed rewards back (held by the minter's signer). */
export const REVERSER_ROLE = '0x2262b7d66097ba67f6d915683eb65bcf88759c62029085423eeb4a9a767491d3' as const;

export type ChainPublicClient = PublicClient<Transport, Chain>;
export type ChainWalletClient = WalletClient<Transport, Chain, Account>;

export interface ChainClients {
  chain: Chain;
  publicClient: ChainPublicClient;
  /** A wallet client that signs locally with `account` and sends through the same RPC. */
  walletClientFor(account: Account): ChainWalletClient;
}

/** The chain object viem needs: Soneium for 1868 (also what local anvil pretends to be), generic otherwise. */
export function defineAppChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === SONEIUM_CHAIN_ID ? 'Soneium' : `Chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** Builds the viem clients for one RPC endpoint; concurrent reads share HTTP requests (JSON-RPC batching). */
export function createChainClients(rpcUrl: string, chainId: number): ChainClients {
  const chain = defineAppChain(chainId, rpcUrl);
  const transport = http(rpcUrl, { batch: { wait: 0 }, retryCount: 2 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 }) as ChainPublicClient;
  return {
    chain,
    publicClient,
    walletClientFor: (account) => createWalletClient({ account, chain, transport }),
  };
}

export interface EnsureContractsDeps {
  db: Database;
  publicClient: ChainPublicClient;
  /** Signs as the deployer, which becomes the admin of every contract. */
  walletClient: ChainWalletClient;
  chainId: number;
  minterAddress: Address;
  /** Gets RELAYER_ROLE on PointsSale and OPERATOR_ROLE on PerkNFT; none when unset. */
  relayerAddress?: Address;
  logger: Logger;
  /** Stamps `chain_deployments.created_at`. */
  clock: Clock;
}

export interface DeployedContracts {
  rewardToken: Address;
  perkNft: Address;
  pointsSale: Address;
  businessEscrow: Address;
}

const REWARD_TOKEN = 'RewardToken';
const BUSINESS_ESCROW = 'BusinessEscrow';
const PERK_NFT = 'PerkNFT';
const POINTS_SALE = 'PointsSale';

/** ERC-1155 metadata URI template of the perks (`{id}` is the hex token id, per the standard). */
export const PERK_METADATA_URI = '';

const role = (name: string): Hex => keccak256(toHex(name));
/** PerkNFT: may mint (the PointsSale contract). */
export const SALE_ROLE = role('SALE_ROLE');
/** PerkNFT: may spend holders' charges (the relayer). */
export const OPERATOR_ROLE = role('OPERATOR_ROLE');
/** PerkNFT: creates and updates collections (the deployer; a brand may also update its own collections). */
export const COLLECTION_ADMIN_ROLE = role('COLLECTION_ADMIN_ROLE');
/** PointsSale: may call claimPerk / claimPerkWithPermit (the relayer). */
export const RELAYER_ROLE = role('RELAYER_ROLE');

interface Deployable {
  name: string;
  abi: Abi;
  bytecode: Hex;
  args: readonly unknown[];
  /** Whether a recorded instance with code still fits (its immutable links point at the current contracts). */
  fits?: (address: Address) => Promise<boolean>;
  /**
   * Whether losing the recorded instance loses data the ledger vouches for; a new instance would then be an
   * empty copy the ledger does not match, so the start is refused instead (see refuseTokenRedeploy).
   */
  guardsLedger?: boolean;
}

/** Thrown instead of deploying a new reward token while the ledger holds mints on the recorded one. */
export class ChainLostLedgerError extends Error {
  override readonly name = 'ChainLostLedgerError';
}

/**
 * A chain without the recorded token but a ledger with mints on it means the chain lost its state (an anvil
 * whose state file is gone or older than the deployment, or the wrong RPC URL). A fresh token would start
 * at zero balances while the ledger says otherwise, and replayed mints would go to an address without code,
 * where they "succeed" doing nothing: refuse, and say how to recover.
 */
async function refuseTokenRedeploy(deps: EnsureContractsDeps, name: string, address: Address): Promise<void> {
  const { count } = await deps.db
    .selectFrom('chain_txs')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('chain_id', '=', deps.chainId)
    .executeTakeFirstOrThrow();
  if (Number(count) === 0) return;
  throw new ChainLostLedgerError(
    `The chain (id ${deps.chainId}) has no code at the recorded ${name} ${address}, but the ledger holds ` +
      `${count} mint transactions on it: the chain lost its state. Restore it (the data dir's anvil-state.json ` +
      'for the local chain, or PTS_RPC_URL of the chain that holds the token) and start again; deploying a new ' +
      'token would leave every balance the ledger records behind. To start over, use an empty PTS_DATA_DIR ' +
      '(or database).',
  );
}

/** The transaction that deployed the contract at `address` on this chain, when this platform deployed it. */
export async function findDeploymentTx(
  db: Database,
  chainId: number,
  address: string,
): Promise<`0x${string}` | undefined> {
  const row = await db
    .selectFrom('chain_deployments')
    .select('tx_hash')
    .where('chain_id', '=', chainId)
    .where('address', '=', address.toLowerCase())
    .executeTakeFirst();
  return (row?.tx_hash as `0x${string}` | null | undefined) ?? undefined;
}

/**
 * Reuses the contract recorded in `chain_deployments` when code still exists at its address (a chain reset,
 * such as anvil without its state file, wipes it) and it still fits; otherwise deploys and records a new one.
 */
async function ensureDeployed(deps: EnsureContractsDeps, contract: Deployable): Promise<Address> {
  const { db, publicClient, walletClient, chainId, logger } = deps;
  const { name } = contract;
  const recorded = await db
    .selectFrom('chain_deployments')
    .select(['address', 'tx_hash'])
    .where('chain_id', '=', chainId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (recorded) {
    const address = getAddress(recorded.address);
    const code = await publicClient.getCode({ address });
    if (!code || code === '0x') {
      if (contract.guardsLedger) await refuseTokenRedeploy(deps, name, address);
      logger.warn({ chainId, address }, `recorded ${name} has no code (chain was reset); redeploying`);
    } else if (contract.fits && !(await contract.fits(address))) {
      logger.warn({ chainId, address }, `recorded ${name} is wired to other contracts; redeploying`);
    } else {
      logger.info({ chainId, address }, `reusing deployed ${name}`);
      return address;
    }
  }
  const hash = await walletClient.deployContract({
    abi: contract.abi,
    bytecode: contract.bytecode,
    args: contract.args,
  } as Parameters<ChainWalletClient['deployContract']>[0]);
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new Error(`${name} deployment ${hash} failed (status ${receipt.status})`);
  }
  const address = getAddress(receipt.contractAddress);
  await recordDeployment(db, chainId, name, address, hash, deps.clock.now());
  logger.info({ chainId, address, hash }, `deployed ${name}`);
  return address;
}

const accessControlAbi = parseAbi([
  'function hasRole(bytes32 role, address account) view returns (bool)',
  'function grantRole(bytes32 role, address account)',
]);

/** Grants `roleId` on `contract` to `account` unless it already holds it. */
async function ensureRole(
  deps: EnsureContractsDeps,
  contract: Address,
  roleName: string,
  roleId: Hex,
  account: Address,
): Promise<void> {
  const { publicClient, walletClient, logger } = deps;
  const has = await publicClient.readContract({
    address: contract,
    abi: accessControlAbi,
    functionName: 'hasRole',
    args: [roleId, account],
  });
  if (has) return;
  const hash = await walletClient.writeContract({
    address: contract,
    abi: accessControlAbi,
    functionName: 'grantRole',
    args: [roleId, account],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`granting ${roleName} to ${account} reverted (${hash})`);
  logger.info({ contract, account, hash }, `granted ${roleName}`);
}

async function readAddress(
  publicClient: ChainPublicClient,
  address: Address,
  functionName: 'token' | 'perkNft' | 'treasury',
): Promise<Address | undefined> {
  try {
    const abi = parseAbi([`function ${functionName}() view returns (address)`]);
    return getAddress(await publicClient.readContract({ address, abi, functionName }));
  } catch {
    return undefined;
  }
}

/**
 * Ensures the reward token, the business escrow, the perk NFT and the points sale exist (reusing the ones
 * recorded in `chain_deployments` while their code exists and they are wired to each other), and that the
 * roles are in place: MINTER_ROLE and REVERSER_ROLE on the token for the minter, SALE_ROLE on PerkNFT for PointsSale and, when a
 * relayer is given, RELAYER_ROLE on PointsSale and OPERATOR_ROLE on PerkNFT for it. Roles are only ever
 * granted, never revoked (a former relayer keeps its roles until an admin revokes them).
 */
export async function ensureContracts(deps: EnsureContractsDeps): Promise<DeployedContracts> {
  const { publicClient, walletClient, minterAddress, relayerAddress } = deps;
  const admin = walletClient.account.address;

  const rewardToken = await ensureDeployed(deps, {
    name: REWARD_TOKEN,
    abi: rewardTokenAbi,
    bytecode: rewardTokenBytecode,
    args: [REWARD_TOKEN_NAME, REWARD_TOKEN_SYMBOL, admin],
    guardsLedger: true,
  });
  await ensureRole(deps, rewardToken, 'MINTER_ROLE', MINTER_ROLE, minterAddress);
  await ensureRole(deps, rewardToken, 'REVERSER_ROLE', REVERSER_ROLE, minterAddress);

  const businessEscrow = await ensureDeployed(deps, {
    name: BUSINESS_ESCROW,
    abi: businessEscrowAbi,
    bytecode: businessEscrowBytecode,
    args: [rewardToken],
    fits: async (address) => (await readAddress(publicClient, address, 'token')) === rewardToken,
  });
  const perkNft = await ensureDeployed(deps, {
    name: PERK_NFT,
    abi: perkNFTAbi,
    bytecode: perkNFTBytecode,
    args: [PERK_METADATA_URI, admin],
  });
  const pointsSale = await ensureDeployed(deps, {
    name: POINTS_SALE,
    abi: pointsSaleAbi,
    bytecode: pointsSaleBytecode,
    args: [rewardToken, perkNft, businessEscrow, admin],
    fits: async (address) =>
      (await readAddress(publicClient, address, 'token')) === rewardToken &&
      (await readAddress(publicClient, address, 'perkNft')) === perkNft &&
      (await readAddress(publicClient, address, 'treasury')) === businessEscrow,
  });
  await ensureRole(deps, perkNft, 'SALE_ROLE', SALE_ROLE, pointsSale);
  if (relayerAddress) {
    await ensureRole(deps, pointsSale, 'RELAYER_ROLE', RELAYER_ROLE, relayerAddress);
    await ensureRole(deps, perkNft, 'OPERATOR_ROLE', OPERATOR_ROLE, relayerAddress);
  }
  return { rewardToken, perkNft, pointsSale, businessEscrow };
}

async function recordDeployment(
  db: Database,
  chainId: number,
  name: string,
  address: Address,
  txHash: Hex,
  at: Date,
): Promise<void> {
  await db
    .insertInto('chain_deployments')
    .values({
      chain_id: chainId,
      name,
      address: address.toLowerCase(),
      tx_hash: txHash,
      created_at: at,
    })
    .onConflict((oc) =>
      oc.columns(['chain_id', 'name']).doUpdateSet({ address: address.toLowerCase(), tx_hash: txHash, created_at: at }),
    )
    .execute();
}
