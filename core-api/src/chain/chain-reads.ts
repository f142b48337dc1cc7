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

/** What the reads share: the caches, how far the logs were applied, and the subscription that pushes blocks. */
interface FollowState {
  deps: ChainReadsDeps;
  token: string;
  perkNft: string | undefined;
  maxEntries: number;
  balances: Map<string, bigint>;
  claimed: Map<string, bigint>;
  /** The newest block whose logs have been applied; undefined until the first head (or after a loss). */
  processed: bigint | undefined;
  /** The newest block known to exist. */
  target: bigint | undefined;
  catchingUp: boolean;
  stopped: boolean;
  unwatch: (() => void) | undefined;
  socketClient: PublicClient | undefined;
  retry: NodeJS.Timeout | undefined;
  blocks: BlockSource | undefined;
}

export function createChainReads(deps: ChainReadsDeps): ChainReads {
  const state: FollowState = {
    deps,
    token: deps.tokenAddress.toLowerCase(),
    perkNft: deps.perkNftAddress?.toLowerCase(),
    maxEntries: deps.maxEntries ?? 100_000,
    balances: new Map(),
    claimed: new Map(),
    processed: undefined,
    target: undefined,
    catchingUp: false,
    stopped: false,
    unwatch: undefined,
    socketClient: undefined,
    retry: undefined,
    blocks: undefined,
  };
  state.blocks = deps.blocks ?? (deps.webSocketUrl ? webSocketBlocks(state, deps.webSocketUrl) : undefined);
  subscribe(state);
  return {
    balanceOf: (wallet) => readBalance(state, wallet),
    totalClaimed: (collectionIds) => readTotalClaimed(state, collectionIds),
    observeBlock: (blockNumber) => observeBlock(state, blockNumber),
    get following() {
      return usable(state);
    },
    get head() {
      return usable(state) ? state.processed : undefined;
    },
    stop: () => stopReads(state),
  };
}

function dropAll(state: FollowState): void {
  state.balances.clear();
  state.claimed.clear();
}

/** Whether memory may answer: subscribed, caught up, not stopped. */
function usable(state: FollowState): boolean {
  return state.processed !== undefined && state.target === state.processed && !state.stopped;
}

/** Reads the logs of every block between the last applied and the newest known, forgetting what they touch. */
async function catchUp(state: FollowState): Promise<void> {
  if (state.catchingUp) return;
  state.catchingUp = true;
  try {
    while (
      state.target !== undefined &&
      state.processed !== undefined &&
      state.target > state.processed &&
      !state.stopped
    ) {
      const from = state.processed + 1n;
      const to = state.target;
      if (to - state.processed > MAX_LOG_RANGE) dropAll(state);
      else await applyLogs(state, from, to);
      state.processed = to;
    }
  } finally {
    state.catchingUp = false;
  }
}

/** Forgets the balances a token Transfer of these blocks named, and every claim count if a PerkNFT log came. */
async function applyLogs(state: FollowState, from: bigint, to: bigint): Promise<void> {
  const { deps } = state;
  try {
    const logs = await deps.publicClient.getLogs({
      address: (state.perkNft ? [deps.tokenAddress, deps.perkNftAddress] : [deps.tokenAddress]) as Address[],
      fromBlock: from,
      toBlock: to,
    });
    for (const log of logs) {
      const address = log.address.toLowerCase();
      if (address === state.perkNft) state.claimed.clear();
      else if (address === state.token && log.topics[0] === TRANSFER_TOPIC) {
        for (const wallet of [topicAddress(log.topics[1]), topicAddress(log.topics[2])]) {
          if (wallet) state.balances.delete(wallet);
        }
      }
    }
  } catch (error) {
    // Logs unknown for these blocks: nothing kept can be trusted past them.
    deps.logger.warn({ err: error }, 'chain reads: could not read the logs of new blocks; reading afresh');
    dropAll(state);
  }
}

