import { createManualClock } from '@pts/shared';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, type AnvilInstance, startAnvil } from './anvil.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { createChainClients, ensureContracts, MINTER_ROLE } from './deploy.ts';
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
    // (token, MINTER_ROLE grant, BusinessEscrow, PerkNFT, PointsSale, SALE_ROLE grant).
    expect(await redeployed.clients.publicClient.getTransactionCount({ address: deployer.address })).toBe(6);
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
});
