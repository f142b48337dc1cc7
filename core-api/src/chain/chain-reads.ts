import type { Logger } from 'pino';
import {
  type Address,
  type Chain,
  createPublicClient,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  toEventSelector,
  webSocket,
} from 'viem';
import { perkNFTAbi, rewardTokenAbi } from './artifacts/index.ts';
import type { ChainPublicClient } from './deploy.ts';

/**
 * Chain reads that answer from memory while the chain has not touched them: token balances and perks claimed,
 * as of the newest block this process has caught up with. A block is learned from the node's push (a
 * WebSocket `newHeads` subscription) or from a receipt this process itself received; reads go to the node
 * until the block's logs have been read, and then only wallets a `Transfer` of the token named (and, for
 * claims, any block with a PerkNFT log) are read again. Without a subscription every read goes to the node.
 * Reorganisations are not followed: on an L2 whose blocks the sequencer orders, a read may show a block that
 * was later replaced until a log of a new block touches the wallet.
 */
export interface ChainReads {
  /** RewardToken balance of `wallet`. */
  balanceOf(wallet: Address): Promise<bigint>;
  /** PerkNFT.totalClaimed of each collection, in the order asked. */
  totalClaimed(collectionIds: readonly bigint[]): Promise<bigint[]>;
  /** A block this process learned of (a receipt): reads go to the node until its logs have been read. */
  observeBlock(blockNumber: bigint): void;
  /** Whether reads may be answered from memory now (subscribed and caught up). */
  readonly following: boolean;
  /**
   * The block reads are answered at while `following` (its logs applied); undefined otherwise. Answers that
   * hold a chain read stay valid while it has not moved (modules/ledger/member-answers.ts).
   */
  readonly head: bigint | undefined;
  stop(): Promise<void>;
}

export interface ChainReadsDeps {
  /** Reads and log queries (the process's HTTP client). */
  publicClient: ChainPublicClient;
  chain: Chain;
  /** Where new blocks are pushed (`ws://…`); absent → every read goes to the node. */
  webSocketUrl?: string | undefined;
  tokenAddress: Address;
  perkNftAddress?: Address | undefined;
  logger: Logger;
  /** At most this many balances are kept (then all are dropped and read again). */
  maxEntries?: number;
  /** Where new block numbers come from instead of the WebSocket (tests: a source that never pushes). */
  blocks?: BlockSource | undefined;
}

/** Pushes new block numbers until the returned function is called; `onError` when the push is lost. */
export type BlockSource = (handlers: { onBlockNumber(n: bigint): void; onError(error: Error): void }) => () => void;

const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)');
/** A gap longer than this (a long disconnection) drops everything instead of reading its logs. */
const MAX_LOG_RANGE = 1_000n;
const RESUBSCRIBE_MS = 1_000;

/** The address in a 32-byte indexed topic. */
function topicAddress(topic: Hex | undefined): string | undefined {
  return topic ? `0x${topic.slice(-40)}`.toLowerCase() : undefined;
}

