/**
 * `npm run bench -- chain-soak`: the embedded chain (`npm start`'s anvil, started by startLocalChain) under a
 * long minting load and then idle, sampling anvil's memory and CPU, and the disk it uses in the data dir and
 * in its HOME (which is where anvil offloads old states when left to itself). See docs/benchmarks.md.
 *
 *   npm run bench -- chain-soak [--rewards 500000] [--batch 20] [--wallets 10000] [--in-flight 16]
 *                               [--idle 600] [--state-interval 5] [--sample-ms 1000] [--json]
 *
 * The load is what the minter sends: `mintBatch` transactions of `--batch` recipients from the minter key,
 * `--in-flight` of them outstanding at a time (automine: one block each), recipients cycling through
 * `--wallets` addresses. The whole process runs with a temporary HOME, so anything the chain writes outside
 * the data dir is found and measured. After the idle time the chain is stopped as `npm start` stops it, its
 * disk use measured, and started again to check the state file restored every minted token.
 * Linux only (reads /proc).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { type Address, encodeFunctionData, getAddress, type Hex, pad, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY } from '../src/chain/anvil.ts';
import { rewardTokenAbi, rewardTokenBytecode } from '../src/chain/artifacts/index.ts';
import { createChainClients, MINTER_ROLE } from '../src/chain/deploy.ts';
import { type LocalChain, startLocalChain } from '../src/chain/local-chain.ts';

const { values: flags } = parseArgs({
  options: {
    rewards: { type: 'string', default: '500000' },
    batch: { type: 'string', default: '20' },
    wallets: { type: 'string', default: '10000' },
    'in-flight': { type: 'string', default: '16' },
    idle: { type: 'string', default: '600' },
    'state-interval': { type: 'string', default: '5' },
    'sample-ms': { type: 'string', default: '1000' },
    json: { type: 'boolean', default: false },
  },
});
const positive = (name: string, value: string | undefined): number => {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new Error(`--${name} must be a number ≥ 0, got ${value}`);
  return number;
};
const REWARDS = positive('rewards', flags.rewards);
const BATCH = Math.max(1, positive('batch', flags.batch));
const WALLETS = Math.max(1, positive('wallets', flags.wallets));
const IN_FLIGHT = Math.max(1, positive('in-flight', flags['in-flight']));
const IDLE_SECONDS = positive('idle', flags.idle);
const STATE_INTERVAL = Math.max(1, positive('state-interval', flags['state-interval']));
const SAMPLE_MS = Math.max(100, positive('sample-ms', flags['sample-ms']));

// ---------------------------------------------------------------------------------------------------------
// Measuring a process and directories
// ---------------------------------------------------------------------------------------------------------

const CLOCK_TICKS = 100; // USER_HZ on Linux

function rssMiB(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return match ? Number(match[1]) / 1024 : 0;
}

/** User + system CPU seconds the process used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Bytes of the files under `path` (0 when it does not exist). */
function diskBytes(path: string): number {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const child = join(path, entry.name);
    try {
      if (entry.isDirectory()) total += diskBytes(child);
      else total += statSync(child).size;
    } catch {
      // removed while we walked: anvil deletes old offloaded states
    }
  }
  return total;
}

const mib = (bytes: number) => bytes / 1024 / 1024;

interface PhaseStats {
  seconds: number;
  cpuPercent: number;
  peakRssMiB: number;
  endRssMiB: number;
  peakDataDirMiB: number;
  peakHomeMiB: number;
}

