import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPublicClient, http } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/chain/anvil.ts';
import { rewardTokenAbi } from '../../src/chain/artifacts/index.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../database.ts';

// `npm start` with its embedded chain, under load, killed with SIGKILL as a whole process group (what a
// supervisor or a hung terminal does), then started again: every reward the API acknowledged is on chain
// exactly once — token balances equal the ledger. The second case also kills the chain without letting it
// dump its state, so the chain forgets its last blocks and the reconciler has to put them back.

const MAIN = resolve(import.meta.dirname, '../../src/main.ts');
const REWARD = 100n;
/** Seconds between anvil's state dumps in these runs. */
const STATE_INTERVAL = 3;

let dataDir: string | undefined;
let database: TestDatabase | undefined;
let core: ChildProcess | undefined;
let output = '';

interface Acknowledged {
  walletAddress: `0x${string}`;
}

function anvilPid(): number | undefined {
  const path = dataDir && join(dataDir, 'anvil.json');
  if (!path || !existsSync(path)) return undefined;
  return (JSON.parse(readFileSync(path, 'utf8')) as { pid: number }).pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what} timed out:\n${output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function baseEnv(): Record<string, string> {
  return {
    PTS_DATA_DIR: dataDir!,
    PTS_CHAIN: 'local',
    PTS_ANVIL_PORT: '0',
    PTS_ANVIL_STATE_INTERVAL: String(STATE_INTERVAL),
    PTS_SEED_DEMO: 'true',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
    PTS_RECEIPT_POLL_MS: '100',
    PTS_RECONCILE_INTERVAL_SECONDS: '2',
    LOG_LEVEL: 'warn',
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
  };
}

/** Starts core-api as the leader of its own process group, like `npm start` in a terminal. */
async function startCore(): Promise<string> {
  const port = await findFreePort();
  output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...baseEnv(), PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  core = child;
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  return waitUntil('core-api start', async () => {
    if (child.exitCode !== null) throw new Error(`core-api exited early:\n${output}`);
    try {
      const ready = (await fetch(`${url}/readyz`)).status === 200;
      return ready && existsSync(join(dataDir!, 'demo-brand.json')) ? url : undefined;
    } catch {
      return undefined;
    }
  });
}

/** SIGKILL to core-api's whole process group (the chain runs in its own session and is not in it). */
async function killGroup(): Promise<void> {
  const running = core;
  core = undefined;
  if (!running?.pid || running.exitCode !== null) return;
  const exited = new Promise<void>((done) => running.once('exit', () => done()));
  process.kill(-running.pid, 'SIGKILL');
  await exited;
}

async function stopCore(): Promise<void> {
  const running = core;
  core = undefined;
  if (!running || running.exitCode !== null) return;
  const exited = new Promise<void>((done) => running.once('exit', () => done()));
  running.kill('SIGTERM');
  await exited;
}

afterEach(async () => {
  await killGroup();
  const pid = anvilPid();
  if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  await database?.close();
  database = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** Rewarded events from `clients` concurrent senders until `stop()`; the acknowledged ones are collected. */
function startLoad(url: string, clients: number) {
  const { brandId } = JSON.parse(readFileSync(join(dataDir!, 'demo-brand.json'), 'utf8')) as { brandId: string };
  const acknowledged: Acknowledged[] = [];
  let running = true;
  let next = 0;
  const worker = async () => {
    while (running) {
      const i = next++;
      try {
        const response = await fetch(`${url}/pts-api/manual-event`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            brandId,
            eventType: 'account_creation',
            userEmail: `load${i}@example.com`,
            domain: 'localhost',
          }),
        });
        const body = (await response.json()) as { walletAddress?: `0x${string}` };
        if (response.status === 200 && body.walletAddress) acknowledged.push({ walletAddress: body.walletAddress });
      } catch {
        // The kill cut this request off: not acknowledged, so the client would retry it.
        return;
      }
    }
  };
  const workers = Array.from({ length: clients }, worker);
  return {
    acknowledged,
    /** Stops issuing; requests in flight finish (or die with the process). */
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}

async function settleAndCheck(url: string, acknowledged: Acknowledged[]) {
  const adminToken = readFileSync(join(dataDir!, 'admin-token'), 'utf8').trim();
  const queue = await waitUntil<Record<'pending' | 'submitted' | 'confirmed' | 'failed', number>>(
    'rewards settling',
    async () => {
      await fetch(`${url}/reward-processor/process-pending`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}` },
      });
      const body = (await (await fetch(`${url}/reward-processor/queue`)).json()) as Record<
        'pending' | 'submitted' | 'confirmed' | 'failed',
        number
      >;
      return body.pending === 0 && body.submitted === 0 ? body : undefined;
    },
  );
  expect(queue.failed).toBe(0);
  expect(queue.confirmed).toBeGreaterThanOrEqual(acknowledged.length);

  const diagnostic = (await (await fetch(`${url}/pts-api/diagnostic`)).json()) as {
    contracts: { rewardToken: `0x${string}` };
  };
  const rpcUrl = `http://127.0.0.1:${(JSON.parse(readFileSync(join(dataDir!, 'anvil.json'), 'utf8')) as { port: number }).port}`;
  const chain = createPublicClient({ transport: http(rpcUrl, { batch: true }) });
  const token = diagnostic.contracts.rewardToken;
  // The ledger is the demo brand's 100 per new user: the supply is exactly that many confirmed rewards.
  const supply = await chain.readContract({ address: token, abi: rewardTokenAbi, functionName: 'totalSupply' });
  expect(supply).toBe(REWARD * BigInt(queue.confirmed));
  const balances = await Promise.all(
    acknowledged.map(({ walletAddress }) =>
      chain.readContract({ address: token, abi: rewardTokenAbi, functionName: 'balanceOf', args: [walletAddress] }),
    ),
  );
  // Every acknowledged reward on chain exactly once.
  expect(balances.filter((balance) => balance !== REWARD)).toEqual([]);
  return { queue, token };
}

async function health(url: string) {
  return (await (await fetch(`${url}/health`)).json()) as {
    ledger: { status: string; missingOnChain: string; reopenedTransactions: number; restoringRewards: number };
  };
}

describe(`embedded chain after kill -9 of the process group (${testDatabaseKind})`, () => {
  it('keeps every acknowledged reward on chain exactly once: the chain outlives the group', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pts-chain-crash-'));
    database = testDatabaseKind === 'postgres' ? await createTestDatabase() : undefined;
    let url = await startCore();
    const firstChain = anvilPid();
    expect(firstChain).toBeGreaterThan(0);
    const load = startLoad(url, 8);
    await waitUntil('acknowledged rewards', async () => (load.acknowledged.length >= 150 ? true : undefined));
    await killGroup();
    await load.stop();
    const acknowledged = [...load.acknowledged];
    expect(alive(firstChain!)).toBe(true);

    url = await startCore();
    // The next start adopted the chain that kept running, with every block the first process saw mined.
    expect(anvilPid(), output.slice(-3000)).toBe(firstChain);
    const { token } = await settleAndCheck(url, acknowledged);
    const first = await health(url);
    expect(first.ledger).toMatchObject({ status: 'ok', missingOnChain: '0' });

    // And once more, to see the token reused (never deployed afresh) across a graceful restart.
    await stopCore();
    expect(alive(firstChain!)).toBe(false);
    url = await startCore();
    await settleAndCheck(url, acknowledged);
    const diagnostic = (await (await fetch(`${url}/pts-api/diagnostic`)).json()) as {
      contracts: { rewardToken: string };
    };
    expect(diagnostic.contracts.rewardToken).toBe(token);
  }, 240_000);

  it('restores what the chain forgot when the chain dies too: the reconciler re-mints it once', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pts-chain-crash-'));
    database = testDatabaseKind === 'postgres' ? await createTestDatabase() : undefined;
    let url = await startCore();
    const chainPid = anvilPid()!;
    const stateFile = join(dataDir, 'anvil-state.json');
    const load = startLoad(url, 8);
    await waitUntil('acknowledged rewards', async () => (load.acknowledged.length >= 50 ? true : undefined));
    // Right after a periodic dump, keep rewarding for a second: those blocks exist only in anvil's memory.
    const dumped = existsSync(stateFile) ? statSync(stateFile).mtimeMs : 0;
    await waitUntil('a state dump', async () =>
      existsSync(stateFile) && statSync(stateFile).mtimeMs > dumped ? true : undefined,
    );
    const before = load.acknowledged.length;
    await waitUntil('more acknowledged rewards', async () =>
      load.acknowledged.length >= before + 40 ? true : undefined,
    );
    // The machine loses everything at once: the group and the chain, neither gets to save anything.
    process.kill(chainPid, 'SIGKILL');
    await killGroup();
    await load.stop();
    const acknowledged = [...load.acknowledged];

    url = await startCore();
    expect(anvilPid()).not.toBe(chainPid);
    const restored = await health(url);
    // At start (before the minter signed anything) the reconciler found confirmed mints the chain forgot.
    expect(restored.ledger.reopenedTransactions).toBeGreaterThan(0);
    await settleAndCheck(url, acknowledged);
    const after = await waitUntil('a clean reconciler pass', async () => {
      const body = await health(url);
      return body.ledger.status === 'ok' ? body : undefined;
    });
    expect(after.ledger).toMatchObject({ missingOnChain: '0', restoringRewards: 0 });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/pts_reconciler_reopened_transactions_total [1-9]/);
    expect(metrics).toMatch(/pts_chain_ledger_drift\{kind="missing"\} 0/);
  }, 240_000);
});
