import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ANVIL_DEPLOYER_PRIVATE_KEY,
  ANVIL_MINTER_PRIVATE_KEY,
  ANVIL_RELAYER_PRIVATE_KEY,
  findFreePort,
  startAnvil,
} from './anvil.ts';
import { createChainClients } from './deploy.ts';

const dir = mkdtempSync(join(tmpdir(), 'pts-anvil-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startAnvil', () => {
  it('answers as chain 1868 on a free port and is gone after stop', async () => {
    const anvil = await startAnvil({ port: 0 });
    const { publicClient } = createChainClients(anvil.rpcUrl, 1868);
    expect(await publicClient.getChainId()).toBe(1868);
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`);
    await anvil.stop();
    await anvil.stop();
    await expect(fetch(anvil.rpcUrl, { method: 'POST' })).rejects.toThrow();
  });

  it('funds the well-known dev accounts it exports', async () => {
    const anvil = await startAnvil({ port: 0, chainId: 31337 });
    try {
      const { publicClient } = createChainClients(anvil.rpcUrl, 31337);
      for (const key of [ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, ANVIL_RELAYER_PRIVATE_KEY]) {
        expect(await publicClient.getBalance({ address: privateKeyToAccount(key).address })).toBeGreaterThan(0n);
      }
    } finally {
      await anvil.stop();
    }
  });

  it('keeps the chain across a restart through its state file', async () => {
    const stateFile = join(dir, 'anvil-state.json');
    const port = await findFreePort();
    const first = await startAnvil({ port, stateFile });
    const { publicClient, walletClientFor } = createChainClients(first.rpcUrl, 1868);
    const deployer = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);
    const hash = await walletClientFor(deployer).sendTransaction({
      to: privateKeyToAccount(ANVIL_RELAYER_PRIVATE_KEY).address,
      value: 1n,
    });
    await publicClient.waitForTransactionReceipt({ hash });
    await first.stop();
    expect(statSync(stateFile).size).toBeGreaterThan(0);

    const second = await startAnvil({ port: 0, stateFile });
    try {
      const restarted = createChainClients(second.rpcUrl, 1868).publicClient;
      expect(await restarted.getTransactionCount({ address: deployer.address })).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it('fails with anvil output when the port is taken', async () => {
    const anvil = await startAnvil({ port: 0 });
    try {
      await expect(startAnvil({ port: anvil.port })).rejects.toThrow(/did not start on port/);
    } finally {
      await anvil.stop();
    }
  });
});
