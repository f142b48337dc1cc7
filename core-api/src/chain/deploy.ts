import type { Logger } from 'pino';
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import type { Database } from '../db/database.ts';
import { rewardTokenAbi, rewardTokenBytecode } from './artifacts/index.ts';

export const SONEIUM_CHAIN_ID = 1868;
export const REWARD_TOKEN_NAME = 'PTS Reward';
export const REWARD_TOKEN_SYMBOL = 'PTS';
/** keccak256("MINTER_ROLE"), as in RewardToken.sol. */
export const MINTER_ROLE = '0x9f2df0fed2c77648de5860a4cc508cd0818c85b8b8a1ab4ceeef8d981c8956a6' as const;

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
  /** Signs as the deployer, which becomes the token's admin. */
  walletClient: ChainWalletClient;
  chainId: number;
  minterAddress: Address;
  logger: Logger;
}

export interface DeployedContracts {
  rewardToken: Address;
}

const REWARD_TOKEN = 'RewardToken';

/**
 * Reuses the reward token recorded in `chain_deployments` when code still exists at its address (a chain
 * reset, such as anvil without its state file, wipes it); otherwise deploys and records a new one. Either
 * way the minter ends up holding MINTER_ROLE.
 */
export async function ensureContracts(deps: EnsureContractsDeps): Promise<DeployedContracts> {
  const { db, publicClient, walletClient, chainId, minterAddress, logger } = deps;
  const recorded = await db
    .selectFrom('chain_deployments')
    .select(['address', 'tx_hash'])
    .where('chain_id', '=', chainId)
    .where('name', '=', REWARD_TOKEN)
    .executeTakeFirst();

  let rewardToken: Address | undefined;
  if (recorded) {
    const code = await publicClient.getCode({ address: recorded.address as Address });
    if (code && code !== '0x') {
      rewardToken = getAddress(recorded.address);
      logger.info({ chainId, rewardToken }, 'reusing deployed RewardToken');
    } else {
      logger.warn(
        { chainId, address: recorded.address },
        'recorded RewardToken has no code (chain was reset); redeploying',
      );
    }
  }

  if (!rewardToken) {
    const hash = await walletClient.deployContract({
      abi: rewardTokenAbi,
      bytecode: rewardTokenBytecode,
      args: [REWARD_TOKEN_NAME, REWARD_TOKEN_SYMBOL, walletClient.account.address],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`RewardToken deployment ${hash} failed (status ${receipt.status})`);
    }
    rewardToken = getAddress(receipt.contractAddress);
    await recordDeployment(db, chainId, REWARD_TOKEN, rewardToken, hash);
    logger.info({ chainId, rewardToken, hash }, 'deployed RewardToken');
  }

  const isMinter = await publicClient.readContract({
    address: rewardToken,
    abi: rewardTokenAbi,
    functionName: 'hasRole',
    args: [MINTER_ROLE, minterAddress],
  });
  if (!isMinter) {
    const hash = await walletClient.writeContract({
      address: rewardToken,
      abi: rewardTokenAbi,
      functionName: 'grantRole',
      args: [MINTER_ROLE, minterAddress],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`granting MINTER_ROLE to ${minterAddress} reverted (${hash})`);
    logger.info({ rewardToken, minterAddress, hash }, 'granted MINTER_ROLE');
  }
  return { rewardToken };
}

async function recordDeployment(
  db: Database,
  chainId: number,
  name: string,
  address: Address,
  txHash: Hex,
): Promise<void> {
  await db
    .insertInto('chain_deployments')
    .values({
      chain_id: chainId,
      name,
      address: address.toLowerCase(),
      tx_hash: txHash,
      created_at: new Date(),
    })
    .onConflict((oc) =>
      oc
        .columns(['chain_id', 'name'])
        .doUpdateSet({ address: address.toLowerCase(), tx_hash: txHash, created_at: new Date() }),
    )
    .execute();
}
