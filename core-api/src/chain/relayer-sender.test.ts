import { createManualClock, isAppError, type ManualClock } from '@pts/shared';
import { type Address, encodeFunctionData, type Hex, parseGwei, parseTransaction } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import { createMetrics } from '../observability/metrics.ts';
import { ANVIL_MINTER_PRIVATE_KEY, ANVIL_RELAYER_PRIVATE_KEY } from './anvil.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { acquireSignerLock } from './minter.ts';
import type { RelayerSender } from './relayer.types.ts';
import { createRelayerSender, type RelayerSenderDeps } from './relayer-sender.ts';
import { isTxHash, randomWallets, silentLogger, startTestChain, type TestChain } from './test-chain.ts';

let database: TestDatabase;
let chain: TestChain;
const senders: RelayerSender[] = [];
const relayerAccount = privateKeyToAccount(ANVIL_RELAYER_PRIVATE_KEY);
const BRAND = '0x00000000000000000000000000000000000000b1';

beforeAll(async () => {
  database = await createTestDatabase();
  chain = await startTestChain(database.db);
});

afterEach(async () => {
  for (const sender of senders.splice(0)) await sender.stop();
  await chain.rpc('evm_setAutomine', [true]);
});

afterAll(async () => {
  await chain?.stop();
  await database?.close();
});

function createSender(overrides: Partial<RelayerSenderDeps> = {}): { sender: RelayerSender; clock: ManualClock } {
  const clock = createManualClock('2026-11-22T10:00:00Z');
  const sender = createRelayerSender({
    db: database.db,
    chainId: 1868,
    publicClient: chain.clients.publicClient,
    account: relayerAccount,
    config: {
      PTS_RECEIPT_POLL_MS: 50,
      PTS_RELAYER_STUCK_SECONDS: 30,
      PTS_RELAYER_MAX_GAS_LIMIT: 1_000_000,
      PTS_RELAYER_MAX_GAS_PRICE_GWEI: 100,
    },
    clock,
    logger: silentLogger,
    metrics: createMetrics(),
    ...overrides,
  });
  senders.push(sender);
  return { sender, clock };
}

/** `approve(spender, amount)` on the reward token: succeeds from any account, one storage write. */
function approveCall(spender: Address, amount = 1n) {
  return {
    to: chain.tokenAddress,
    data: encodeFunctionData({ abi: rewardTokenAbi, functionName: 'approve', args: [spender, amount] }),
    brandId: BRAND,
    userAddress: spender,
    purpose: 'test',
  };
}

/** `transferFrom` without an allowance: reverts with ERC20InsufficientAllowance. */
function revertingCall(from: Address) {
  return {
    to: chain.tokenAddress,
    data: encodeFunctionData({
      abi: rewardTokenAbi,
      functionName: 'transferFrom',
      args: [from, relayerAccount.address, 50n],
    }),
    brandId: BRAND,
    userAddress: from,
    purpose: 'test',
  };
}

const relayerNonce = (blockTag: 'latest' | 'pending' = 'latest') =>
  chain.clients.publicClient.getTransactionCount({ address: relayerAccount.address, blockTag });

