import { createManualClock } from '@pts/shared';
import fc from 'fast-check';
import { type Address, decodeEventLog, type Hex, keccak256, parseEther, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, type AnvilInstance, startAnvil } from './anvil.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { createChainClients, ensureContracts, MINTER_ROLE, REVERSER_ROLE } from './deploy.ts';
import { silentLogger, TEST_CLOCK_START } from './test-chain.ts';

const deployer = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);
const minter = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);

let database: TestDatabase;
const anvils: AnvilInstance[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const anvil of anvils) await anvil.stop();
  await database?.close();
});

async function ensureOn(anvil: AnvilInstance, db = database.db) {
  const clients = createChainClients(anvil.rpcUrl, 1868);
  const contracts = await ensureContracts({
    db,
    publicClient: clients.publicClient,
    walletClient: clients.walletClientFor(deployer),
    chainId: 1868,
    minterAddress: minter.address,
    logger: silentLogger,
    clock: createManualClock(TEST_CLOCK_START),
  });
  const recorded = await db
    .selectFrom('chain_deployments')
    .selectAll()
    .where('chain_id', '=', 1868)
    .where('name', '=', 'RewardToken')
    .executeTakeFirstOrThrow();
  return { clients, contracts, recorded };
}

describe('ensureContracts', () => {
  it('deploys the reward token once, reuses it, and redeploys on a chain that lost the code', async () => {
    const first = await startAnvil({ port: 0 });
    anvils.push(first);
    const deployed = await ensureOn(first);
    const { publicClient } = deployed.clients;
    const token = deployed.contracts.rewardToken;
    expect(deployed.recorded.address).toBe(token.toLowerCase());
    expect(deployed.recorded.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const read = <F extends 'name' | 'symbol' | 'decimals'>(functionName: F) =>
      publicClient.readContract({ address: token, abi: rewardTokenAbi, functionName });
    expect([await read('name'), await read('symbol'), await read('decimals')]).toEqual(['PTS Reward', 'PTS', 0]);
    const hasRole = (account: `0x${string}`, role: `0x${string}`) =>
      publicClient.readContract({
        address: token,
        abi: rewardTokenAbi,
        functionName: 'hasRole',
        args: [role, account],
      });
    expect(await hasRole(minter.address, MINTER_ROLE)).toBe(true);
    expect(await hasRole(deployer.address, `0x${'0'.repeat(64)}`)).toBe(true);
    expect(await hasRole(deployer.address, MINTER_ROLE)).toBe(false);

    const deployerNonce = await publicClient.getTransactionCount({ address: deployer.address });
    const reused = await ensureOn(first);
    expect(reused.contracts.rewardToken).toBe(token);
    expect(reused.recorded.tx_hash).toBe(deployed.recorded.tx_hash);
    expect(await publicClient.getTransactionCount({ address: deployer.address })).toBe(deployerNonce);

    // A fresh chain (anvil without its state file): the recorded address has no code there.
    const fresh = await startAnvil({ port: 0 });
    anvils.push(fresh);
    const redeployed = await ensureOn(fresh);
    const code = await redeployed.clients.publicClient.getCode({ address: redeployed.contracts.rewardToken });
    expect(code && code.length > 2).toBe(true);
    // Same deployer nonce on a fresh chain gives the same address and hash; the deployer's nonce proves the redeploy
    // (token, MINTER_ROLE and REVERSER_ROLE grants, BusinessEscrow, PerkNFT, PointsSale, SALE_ROLE grant).
    expect(await redeployed.clients.publicClient.getTransactionCount({ address: deployer.address })).toBe(7);
    expect(
      await redeployed.clients.publicClient.readContract({
        address: redeployed.contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'hasRole',
        args: [MINTER_ROLE, minter.address],
      }),
    ).toBe(true);
  });

  it('refuses to deploy a new token over a ledger that holds mints on the recorded one', async () => {
    const ledger = await createTestDatabase();
    try {
      const first = await startAnvil({ port: 0 });
      anvils.push(first);
      const { contracts } = await ensureOn(first, ledger.db);
      const at = new Date(TEST_CLOCK_START);
      await ledger.db
        .insertInto('chain_txs')
        .values({
          chain_id: 1868,
          signer: minter.address.toLowerCase(),
          nonce: 0n,
          purpose: 'mintBatch',
          status: 'confirmed',
          hashes: JSON.stringify([`0x${'1'.repeat(64)}`]),
          current_hash: `0x${'1'.repeat(64)}`,
          raw_tx: '0x',
          max_fee_per_gas: '1',
          max_priority_fee_per_gas: '1',
          gas_limit: '1',
          submitted_at: at,
          created_at: at,
          updated_at: at,
        })
        .execute();
      // The chain lost its state (anvil without its state file): the recorded token has no code there.
      const fresh = await startAnvil({ port: 0 });
      anvils.push(fresh);
      await expect(ensureOn(fresh, ledger.db)).rejects.toThrow(
        new RegExp(`no code at the recorded RewardToken ${contracts.rewardToken}.*1 mint transactions.*Restore it`),
      );
      const deployer = await createChainClients(fresh.rpcUrl, 1868).publicClient.getTransactionCount({
        address: privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY).address,
      });
      expect(deployer).toBe(0);
      const recorded = await ledger.db
        .selectFrom('chain_deployments')
        .select('address')
        .where('name', '=', 'RewardToken')
        .executeTakeFirstOrThrow();
      expect(recorded.address).toBe(contracts.rewardToken.toLowerCase());
    } finally {
      await ledger.close();
    }
  });

  it('grants MINTER_ROLE again when the recorded token exists but the minter lost it', async () => {
    const anvil = await startAnvil({ port: 0 });
    anvils.push(anvil);
    const { clients, contracts } = await ensureOn(anvil);
    const hash = await clients.walletClientFor(deployer).writeContract({
      address: contracts.rewardToken,
      abi: rewardTokenAbi,
      functionName: 'revokeRole',
      args: [MINTER_ROLE, minter.address],
    });
    await clients.publicClient.waitForTransactionReceipt({ hash });
    const again = await ensureOn(anvil);
    expect(again.contracts.rewardToken).toBe(contracts.rewardToken);
    expect(
      await clients.publicClient.readContract({
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'hasRole',
        args: [MINTER_ROLE, minter.address],
      }),
    ).toBe(true);
  });
});

