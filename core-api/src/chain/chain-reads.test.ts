import { type Address, createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { type ChainReads, createChainReads, followReceipts } from './chain-reads.ts';
import type { ChainPublicClient } from './deploy.ts';
import { silentLogger, startTestChain, type TestChain } from './test-chain.ts';

// Real anvil, real WebSocket subscription: balances are kept until a block's logs name the wallet.

let database: TestDatabase;
let chain: TestChain;
let client: ChainPublicClient;
let reads: ChainReads;
/** balanceOf calls that reached the node. */
let nodeReads = 0;

const wallet = (): Address => privateKeyToAccount(generatePrivateKey()).address;

/** Sends `RewardToken.mint` as the minter; the caller waits for the receipt where it wants. */
function sendMint(to: Address, amount: bigint) {
  return chain.clients.walletClientFor(privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY)).writeContract({
    address: chain.tokenAddress,
    abi: rewardTokenAbi,
    functionName: 'mint',
    args: [to, amount],
  });
}

/** Reads over the counting client, with `options` (a block source, or none: no subscription). */
function readsOverClient(options: Partial<Parameters<typeof createChainReads>[0]>) {
  return createChainReads({
    publicClient: client,
    chain: chain.clients.chain,
    tokenAddress: chain.tokenAddress,
    logger: silentLogger,
    ...options,
  });
}

/** Mints through a client of its own (another process, say): this process learns of it only from the chain. */
async function mintElsewhere(to: Address, amount: bigint) {
  const hash = await sendMint(to, amount);
  const outsider = createPublicClient({ transport: http(chain.anvil.rpcUrl) });
  await outsider.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return hash;
}

/** Mints elsewhere, then waits until the reads show it and have caught up with its block. */
async function mintAndFollow(to: Address, amount: bigint) {
  const expected = (await chain.balanceOf(to)) + amount;
  await mintElsewhere(to, amount);
  await until(async () => (await reads.balanceOf(to)) === expected);
  await until(async () => reads.following);
}

async function until(check: () => Promise<boolean>, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
  client = createPublicClient({
    chain: chain.clients.chain,
    transport: http(chain.anvil.rpcUrl),
    pollingInterval: 20,
  }) as ChainPublicClient;
  const readContract = client.readContract.bind(client);
  client.readContract = ((args: Parameters<typeof readContract>[0]) => {
    if (args.functionName === 'balanceOf') nodeReads += 1;
    return readContract(args);
  }) as typeof client.readContract;
  reads = createChainReads({
    publicClient: client,
    chain: chain.clients.chain,
    webSocketUrl: chain.anvil.rpcUrl.replace(/^http/, 'ws'),
    tokenAddress: chain.tokenAddress,
    logger: silentLogger,
  });
  followReceipts(client, reads);
  await until(async () => reads.following);
});

afterAll(async () => {
  await reads?.stop();
  await chain?.stop();
  await database?.close();
});

describe('chain reads', () => {
  it('answers a balance again from memory while no block touches the wallet', async () => {
    const alice = wallet();
    await mintAndFollow(alice, 5n);
    await reads.balanceOf(alice);
    const before = nodeReads;
    expect(await reads.balanceOf(alice)).toBe(5n);
    expect(await reads.balanceOf(alice)).toBe(5n);
    expect(nodeReads).toBe(before);
  });

  it('reads a wallet again after a block transfers to it, even one sent by another process', async () => {
    const bob = wallet();
    expect(await reads.balanceOf(bob)).toBe(0n);
    // The node pushes the block; its logs name bob, so the next reads ask the node.
    await mintAndFollow(bob, 7n);
    const before = nodeReads;
    expect(await reads.balanceOf(bob)).toBe(7n);
    // Read once more after the block's logs were applied, then kept.
    expect(await reads.balanceOf(bob)).toBe(7n);
    expect(nodeReads - before).toBeLessThanOrEqual(1);
  });

  it('keeps wallets a block did not touch', async () => {
    const carol = wallet();
    const dave = wallet();
    expect(await reads.balanceOf(carol)).toBe(0n);
    await mintAndFollow(dave, 3n);
    const before = nodeReads;
    expect(await reads.balanceOf(carol)).toBe(0n);
    expect(nodeReads).toBe(before);
  });

  it('never answers from before a receipt this process received (its own mints), with no block pushed', async () => {
    // A subscription that never pushes: only the receipts tell these reads that blocks were mined.
    const quiet = readsOverClient({ blocks: () => () => undefined });
    followReceipts(client, quiet);
    await until(async () => quiet.following);
    const erin = wallet();
    expect(await quiet.balanceOf(erin)).toBe(0n);
    for (let amount = 1n; amount <= 5n; amount++) {
      const hash = await sendMint(erin, 1n);
      // The receipt through this process's client: the very next read sees the mint, push or no push.
      await client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
      expect(await quiet.balanceOf(erin)).toBe(amount);
    }
    await quiet.stop();
  });

  it('without a subscription every read asks the node', async () => {
    const direct = readsOverClient({});
    const frank = wallet();
    const before = nodeReads;
    await direct.balanceOf(frank);
    await direct.balanceOf(frank);
    expect(nodeReads).toBe(before + 2);
    expect(direct.following).toBe(false);
    await direct.stop();
  });
});