describe('relayer sender', () => {
  it('refuses to be created with the minter key', () => {
    expect(() =>
      createRelayerSender({
        db: database.db,
        chainId: 1868,
        publicClient: chain.clients.publicClient,
        account: privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY),
        config: {
          PTS_RECEIPT_POLL_MS: 50,
          PTS_RELAYER_STUCK_SECONDS: 30,
          PTS_RELAYER_MAX_GAS_LIMIT: 1_000_000,
          PTS_RELAYER_MAX_GAS_PRICE_GWEI: 100,
        },
        clock: createManualClock('2026-11-22T10:00:00Z'),
        logger: silentLogger,
        metrics: createMetrics(),
        minterAddress: privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY).address,
      }),
    ).toThrow(/minter key/);
  });

  it('confirms a relayed call with its real hash, gas used and block', async () => {
    const { sender } = createSender();
    const [spender] = randomWallets(1);
    const submitted = await sender.submit(approveCall(spender!, 7n));
    expect(submitted.status).toBe('submitted');
    expect(isTxHash(submitted.hash)).toBe(true);
    const done = await sender.waitFor(submitted.id, 10_000);
    expect(done.status).toBe('confirmed');
    expect(done.hashes).toEqual([submitted.hash]);
    const receipt = await chain.clients.publicClient.getTransactionReceipt({ hash: done.hash! });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(relayerAccount.address.toLowerCase());
    expect(done.gasUsed).toBe(receipt.gasUsed);
    expect(done.effectiveGasPrice).toBe(receipt.effectiveGasPrice);
    expect(done.blockNumber).toBe(receipt.blockNumber);
    // estimate × 1.2
    expect(done.gasLimit!).toBeGreaterThan(receipt.gasUsed);
    const allowance = await chain.clients.publicClient.readContract({
      address: chain.tokenAddress,
      abi: rewardTokenAbi,
      functionName: 'allowance',
      args: [relayerAccount.address, spender!],
    });
    expect(allowance).toBe(7n);
    const usage = await sender.gasByBrand(BRAND);
    expect(usage[0]?.gasUsed).toBeGreaterThanOrEqual(receipt.gasUsed);
  });

  it("uses a caller's fresh estimate (× 1.2) instead of simulating again", async () => {
    const { sender } = createSender();
    const [spender] = randomWallets(1);
    const simulation = await sender.simulate(approveCall(spender!, 5n));
    expect(simulation.ok).toBe(true);
    if (!simulation.ok) return;
    const submitted = await sender.submit({ ...approveCall(spender!, 5n), gasEstimate: simulation.gasEstimate });
    expect(submitted.gasLimit).toBe((simulation.gasEstimate * 120n) / 100n);
    expect((await sender.waitFor(submitted.id, 10_000)).status).toBe('confirmed');
  });

  it('catches a reverting call in simulation: decoded reason, no transaction sent, nonce unchanged', async () => {
    const { sender } = createSender();
    const [user] = randomWallets(1);
    const before = await relayerNonce('pending');
    const simulation = await sender.simulate(revertingCall(user!));
    expect(simulation.ok).toBe(false);
    if (simulation.ok) return;
    expect(simulation.errorName).toBe('ERC20InsufficientAllowance');
    expect(simulation.reason).toBe(`ERC20InsufficientAllowance(${relayerAccount.address}, 0, 50)`);
    const failed = await sender.submit(revertingCall(user!));
    expect(failed.status).toBe('failed');
    expect(failed.hash).toBeNull();
    expect(failed.error).toContain('ERC20InsufficientAllowance');
    expect(await relayerNonce('pending')).toBe(before);
  });

  it('answers unknown and malformed ids without a database error', async () => {
    const { sender } = createSender();
    expect(await sender.get('not-a-uuid')).toBeUndefined();
    expect(await sender.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    await expect(sender.waitFor('not-a-uuid', 10)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sender.waitFor('00000000-0000-4000-8000-000000000000', 10)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('refuses a gas limit above the maximum and a network fee above the cap', async () => {
    const { sender } = createSender();
    const [spender] = randomWallets(1);
    await expect(sender.submit({ ...approveCall(spender!), gasLimit: 1_000_001n })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    const { sender: capped } = createSender({
      config: {
        PTS_RECEIPT_POLL_MS: 50,
        PTS_RELAYER_STUCK_SECONDS: 30,
        PTS_RELAYER_MAX_GAS_LIMIT: 1_000_000,
        // anvil's fees are ~1 gwei: a cap below that stands for a network above 100 gwei.
        PTS_RELAYER_MAX_GAS_PRICE_GWEI: 0.000001,
      },
    });
    const before = await relayerNonce('pending');
    const error = await capped.submit(approveCall(spender!)).catch((caught: unknown) => caught);
    expect(isAppError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'gas_price_above_cap' } });
    expect(await relayerNonce('pending')).toBe(before);
  });

  it('replaces a stuck transaction with a gas bump and confirms it under the new hash', async () => {
    const { sender, clock } = createSender();
    await chain.rpc('evm_setAutomine', [false]);
    const [spender] = randomWallets(1);
    const submitted = await sender.submit(approveCall(spender!, 3n));
    expect(submitted.status).toBe('submitted');
    const first = parseTransaction(
      (
        await database.db
          .selectFrom('relay_transactions')
          .select('raw_tx')
          .where('id', '=', submitted.id)
          .executeTakeFirstOrThrow()
      ).raw_tx as Hex,
    );
    // Not stuck yet: nothing happens.
    expect((await sender.waitFor(submitted.id, 200)).hashes).toHaveLength(1);
    clock.advance(31_000);
    let replaced = await sender.waitFor(submitted.id, 300);
    for (let i = 0; i < 20 && replaced.hashes.length < 2; i++) replaced = await sender.waitFor(submitted.id, 100);
    expect(replaced.status).toBe('submitted');
    expect(replaced.hashes).toHaveLength(2);
    expect(replaced.hashes[0]).toBe(submitted.hash);
    expect(replaced.hash).toBe(replaced.hashes[1]);
    const row = await database.db
      .selectFrom('relay_transactions')
      .selectAll()
      .where('id', '=', submitted.id)
      .executeTakeFirstOrThrow();
    const second = parseTransaction(row.raw_tx as Hex);
    expect(second.nonce).toBe(first.nonce);
    expect(second.maxFeePerGas! * 1000n).toBeGreaterThanOrEqual(first.maxFeePerGas! * 1125n);
    expect(second.maxPriorityFeePerGas! * 1000n).toBeGreaterThanOrEqual(first.maxPriorityFeePerGas! * 1125n);
    expect(second.maxFeePerGas!).toBeLessThanOrEqual(parseGwei('100'));

    await chain.rpc('evm_mine');
    const done = await sender.waitFor(submitted.id, 10_000);
    expect(done.status).toBe('confirmed');
    expect(done.hash).toBe(replaced.hashes[1]);
    expect(done.hashes).toEqual(replaced.hashes);
    const receipt = await chain.clients.publicClient.getTransactionReceipt({ hash: done.hash! });
    expect(receipt.status).toBe('success');
  });

  it('broadcasts after a restart a transaction recorded but never sent, exactly once', async () => {
    const failing = createSender({
      sendRawTransaction: async () => {
        throw new Error('connection reset (simulated crash before the broadcast)');
      },
    });
    const [spender] = randomWallets(1);
    const before = await relayerNonce('pending');
    const recorded = await failing.sender.submit(approveCall(spender!, 9n));
    expect(recorded.status).toBe('submitted');
    expect(recorded.hash).not.toBeNull();
    expect(await relayerNonce('pending')).toBe(before);
    await failing.sender.stop();

    const { sender } = createSender();
    sender.start();
    const done = await sender.waitFor(recorded.id, 10_000);
    expect(done.status).toBe('confirmed');
    expect(done.hash).toBe(recorded.hash);
    expect(await relayerNonce('latest')).toBe(before + 1);
    // A second start re-sends nothing new: the nonce is spent once.
    const { sender: again } = createSender();
    again.start();
    await again.waitFor(recorded.id, 300);
    expect(await relayerNonce('pending')).toBe(before + 1);
  });

  it('elects one signer per key: concurrent first submits share one election, another process is refused', async () => {
    // A slow lock (a busy database) makes the first submits overlap while the election is in progress.
    const lockFor = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return acquireSignerLock({ db: database.db, kind: database.kind, chainId: 1868, signer: relayerAccount.address });
    };
    const { sender } = createSender({ acquireLock: lockFor });
    const spenders = randomWallets(10);
    const submitted = await Promise.all(spenders.map((spender) => sender.submit(approveCall(spender))));
    expect(submitted.map((tx) => tx.status)).toEqual(Array(10).fill('submitted'));
    if (testDatabaseKind === 'postgres') {
      // PostgreSQL: the advisory lock is held by the first sender's session. (PGlite is one process by nature.)
      const { sender: second } = createSender({ acquireLock: lockFor });
      await expect(second.submit(approveCall(spenders[0]!))).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: { signer: relayerAccount.address },
      });
    }
    const done = await Promise.all(submitted.map((tx) => sender.waitFor(tx.id, 10_000)));
    expect(done.every((tx) => tx.status === 'confirmed')).toBe(true);
  });

  it('gives 20 concurrent submits 20 distinct consecutive nonces', async () => {
    const { sender } = createSender();
    const before = BigInt(await relayerNonce('pending'));
    const spenders = randomWallets(20);
    const submitted = await Promise.all(spenders.map((spender) => sender.submit(approveCall(spender))));
    const nonces = submitted.map((tx) => tx.nonce!).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(nonces).toEqual(Array.from({ length: 20 }, (_, index) => before + BigInt(index)));
    const done = await Promise.all(submitted.map((tx) => sender.waitFor(tx.id, 15_000)));
    expect(done.every((tx) => tx.status === 'confirmed')).toBe(true);
    expect(BigInt(await relayerNonce('latest'))).toBe(before + 20n);
  });
});
