import { randomBytes } from 'node:crypto';
import { type Address, encodeFunctionData, getAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_DEPLOYER_PRIVATE_KEY, type AnvilInstance, startAnvil } from '../anvil.ts';
import { rewardTokenAbi, rewardTokenBytecode } from '../artifacts/index.ts';
import { createChainClients, MINTER_ROLE, REVERSER_ROLE } from '../deploy.ts';
import { mintBatchGasLimit } from './context.ts';
import { reverseBatchGasLimit } from './reverse.ts';

// The gas limit a `mintBatch` is signed with: enough for the costliest batch (every recipient a new holder,
// every calldata byte non-zero, the token's first mint), and tight, because a geth-based sequencer takes a
// transaction only while its declared limit fits what is left of the block: a loose limit leaves blocks part
// empty (docs/chain.md, "Throughput with interval mining").

/** A byte string with no zero byte: the costliest calldata. */
function nonZeroBytes(length: number): `0x${string}` {
  return toHex(Uint8Array.from(randomBytes(length), (byte) => byte | 1));
}

describe('mintBatchGasLimit', () => {
  let anvil: AnvilInstance;
  let token: Address;
  let clients: ReturnType<typeof createChainClients>;
  const admin = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);

  beforeAll(async () => {
    anvil = await startAnvil({ port: 0 });
    clients = createChainClients(anvil.rpcUrl, 1868);
    const wallet = clients.walletClientFor(admin);
    const deployed = await clients.publicClient.waitForTransactionReceipt({
      hash: await wallet.deployContract({
        abi: rewardTokenAbi,
        bytecode: rewardTokenBytecode,
        args: ['PTS Reward', 'PTS', admin.address],
      }),
    });
    token = deployed.contractAddress!;
    await clients.publicClient.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: token,
        abi: rewardTokenAbi,
        functionName: 'grantRole',
        args: [MINTER_ROLE, admin.address],
      }),
    });
    await clients.publicClient.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: token,
        abi: rewardTokenAbi,
        functionName: 'grantRole',
        args: [REVERSER_ROLE, admin.address],
      }),
    });
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  /** Mints to `n` new holders with the costliest calldata, signed with mintBatchGasLimit(n). */
  async function mintToNewHolders(n: number) {
    const to = Array.from({ length: n }, () => getAddress(nonZeroBytes(20)));
    // Amounts fill 8 bytes (up to 2^64): more than any reward, every byte non-zero.
    const amounts = Array.from({ length: n }, () => BigInt(nonZeroBytes(8)));
    const gas = mintBatchGasLimit(n);
    const hash = await clients.walletClientFor(admin).sendTransaction({
      to: token,
      data: encodeFunctionData({ abi: rewardTokenAbi, functionName: 'mintBatch', args: [to, amounts] }),
      gas,
    });
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
    return { gas, receipt };
  }

  it('covers the token’s first mint (its supply goes from zero) to a new holder', async () => {
    const { receipt } = await mintToNewHolders(1);
    expect(receipt.status).toBe('success');
  });

  it.each([2, 128, 200, 1000])('covers %i new holders with the costliest calldata, within 10 %', async (n) => {
    const { gas, receipt } = await mintToNewHolders(n);
    expect(receipt.status).toBe('success');
    // Tight: most of what the block reserves for the batch is used.
    if (n >= 128) expect(Number(receipt.gasUsed) / Number(gas)).toBeGreaterThan(0.9);
  });

  it.each([1, 100])('reverseBatchGasLimit covers %i reversals, each recorded as applied and burning', async (n) => {
    const { receipt: minted } = await mintToNewHolders(n);
    expect(minted.status).toBe('success');
    const from = minted.logs.map((log) => getAddress(`0x${log.topics[2]!.slice(26)}`));
    expect(from).toHaveLength(n);
    const ids = Array.from({ length: n }, () => nonZeroBytes(32));
    const hash = await clients.walletClientFor(admin).sendTransaction({
      to: token,
      data: encodeFunctionData({
        abi: rewardTokenAbi,
        functionName: 'reverseBatch',
        args: [from, from.map(() => 1n), ids],
      }),
      gas: reverseBatchGasLimit(n),
    });
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
  });
});
