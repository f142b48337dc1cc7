import { createPublicClient, http } from 'viem';
import { rewardTokenAbi } from '../src/chain/artifacts/index.ts';
import type { Platform } from '../src/startup/platform.ts';

/** Reads a wallet's reward-token balance straight from the chain. */
export async function tokenBalance(platform: Platform, wallet: string): Promise<bigint> {
  const client = createPublicClient({ transport: http(platform.deps.chain.rpcUrl) });
  return client.readContract({
    address: platform.deps.chain.contracts.rewardToken as `0x${string}`,
    abi: rewardTokenAbi,
    functionName: 'balanceOf',
    args: [wallet as `0x${string}`],
  });
}

/** Waits until no reward row is pending or submitted (the minter's receipt tracking caught up). */
export async function waitForMintsSettled(platform: Platform, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const open = await platform.deps.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', 'in', ['pending', 'submitted'])
      .executeTakeFirstOrThrow();
    if (Number(open.count) === 0) return;
    if (performance.now() > deadline) throw new Error(`${open.count} reward mints still open after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
