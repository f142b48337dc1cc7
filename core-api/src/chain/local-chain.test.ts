import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answersChainId } from './anvil.ts';
import { type LocalChain, startLocalChain } from './local-chain.ts';
import { silentLogger } from './test-chain.ts';

const dirs: string[] = [];
const chains: LocalChain[] = [];

afterEach(async () => {
  for (const chain of chains.splice(0)) await chain.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pts-local-chain-'));
  dirs.push(dir);
  return dir;
}

async function start(dir: string, overrides: { port?: number; chainId?: number } = {}): Promise<LocalChain> {
  const chain = await startLocalChain({
    dataDir: dir,
    port: overrides.port ?? 0,
    chainId: overrides.chainId ?? 1868,
    stateIntervalSeconds: 1,
    logger: silentLogger,
  });
  chains.push(chain);
  return chain;
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

const processGroupOf = (pid: number) =>
  Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' }).trim());

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('local chain', () => {
  it('runs anvil in its own process group, so killing core-api’s group leaves the chain running', async () => {
    const chain = await start(dataDir());
    expect(processGroupOf(chain.pid)).toBe(chain.pid);
    expect(processGroupOf(chain.pid)).not.toBe(processGroupOf(process.pid));
  });

  it('is adopted with every block by the next start after a crash, and stopped with its state dumped', async () => {
    const dir = dataDir();
    const first = await start(dir);
    await rpc(first.rpcUrl, 'evm_mine');
    await rpc(first.rpcUrl, 'evm_mine');
    // A crash: this process never calls stop(); the next start finds the chain through anvil.json.
    chains.splice(chains.indexOf(first), 1);
    const second = await start(dir);
    expect(second.adopted).toBe(true);
    expect(second.pid).toBe(first.pid);
    expect(second.rpcUrl).toBe(first.rpcUrl);
    expect(await rpc(second.rpcUrl, 'eth_blockNumber')).toBe('0x2');

    await second.stop();
    expect(alive(first.pid)).toBe(false);
    expect(existsSync(join(dir, 'anvil.json'))).toBe(false);
    // SIGTERM made anvil dump its state: a later start loads the chain where it was.
    expect(JSON.parse(readFileSync(join(dir, 'anvil-state.json'), 'utf8')).block.number).toBe('0x2');
    const third = await start(dir);
    expect(third.adopted).toBe(false);
    expect(await rpc(third.rpcUrl, 'eth_blockNumber')).toBe('0x2');
  });

  it('restarts a chain left running with another chain id from its state instead of adopting it', async () => {
    const dir = dataDir();
    const first = await start(dir);
    await rpc(first.rpcUrl, 'evm_mine');
    chains.splice(chains.indexOf(first), 1);
    const second = await start(dir, { chainId: 31337 });
    expect(second.adopted).toBe(false);
    expect(alive(first.pid)).toBe(false);
    expect(await answersChainId(second.rpcUrl, 31337)).toBe(true);
    expect(await rpc(second.rpcUrl, 'eth_blockNumber')).toBe('0x1');
  });

  it('starts from the last good copy when anvil died while writing its state file', async () => {
    const dir = dataDir();
    const first = await start(dir);
    await rpc(first.rpcUrl, 'evm_mine');
    await first.stop();
    // The next start keeps a copy of the good state; then a dump is cut off halfway.
    const second = await start(dir);
    await second.stop();
    const state = readFileSync(join(dir, 'anvil-state.json'), 'utf8');
    writeFileSync(join(dir, 'anvil-state.json'), state.slice(0, state.length / 2));
    const third = await start(dir);
    expect(await rpc(third.rpcUrl, 'eth_blockNumber')).toBe('0x1');
    expect(existsSync(join(dir, 'anvil-state.json.corrupt'))).toBe(true);
  });
});