/** A newer block: catch up to it (ignored until following). */
function observeBlock(state: FollowState, blockNumber: bigint): void {
  if (state.processed === undefined || state.target === undefined || blockNumber <= state.target) return;
  state.target = blockNumber;
  void catchUp(state);
}

/** The push was lost: forget everything, read from the node, and subscribe again shortly. */
function lose(state: FollowState, error: unknown): void {
  state.deps.logger.warn(
    { err: error },
    'chain reads: block subscription lost; reading from the node until it is back',
  );
  state.unwatch?.();
  state.unwatch = undefined;
  dropAll(state);
  state.processed = undefined;
  state.target = undefined;
  if (!state.stopped) state.retry = setTimeout(() => subscribe(state), RESUBSCRIBE_MS);
}

/** New block numbers from a WebSocket `newHeads` subscription (one socket client, kept for stop). */
function webSocketBlocks(state: FollowState, url: string): BlockSource {
  return (handlers) => {
    state.socketClient ??= createPublicClient({
      chain: state.deps.chain,
      transport: webSocket(url, { retryCount: 0 }),
    }) as PublicClient;
    return state.socketClient.watchBlockNumber({ emitMissed: true, ...handlers });
  };
}

function subscribe(state: FollowState): void {
  if (state.stopped || !state.blocks) return;
  const onError = (error: unknown) => lose(state, error);
  state.unwatch = state.blocks({ onBlockNumber: (n) => observeBlock(state, n), onError });
  // The subscription pushes blocks mined from now on; the head now is where following starts (a block
  // pushed meanwhile is at or below it, or moves the target past it).
  state.deps.publicClient
    .getBlockNumber({ cacheTime: 0 })
    .then((head) => {
      if (state.stopped || state.processed !== undefined) return;
      dropAll(state);
      state.processed = head;
      state.target = head;
    })
    .catch(onError);
}

/** Reads `key` from `cache`, or from the node, keeping the answer only if no block came meanwhile. */
async function readThrough<V>(state: FollowState, cache: Map<string, V>, key: string, read: () => Promise<V>) {
  if (usable(state)) {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
  }
  const at = usable(state) ? state.processed : undefined;
  const value = await read();
  if (at !== undefined && usable(state) && state.processed === at) {
    if (cache.size >= state.maxEntries) cache.clear();
    cache.set(key, value);
  }
  return value;
}

function readBalance(state: FollowState, wallet: Address): Promise<bigint> {
  const { publicClient, tokenAddress } = state.deps;
  return readThrough(state, state.balances, wallet.toLowerCase(), () =>
    publicClient.readContract({
      address: tokenAddress,
      abi: rewardTokenAbi,
      functionName: 'balanceOf',
      args: [wallet],
    }),
  );
}

async function readTotalClaimed(state: FollowState, collectionIds: readonly bigint[]): Promise<bigint[]> {
  const address = state.deps.perkNftAddress;
  if (!address) throw new Error('chain reads: no PerkNFT address');
  const { publicClient } = state.deps;
  // The transport batches the misses into one JSON-RPC request.
  return Promise.all(
    collectionIds.map((id) =>
      readThrough(state, state.claimed, id.toString(), () =>
        publicClient.readContract({ address, abi: perkNFTAbi, functionName: 'totalClaimed', args: [id] }),
      ),
    ),
  );
}

async function stopReads(state: FollowState): Promise<void> {
  state.stopped = true;
  if (state.retry) clearTimeout(state.retry);
  state.unwatch?.();
  dropAll(state);
  // viem keeps the socket in a shared cache; closing it lets the process exit.
  const transport = state.socketClient?.transport as { getRpcClient?: () => Promise<{ close(): void }> } | undefined;
  if (transport?.getRpcClient) {
    await transport
      .getRpcClient()
      .then((rpc) => rpc.close())
      .catch(() => undefined);
  }
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