describe('RewardToken', () => {
  it('refuses mintBatch from accounts without MINTER_ROLE and with mismatched lengths', async () => {
    const anvil = await startAnvil({ port: 0 });
    anvils.push(anvil);
    const { clients, contracts } = await ensureOn(anvil);
    const args = [[minter.address], [1n]] as const;
    await expect(
      clients.publicClient.simulateContract({
        account: deployer,
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'mintBatch',
        args: [[...args[0]], [...args[1]]],
      }),
    ).rejects.toThrow(/AccessControlUnauthorizedAccount/);
    await expect(
      clients.publicClient.simulateContract({
        account: minter,
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'mintBatch',
        args: [[minter.address, deployer.address], [1n]],
      }),
    ).rejects.toThrow(/MintBatchLengthMismatch/);
    await expect(
      clients.publicClient.simulateContract({
        account: minter,
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'mintBatch',
        args: [[], []],
      }),
    ).rejects.toThrow(/MintBatchEmpty/);
  });

  it('reverseBatch takes back at most what a wallet holds, names each reversal, and only for the reverser role', async () => {
    const anvil = await startAnvil({ port: 0 });
    anvils.push(anvil);
    const { clients, contracts } = await ensureOn(anvil);
    const { publicClient } = clients;
    const token = { address: contracts.rewardToken, abi: rewardTokenAbi } as const;
    expect(
      await publicClient.readContract({ ...token, functionName: 'hasRole', args: [REVERSER_ROLE, minter.address] }),
    ).toBe(true);
    const member = privateKeyToAccount(generatePrivateKey());
    const shop = privateKeyToAccount(generatePrivateKey()).address;
    const send = async (hash: Hex) => {
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      return receipt;
    };
    await send(await clients.walletClientFor(deployer).sendTransaction({ to: member.address, value: parseEther('1') }));
    const asMinter = clients.walletClientFor(minter);
    const balance = () => publicClient.readContract({ ...token, functionName: 'balanceOf', args: [member.address] });
    const reverse = async (amounts: bigint[], ids: Hex[]) => {
      const receipt = await send(
        await asMinter.writeContract({
          ...token,
          functionName: 'reverseBatch',
          args: [amounts.map(() => member.address), amounts, ids],
        }),
      );
      return receipt.logs
        .filter((log) => log.address.toLowerCase() === contracts.rewardToken.toLowerCase())
        .map((log) => decodeEventLog({ abi: rewardTokenAbi, data: log.data, topics: log.topics }))
        .filter((event) => event.eventName === 'RewardReversed')
        .map((event) => event.args as { from: Address; reversalId: Hex; requested: bigint; taken: bigint });
    };

    await send(await asMinter.writeContract({ ...token, functionName: 'mint', args: [member.address, 10n] }));
    const refundA = keccak256(toHex('order-1/refund-1'));
    expect(await reverse([4n], [refundA])).toEqual([
      { from: member.address, reversalId: refundA, requested: 4n, taken: 4n },
    ]);
    expect(await balance()).toBe(6n);

    // The member spends 5 of the 6 before the next refund arrives: 1 can be taken back, 2 are left as debt.
    await send(
      await clients.walletClientFor(member).writeContract({ ...token, functionName: 'transfer', args: [shop, 5n] }),
    );
    const refundB = keccak256(toHex('order-1/refund-2'));
    const refundC = keccak256(toHex('order-2/refund-1'));
    expect(await reverse([3n, 2n], [refundB, refundC])).toEqual([
      { from: member.address, reversalId: refundB, requested: 3n, taken: 1n },
      { from: member.address, reversalId: refundC, requested: 2n, taken: 0n },
    ]);
    expect(await balance()).toBe(0n);

    // An id applied before is skipped, not reverted: the batch's other ids still apply, no event names it, and
    // the token's record keeps what it took the first time (what a reversal sent twice is settled from).
    await send(await asMinter.writeContract({ ...token, functionName: 'mint', args: [member.address, 10n] }));
    const refundD = keccak256(toHex('order-3/refund-1'));
    expect(await reverse([4n, 3n], [refundA, refundD])).toEqual([
      { from: member.address, reversalId: refundD, requested: 3n, taken: 3n },
    ]);
    expect(await balance()).toBe(7n);
    const never = keccak256(toHex('never-sent'));
    expect(
      await publicClient.readContract({
        ...token,
        functionName: 'reversalsApplied',
        args: [[refundA, refundB, refundC, refundD, never]],
      }),
    ).toEqual([
      [true, true, true, true, false],
      [4n, 1n, 0n, 3n, 0n],
    ]);

    const call = (account: typeof minter, args: readonly [Address[], bigint[], Hex[]]) =>
      publicClient.simulateContract({ account, ...token, functionName: 'reverseBatch', args: [...args] });
    await expect(call(deployer, [[member.address], [1n], [refundA]])).rejects.toThrow(
      /AccessControlUnauthorizedAccount/,
    );
    await expect(call(minter, [[member.address], [1n, 2n], [refundA]])).rejects.toThrow(/ReverseBatchLengthMismatch/);
    await expect(call(minter, [[], [], []])).rejects.toThrow(/ReverseBatchEmpty/);
  });

  it('a wallet never goes below zero and never loses more than was asked, whatever mints, spends and reversals interleave', async () => {
    const anvil = await startAnvil({ port: 0 });
    anvils.push(anvil);
    const { clients, contracts } = await ensureOn(anvil);
    const { publicClient } = clients;
    const token = { address: contracts.rewardToken, abi: rewardTokenAbi } as const;
    const asMinter = clients.walletClientFor(minter);
    const sink = privateKeyToAccount(generatePrivateKey()).address;
    const step = fc.oneof(
      fc.record({ kind: fc.constant('mint' as const), amount: fc.bigInt({ min: 1n, max: 50n }) }),
      fc.record({ kind: fc.constant('spend' as const), amount: fc.bigInt({ min: 0n, max: 60n }) }),
      fc.record({ kind: fc.constant('reverse' as const), amount: fc.bigInt({ min: 0n, max: 60n }) }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const member = privateKeyToAccount(generatePrivateKey());
        await publicClient.waitForTransactionReceipt({
          hash: await clients.walletClientFor(deployer).sendTransaction({ to: member.address, value: parseEther('1') }),
        });
        let held = 0n;
        for (const [index, { kind, amount }] of steps.entries()) {
          if (kind === 'mint') {
            const hash = await asMinter.writeContract({
              ...token,
              functionName: 'mint',
              args: [member.address, amount],
            });
            await publicClient.waitForTransactionReceipt({ hash });
            held += amount;
          } else if (kind === 'spend') {
            const spend = amount > held ? held : amount;
            const hash = await clients
              .walletClientFor(member)
              .writeContract({ ...token, functionName: 'transfer', args: [sink, spend] });
            await publicClient.waitForTransactionReceipt({ hash });
            held -= spend;
          } else {
            const id = keccak256(toHex(`run-${run}-step-${index}`));
            const hash = await asMinter.writeContract({
              ...token,
              functionName: 'reverseBatch',
              args: [[member.address], [amount], [id]],
            });
            const receipt = await publicClient.waitForTransactionReceipt({ hash });
            expect(receipt.status).toBe('success');
            held -= amount < held ? amount : held;
          }
          const balance = await publicClient.readContract({
            ...token,
            functionName: 'balanceOf',
            args: [member.address],
          });
          expect(balance).toBe(held);
          expect(balance >= 0n).toBe(true);
        }
        run += 1;
      }),
      { numRuns: 12 },
    );
  });
});
