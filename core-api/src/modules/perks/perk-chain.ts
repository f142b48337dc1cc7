import { AppError } from '@pts/shared';
import { BaseError, ContractFunctionRevertedError, type Hex } from 'viem';
import { perkNFTAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import type { ChainReads } from '../../chain/chain-reads.ts';
import type { ChainPublicClient, ChainWalletClient } from '../../chain/deploy.ts';

/** A PerkNFT collection's settings as the contract stores them (0 = unlimited for supply and per-user). */
export interface CollectionSettings {
  brand: `0x${string}`;
  price: bigint;
  maxSupply: bigint;
  maxPerUser: bigint;
  chargesPerToken: bigint;
  active: boolean;
}

/** On-chain perk operations (PerkNFT) and the token balance reads constraints need. */
export interface PerkChain {
  /** Whether collection writes are possible (a collection-admin key and the PerkNFT address are known). */
  readonly canWrite: boolean;
  /** The collection, or undefined when it does not exist. */
  getCollection(collectionId: bigint): Promise<CollectionSettings | undefined>;
  /** Perks claimed so far in each collection (PerkNFT.totalClaimed), in the order asked. */
  totalClaimed(collectionIds: bigint[]): Promise<bigint[]>;
  /** Creates the collection and waits for its receipt; returns the transaction hash. */
  createCollection(collectionId: bigint, settings: CollectionSettings): Promise<Hex>;
  /** Updates the collection and waits for its receipt; returns the transaction hash. */
  updateCollection(collectionId: bigint, settings: Omit<CollectionSettings, 'brand'>): Promise<Hex>;
  /** Live RewardToken balance of a wallet. */
  balanceOf(address: `0x${string}`): Promise<bigint>;
}

export interface PerkChainDeps {
  publicClient: ChainPublicClient;
  tokenAddress: `0x${string}`;
  /** Absent when this process knows no PerkNFT address. */
  perkNftAddress?: `0x${string}` | undefined;
  /** Where `totalClaimed` reads (a display: kept until a PerkNFT log); the node when absent. */
  reads?: Pick<ChainReads, 'totalClaimed'> | undefined;
  /** Holder of COLLECTION_ADMIN_ROLE (the deployer key); absent → reads only. */
  adminWallet?: ChainWalletClient | undefined;
}

/**
 * The viem adapter. Writes are serialized (one collection-admin transaction at a time from this process) so
 * the admin account's nonces never collide; each is simulated first so a revert surfaces with its reason.
 */
export function createPerkChain(deps: PerkChainDeps): PerkChain {
  const { publicClient } = deps;
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const nft = (): `0x${string}` => {
    if (!deps.perkNftAddress) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The PerkNFT contract address is unknown: set PTS_PERK_NFT_ADDRESS (or let the platform deploy the contracts)',
      );
    }
    return deps.perkNftAddress;
  };
  const admin = (): ChainWalletClient => {
    if (!deps.adminWallet) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'No collection-admin key: set PTS_DEPLOYER_PRIVATE_KEY (the account holding COLLECTION_ADMIN_ROLE on PerkNFT)',
      );
    }
    return deps.adminWallet;
  };

  const send = async (
    functionName: 'createCollection' | 'updateCollection',
    args: readonly unknown[],
  ): Promise<Hex> => {
    const wallet = admin();
    const address = nft();
    return serialized(async () => {
      try {
        const { request } = await publicClient.simulateContract({
          address,
          abi: perkNFTAbi,
          functionName,
          // biome-ignore lint/suspicious/noExplicitAny: args match the function chosen above
          args: args as any,
          account: wallet.account,
        });
        const hash = await wallet.writeContract(request);
        const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
        if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
        return hash;
      } catch (error) {
        throw describeRevert(error, functionName);
      }
    });
  };

  return {
    canWrite: Boolean(deps.adminWallet && deps.perkNftAddress),
    async getCollection(collectionId) {
      const address = nft();
      const exists = await publicClient.readContract({
        address,
        abi: perkNFTAbi,
        functionName: 'collectionExists',
        args: [collectionId],
      });
      if (!exists) return undefined;
      const c = await publicClient.readContract({
        address,
        abi: perkNFTAbi,
        functionName: 'collection',
        args: [collectionId],
      });
      return {
        brand: c.brand,
        price: c.price,
        maxSupply: c.maxSupply,
        maxPerUser: c.maxPerUser,
        chargesPerToken: c.chargesPerToken,
        active: c.active,
      };
    },
    async totalClaimed(collectionIds) {
      if (collectionIds.length === 0) return [];
      const address = nft();
      if (deps.reads) return deps.reads.totalClaimed(collectionIds);
      // The transport batches these reads into one JSON-RPC request.
      return Promise.all(
        collectionIds.map((id) =>
          publicClient.readContract({ address, abi: perkNFTAbi, functionName: 'totalClaimed', args: [id] }),
        ),
      );
    },
    createCollection: (collectionId, s) =>
      send('createCollection', [
        collectionId,
        s.brand,
        s.price,
        s.maxSupply,
        s.maxPerUser,
        s.chargesPerToken,
        s.active,
      ] as const),
    updateCollection: (collectionId, s) =>
      send('updateCollection', [
        collectionId,
        s.price,
        s.maxSupply,
        s.maxPerUser,
        s.chargesPerToken,
        s.active,
      ] as const),
    balanceOf: (address) =>
      publicClient.readContract({
        address: deps.tokenAddress,
        abi: rewardTokenAbi,
        functionName: 'balanceOf',
        args: [address],
      }),
  };
}

/** A revert becomes a 409 naming the contract error (e.g. MaxSupplyBelowClaimed); anything else passes through. */
function describeRevert(error: unknown, functionName: string): unknown {
  if (error instanceof BaseError) {
    const revert = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) {
      const name = revert.data?.errorName ?? revert.reason ?? 'revert';
      const args = (revert.data?.args ?? []).map((arg) => String(arg));
      return new AppError('CONFLICT', `PerkNFT.${functionName} reverted: ${name}(${args.join(', ')})`, {
        reason: name,
        args,
      });
    }
  }
  return error;
}