/** Samples anvil's RSS every SAMPLE_MS (and disk every 5th sample) until stopped. */
function startSampler(pid: number, dataDir: string, home: string) {
  const started = performance.now();
  const cpuAtStart = cpuSeconds(pid);
  const stats = { peakRss: 0, lastRss: 0, peakData: 0, peakHome: 0 };
  let samples = 0;
  const sample = () => {
    try {
      stats.lastRss = rssMiB(pid);
    } catch {
      return;
    }
    stats.peakRss = Math.max(stats.peakRss, stats.lastRss);
    if (samples++ % 5 === 0) {
      stats.peakData = Math.max(stats.peakData, mib(diskBytes(dataDir)));
      stats.peakHome = Math.max(stats.peakHome, mib(diskBytes(home)));
    }
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    finish(): PhaseStats {
      clearInterval(timer);
      sample();
      stats.peakData = Math.max(stats.peakData, mib(diskBytes(dataDir)));
      stats.peakHome = Math.max(stats.peakHome, mib(diskBytes(home)));
      const seconds = (performance.now() - started) / 1000;
      return {
        seconds,
        cpuPercent: ((cpuSeconds(pid) - cpuAtStart) / seconds) * 100,
        peakRssMiB: stats.peakRss,
        endRssMiB: stats.lastRss,
        peakDataDirMiB: stats.peakData,
        peakHomeMiB: stats.peakHome,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The load
// ---------------------------------------------------------------------------------------------------------

const logger = pino({ level: 'silent' });
const deployer = privateKeyToAccount(ANVIL_DEPLOYER_PRIVATE_KEY);
const minter = privateKeyToAccount(ANVIL_MINTER_PRIVATE_KEY);
const wallet = (index: number): Address => getAddress(pad(toHex(0x1000 + index), { size: 20 }));

async function deployToken(chain: LocalChain): Promise<Address> {
  const { publicClient, walletClientFor } = createChainClients(chain.rpcUrl, 1868);
  const admin = walletClientFor(deployer);
  const deployHash = await admin.deployContract({
    abi: rewardTokenAbi,
    bytecode: rewardTokenBytecode,
    args: ['PTS Reward', 'PTS', deployer.address],
  });
  const { contractAddress } = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  if (!contractAddress) throw new Error('the reward token did not deploy');
  const grant = await admin.writeContract({
    address: contractAddress,
    abi: rewardTokenAbi,
    functionName: 'grantRole',
    args: [MINTER_ROLE, minter.address],
  });
  await publicClient.waitForTransactionReceipt({ hash: grant });
  return contractAddress;
}

/** Sends REWARDS rewards as mintBatch transactions, IN_FLIGHT at a time; returns the tokens minted. */
async function mintLoad(chain: LocalChain, token: Address, onProgress: (rewards: number) => void): Promise<bigint> {
  const { publicClient, walletClientFor } = createChainClients(chain.rpcUrl, 1868);
  const signer = walletClientFor(minter);
  let nonce = await publicClient.getTransactionCount({ address: minter.address });
  const gasPrice = (await publicClient.getGasPrice()) * 2n;
  let sent = 0;
  let minted = 0n;
  let next = 0;
  const sendOne = async (): Promise<void> => {
    while (sent < REWARDS) {
      const count = Math.min(BATCH, REWARDS - sent);
      sent += count;
      const to: Address[] = [];
      const amounts: bigint[] = [];
      for (let i = 0; i < count; i++) {
        to.push(wallet(next++ % WALLETS));
        amounts.push(1n + BigInt(next % 7));
      }
      minted += amounts.reduce((a, b) => a + b, 0n);
      const hash: Hex = await signer.sendTransaction({
        to: token,
        data: encodeFunctionData({ abi: rewardTokenAbi, functionName: 'mintBatch', args: [to, amounts] }),
        nonce: nonce++,
        gas: 60_000n + 35_000n * BigInt(count),
        gasPrice,
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (receipt.status !== 'success') throw new Error(`mintBatch ${hash} reverted`);
      onProgress(sent);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, sendOne));
  return minted;
}

async function totalSupply(chain: LocalChain, token: Address): Promise<bigint> {
  const { publicClient } = createChainClients(chain.rpcUrl, 1868);
  return publicClient.readContract({ address: token, abi: rewardTokenAbi, functionName: 'totalSupply' });
}

// ---------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------

const root = mkdtempSync(join(tmpdir(), 'pts-chain-soak-'));
const home = join(root, 'home');
const dataDir = join(root, 'data');
// Anything anvil writes through HOME (~/.foundry/…) lands here, where it is measured and removed afterwards.
process.env.HOME = home;
mkdirSync(home);
mkdirSync(dataDir);
const fmt = (n: number) => n.toFixed(0);

try {
  const chain = await startLocalChain({
    dataDir,
    port: 0,
    chainId: 1868,
    stateIntervalSeconds: STATE_INTERVAL,
    logger,
  });
  const token = await deployToken(chain);
  const baseline = rssMiB(chain.pid);

  const loadSampler = startSampler(chain.pid, dataDir, home);
  let lastReport = performance.now();
  const minted = await mintLoad(chain, token, (rewards) => {
    if (performance.now() - lastReport < 10_000) return;
    lastReport = performance.now();
    if (!flags.json) {
      console.log(`  ${rewards} rewards sent, anvil RSS ${fmt(rssMiB(chain.pid))} MiB`);
    }
  });
  const load = loadSampler.finish();

  const idleSampler = startSampler(chain.pid, dataDir, home);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const idle = idleSampler.finish();

  const stopStarted = performance.now();
  await chain.stop();
  const afterStop = {
    stopSeconds: (performance.now() - stopStarted) / 1000,
    dataDirMiB: mib(diskBytes(dataDir)),
    homeMiB: mib(diskBytes(home)),
  };
  const figures = {
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '?', memoryGiB: totalmem() / 2 ** 30 },
    rewards: REWARDS,
    batch: BATCH,
    wallets: WALLETS,
    stateIntervalSeconds: STATE_INTERVAL,
    baselineRssMiB: baseline,
    load: { ...load, rewardsPerSecond: REWARDS / load.seconds },
    idle,
    afterStop,
  };
  if (!flags.json) {
    console.log(
      `\nchain soak: ${REWARDS} rewards in batches of ${BATCH} to ${WALLETS} wallets, then ${IDLE_SECONDS} s idle`,
    );
    console.log(
      `  machine: ${figures.machine.cpus} × ${figures.machine.cpuModel}, ${figures.machine.memoryGiB.toFixed(1)} GiB`,
    );
    console.log(`  anvil RSS at start:          ${fmt(baseline)} MiB`);
    console.log(
      `  load:   ${fmt(load.seconds)} s, ${fmt(figures.load.rewardsPerSecond)} rewards/s, anvil CPU ${fmt(load.cpuPercent)} %`,
    );
    console.log(`          peak RSS ${fmt(load.peakRssMiB)} MiB, RSS at end ${fmt(load.endRssMiB)} MiB`);
    console.log(`  idle:   ${fmt(idle.seconds)} s, anvil CPU ${fmt(idle.cpuPercent)} %`);
    console.log(`          peak RSS ${fmt(idle.peakRssMiB)} MiB, RSS at end of idle ${fmt(idle.endRssMiB)} MiB`);
    console.log(
      `  disk at peak:    data dir ${fmt(Math.max(load.peakDataDirMiB, idle.peakDataDirMiB))} MiB, HOME ${fmt(Math.max(load.peakHomeMiB, idle.peakHomeMiB))} MiB`,
    );
    console.log(
      `  disk after stop: data dir ${fmt(afterStop.dataDirMiB)} MiB, HOME ${fmt(afterStop.homeMiB)} MiB (stop took ${afterStop.stopSeconds.toFixed(1)} s)`,
    );
  }
  // The next start must load every minted token from the state file.
  const restartStarted = performance.now();
  const restarted = await startLocalChain({
    dataDir,
    port: 0,
    chainId: 1868,
    stateIntervalSeconds: STATE_INTERVAL,
    logger,
  });
  const restoredSupply = await totalSupply(restarted, token).catch(() => -1n);
  const restartSeconds = (performance.now() - restartStarted) / 1000;
  await restarted.stop();
  const result = { ...figures, restartSeconds, stateRestored: restoredSupply === minted };
  if (flags.json) console.log(JSON.stringify(result));
  else {
    console.log(
      `  state file restored every token on restart: ${result.stateRestored ? 'yes' : `NO (totalSupply ${restoredSupply < 0n ? 'unreadable: no token contract' : restoredSupply}, minted ${minted})`} (restart took ${restartSeconds.toFixed(1)} s)`,
    );
  }
  if (!result.stateRestored) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