export function createChainReads(deps: ChainReadsDeps): ChainReads {
  const { publicClient } = deps;
  const token = deps.tokenAddress.toLowerCase();
  const perkNft = deps.perkNftAddress?.toLowerCase();
  const maxEntries = deps.maxEntries ?? 100_000;
  const balances = new Map<string, bigint>();
  const claimed = new Map<string, bigint>();
  /** The newest block whose logs have been applied; undefined until the first head (or after a loss). */
  let processed: bigint | undefined;
  /** The newest block known to exist. */
  let target: bigint | undefined;
  let catchingUp = false;
  let stopped = false;
  let unwatch: (() => void) | undefined;
  let socketClient: PublicClient | undefined;
  let retry: NodeJS.Timeout | undefined;

  const dropAll = () => {
    balances.clear();
    claimed.clear();
  };
  const usable = () => processed !== undefined && target === processed && !stopped;

  const catchUp = async () => {
    if (catchingUp) return;
    catchingUp = true;
    try {
      while (target !== undefined && processed !== undefined && target > processed && !stopped) {
        const from = processed + 1n;
        const to = target;
        if (to - processed > MAX_LOG_RANGE) {
          dropAll();
          processed = to;
          continue;
        }
        try {
          const logs = await publicClient.getLogs({
            address: (perkNft ? [deps.tokenAddress, deps.perkNftAddress] : [deps.tokenAddress]) as Address[],
            fromBlock: from,
            toBlock: to,
          });
          for (const log of logs) {
            const address = log.address.toLowerCase();
            if (address === perkNft) claimed.clear();
            else if (address === token && log.topics[0] === TRANSFER_TOPIC) {
              for (const wallet of [topicAddress(log.topics[1]), topicAddress(log.topics[2])]) {
                if (wallet) balances.delete(wallet);
              }
            }
          }
        } catch (error) {
          // Logs unknown for these blocks: nothing kept can be trusted past them.
          deps.logger.warn({ err: error }, 'chain reads: could not read the logs of new blocks; reading afresh');
          dropAll();
        }
        processed = to;
      }
    } finally {
      catchingUp = false;
    }
  };

  const observeBlock = (blockNumber: bigint) => {
    if (processed === undefined || target === undefined || blockNumber <= target) return;
    target = blockNumber;
    void catchUp();
  };

  const lose = (error: unknown) => {
    deps.logger.warn({ err: error }, 'chain reads: block subscription lost; reading from the node until it is back');
    unwatch?.();
    unwatch = undefined;
    dropAll();
    processed = undefined;
    target = undefined;
    if (!stopped) retry = setTimeout(subscribe, RESUBSCRIBE_MS);
  };

  const webSocketBlocks = (url: string): BlockSource => {
    return (handlers) => {
      socketClient ??= createPublicClient({
        chain: deps.chain,
        transport: webSocket(url, { retryCount: 0 }),
      }) as PublicClient;
      return socketClient.watchBlockNumber({ emitMissed: true, ...handlers });
    };
  };
  const blocks = deps.blocks ?? (deps.webSocketUrl ? webSocketBlocks(deps.webSocketUrl) : undefined);

  function subscribe() {
    if (stopped || !blocks) return;
    unwatch = blocks({ onBlockNumber: observeBlock, onError: lose });
    // The subscription pushes blocks mined from now on; the head now is where following starts (a block
    // pushed meanwhile is at or below it, or moves the target past it).
    publicClient
      .getBlockNumber({ cacheTime: 0 })
      .then((head) => {
        if (stopped || processed !== undefined) return;
        dropAll();
        processed = head;
        target = head;
      })
      .catch(lose);
  }
  subscribe();

  /** Reads `key` from `cache`, or from the node, keeping the answer only if no block came meanwhile. */
  const through = async <V>(cache: Map<string, V>, key: string, read: () => Promise<V>): Promise<V> => {
    if (usable()) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
    }
    const at = usable() ? processed : undefined;
    const value = await read();
    if (at !== undefined && usable() && processed === at) {
      if (cache.size >= maxEntries) cache.clear();
      cache.set(key, value);
    }
    return value;
  };

  return {
    balanceOf: (wallet) =>
      through(balances, wallet.toLowerCase(), () =>
        publicClient.readContract({
          address: deps.tokenAddress,
          abi: rewardTokenAbi,
          functionName: 'balanceOf',
          args: [wallet],
        }),
      ),
    async totalClaimed(collectionIds) {
      const address = deps.perkNftAddress;
      if (!address) throw new Error('chain reads: no PerkNFT address');
      // The transport batches the misses into one JSON-RPC request.
      return Promise.all(
        collectionIds.map((id) =>
          through(claimed, id.toString(), () =>
            publicClient.readContract({ address, abi: perkNFTAbi, functionName: 'totalClaimed', args: [id] }),
          ),
        ),
      );
    },
    observeBlock,
    get following() {
      return usable();
    },
    get head() {
      return usable() ? processed : undefined;
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      unwatch?.();
      dropAll();
      // viem keeps the socket in a shared cache; closing it lets the process exit.
      const transport = socketClient?.transport as { getRpcClient?: () => Promise<{ close(): void }> } | undefined;
      if (transport?.getRpcClient) {
        await transport
          .getRpcClient()
          .then((rpc) => rpc.close())
          .catch(() => undefined);
      }
    },
  };
}

/**
 * Tells `reads` of every receipt `publicClient` hands this process (its own transactions: mints, relays,
 * perk collections), so a read that follows a confirmed write never answers from before it.
 */
export function followReceipts(publicClient: ChainPublicClient, reads: Pick<ChainReads, 'observeBlock'>): void {
  const client = publicClient as unknown as {
    getTransactionReceipt: (...args: unknown[]) => Promise<TransactionReceipt>;
    waitForTransactionReceipt: (...args: unknown[]) => Promise<TransactionReceipt>;
  };
  for (const name of ['getTransactionReceipt', 'waitForTransactionReceipt'] as const) {
    const original = client[name].bind(client);
    client[name] = async (...args: unknown[]) => {
      const receipt = await original(...args);
      reads.observeBlock(receipt.blockNumber);
      return receipt;
    };
  }
}
