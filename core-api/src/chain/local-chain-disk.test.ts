import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type Address, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_DEPLOYER_PRIVATE_KEY } from './anvil.ts';
import { createChainClients } from './deploy.ts';
import { type LocalChain, localChainHome, startLocalChain } from './local-chain.ts';
import { silentLogger } from './test-chain.ts';

// The embedded chain must write nothing outside the data dir. Left to itself, anvil keeps 500 past block states
// in memory and offloads older ones to `$HOME/.foundry/anvil/tmp/anvil-state-*` (one copy of the whole state
// per block, kept after a kill). 600 blocks are enough for it to start offloading.
const BLOCKS_PAST_ANVIL_MEMORY_LIMIT = 600;

const root = mkdtempSync(join(tmpdir(), 'pts-local-chain-disk-'));
const home = join(root, 'home');
const temp = join(root, 'tmp');
const saved = { HOME: process.env.HOME, TMPDIR: process.env.TMPDIR };
const chains: LocalChain[] = [];

beforeAll(() => {
  mkdirSync(home);
  mkdirSync(temp);
  // Everything a child inherits points here, so anything the chain writes outside its data dir is found.
  process.env.HOME = home;
  process.env.TMPDIR = temp;
});

afterEach(async () => {
  for (const chain of chains.splice(0)) await chain.stop();
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(root, { recursive: true, force: true });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Files outside the data dir: in the HOME and TMPDIR the chain was started with. */
const writtenOutside = () => [...filesUnder(home), ...filesUnder(temp)];

function newDataDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

async function start(dataDir: string): Promise<LocalChain> {
  const chain = await startLocalChain({
    dataDir,
    port: 0,
    chainId: 1868,
    stateIntervalSeconds: 1,
    logger: silentLogger,
  });
  chains.push(chain);
  return chain;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A balance, then enough blocks for anvil to offload old states; returns the funded address. */
async function load(chain: LocalChain): Promise<Address> {
  const { publicClient, walletClientFor } = createChainClients(chain.rpcUrl, 1868);
  const recipient = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
  const hash = await walletClientFor(privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY)).sendTransaction({
    to: recipient,
    value: parseEther('3'),
  });
  await publicClient.waitForTransactionReceipt({ hash });
  await publicClient.request({
    method: 'anvil_mine',
    params: [`0x${BLOCKS_PAST_ANVIL_MEMORY_LIMIT.toString(16)}`],
  } as never);
  // Two state dumps (every second here) pass: whatever anvil writes periodically has been written.
  await sleep(2_500);
  return recipient;
}

const balanceOf = (chain: LocalChain, address: Address) =>
  createChainClients(chain.rpcUrl, 1868).publicClient.getBalance({ address });

function waitForDeath(pid: number): Promise<void> {
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });
}

describe('local chain files', () => {
  it('writes nothing outside the data dir under load, and keeps balances across a clean stop', async () => {
    const dataDir = newDataDir('clean');
    const first = await start(dataDir);
    const recipient = await load(first);
    expect(writtenOutside()).toEqual([]);
    // Memory holds LOCAL_CHAIN_HISTORY_STATES past states, not 500 plus 3,600 on disk: a read 60 blocks back
    // works, one 500 blocks back no longer does.
    const { publicClient } = createChainClients(first.rpcUrl, 1868);
    const head = await publicClient.getBlockNumber();
    expect(await publicClient.getBalance({ address: recipient, blockNumber: head - 60n })).toBe(parseEther('3'));
    await expect(publicClient.getBalance({ address: recipient, blockNumber: head - 500n })).rejects.toThrow(
      /BlockOutOfRange/,
    );

    await first.stop();
    expect(writtenOutside()).toEqual([]);
    expect(filesUnder(dataDir)).not.toContain(expect.stringMatching(/anvil-state-/));

    const second = await start(dataDir);
    expect(await balanceOf(second, recipient)).toBe(parseEther('3'));
    expect(await createChainClients(second.rpcUrl, 1868).publicClient.getBlockNumber()).toBeGreaterThan(
      BigInt(BLOCKS_PAST_ANVIL_MEMORY_LIMIT),
    );
    await second.stop();
    expect(writtenOutside()).toEqual([]);
  });

  it('leaves nothing outside the data dir after kill -9, and the next start clears what a killed chain left', async () => {
    const dataDir = newDataDir('killed');
    const first = await start(dataDir);
    await load(first);
    chains.splice(chains.indexOf(first), 1);
    process.kill(first.pid, 'SIGKILL');
    await waitForDeath(first.pid);
    expect(writtenOutside()).toEqual([]);

    // What an anvil killed while offloading states would leave in its HOME: the next start removes it.
    const leftover = join(localChainHome(dataDir), '.foundry', 'anvil', 'tmp', 'anvil-state-27-11-2026-04-46abc');
    mkdirSync(leftover, { recursive: true });
    writeFileSync(join(leftover, `0x${'ab'.repeat(32)}.json`), '{}');

    const second = await start(dataDir);
    expect(second.adopted).toBe(false);
    expect(filesUnder(dataDir).filter((file) => file.includes('anvil-state-'))).toEqual([]);
    await load(second);
    await second.stop();
    expect(writtenOutside()).toEqual([]);
    expect(filesUnder(dataDir).filter((file) => file.includes('anvil-home'))).toEqual([]);
  });
});
