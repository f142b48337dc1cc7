import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';

/** The mnemonic anvil derives its funded dev accounts from. Public knowledge: local chains only. */
export const ANVIL_DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Dev account 0 (0xf39F…2266): deploys the contracts and holds their admin role. */
export const ANVIL_DEPLOYER_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
/** Dev account 1 (0x7099…79C8): the minter; only it signs `mintBatch`, so it owns its nonces. */
export const ANVIL_MINTER_PRIVATE_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;
/** Dev account 2 (0x3C44…93BC): reserved for the relayer, which must never share the minter's nonces. */
export const ANVIL_RELAYER_PRIVATE_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' as const;

/**
 * How long a stop waits for anvil to exit before SIGKILL when it has a state file. On SIGTERM anvil writes the
 * whole chain, history included, in place: hundreds of megabytes after a few hundred thousand rewards, well
 * over 10 s on a busy machine. A SIGKILL then left a torn file and, without an earlier copy, an empty chain.
 * Loading such a file at start takes about as long, so a start waits as long for anvil to answer.
 */
export const STATE_DUMP_GRACE_MS = 180_000;

export interface StartAnvilOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  chainId?: number;
  /** Loads the chain from this file at start and dumps it there on SIGTERM (and every `stateIntervalSeconds`). */
  stateFile?: string;
  /** Seconds between periodic state dumps (default 30); only with `stateFile`. */
  stateIntervalSeconds?: number;
  /**
   * Runs anvil in its own session (process group), writing its output to `logFile` instead of pipes, so a
   * kill of core-api's process group (Ctrl-C of a hung terminal, `kill -9 -PGID`, a supervisor) leaves the
   * chain running with everything it mined; the next start adopts it (local-chain.ts). Requires `logFile`.
   */
  detached?: { logFile: string };
  /** Seconds between blocks; unset mines one block per transaction (automine). */
  blockTime?: number;
  /**
   * Past block states anvil keeps, in memory only (`--prune-history N`); reads at an older block fail. Unset:
   * anvil's default, 500 in memory and then up to 3,600 more offloaded to `$HOME/.foundry/anvil/tmp` — each a
   * full copy of the chain's state, so memory and disk grow with the state times that count.
   */
  historyStates?: number;
  /**
   * Blocks with transactions whose transactions and receipts anvil keeps (`--transaction-block-keeper`); older
   * blocks keep their headers only. Unset: all of them, in memory and in every dump of the state file.
   */
  transactionBlocks?: number;
  /** HOME of the anvil process: anvil writes whatever it keeps outside its state file under `<HOME>/.foundry`. */
  homeDir?: string;
  logger?: Logger;
}

export interface AnvilInstance {
  rpcUrl: string;
  port: number;
  /** Process id of anvil (what local-chain.ts records to adopt it after a crash). */
  pid: number;
  /** SIGTERM, then waits for the exit so anvil can dump its state file. */
  stop(): Promise<void>;
}

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** Path of the anvil binary shipped in the platform's optional npm dependency. */
export function findAnvilBinary(): string {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) throw new Error(`anvil has no npm binary for ${key}; use PTS_CHAIN=rpc with an external node`);
  const require = createRequire(import.meta.url);
  let packageJson: string;
  try {
    packageJson = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed (npm skipped optional dependencies?): reinstall without --omit=optional`);
  }
  const binary = join(dirname(packageJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`anvil binary missing at ${binary}`);
  return binary;
}

/** Asks the OS for a free port by binding port 0 and releasing it. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something answers `eth_chainId` at `rpcUrl` (with `chainId` when given). */
export async function answersChainId(rpcUrl: string, chainId?: number): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await response.json()) as { result?: string };
    if (typeof body.result !== 'string') return false;
    return chainId === undefined || Number(body.result) === chainId;
  } catch {
    return false;
  }
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Spawns a local anvil chain and resolves once it answers JSON-RPC. */
export async function startAnvil(options: StartAnvilOptions): Promise<AnvilInstance> {
  // Port 0 races with other processes between our probe and anvil's bind; a retry with a new port fixes it.
  const attempts = options.port === 0 ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = options.port === 0 ? await findFreePort() : options.port;
    try {
      return await spawnAnvil(options, port);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** What a spawned anvil has said: its last lines (to explain a failed start) and whether it bound its port. */
interface AnvilOutput {
  recent: string[];
  /** Another process may already answer on this port; only our own "Listening on" line proves the bind. */
  listening: boolean;
  /** Reads the log file again (a detached anvil); piped output arrives by itself. */
  readLog(): void;
}

/** A started anvil process: how to watch it until it answers, and how to stop it. */
interface AnvilProcess {
  child: ChildProcess;
  output: AnvilOutput;
  exited: Promise<void>;
  spawnError: Error | undefined;
  killOnExit: () => void;
}

async function spawnAnvil(options: StartAnvilOptions, port: number): Promise<AnvilInstance> {
  const chainId = options.chainId ?? 1868;
  const args = anvilArgs(options, port, chainId);
  const output: AnvilOutput = { recent: [], listening: false, readLog: () => {} };
  const child = options.detached
    ? launchDetached(args, anvilEnv(options), options.detached.logFile, output)
    : launchPiped(args, anvilEnv(options), output, options.logger);
  const started: AnvilProcess = {
    child,
    output,
    exited: waitForExit(child),
    spawnError: undefined,
    // If core-api exits without calling stop(), anvil must not outlive it; SIGTERM still dumps the state.
    killOnExit: () => child.kill('SIGTERM'),
  };
  child.once('error', (error) => {
    started.spawnError = error;
  });
  process.once('exit', started.killOnExit);
  const rpcUrl = `http://127.0.0.1:${port}`;
  // Loading a large state file takes as long as writing it (see STATE_DUMP_GRACE_MS); a failed bind exits at once.
  if (!(await waitUntilAnswering(started, rpcUrl, options.stateFile ? STATE_DUMP_GRACE_MS : 15_000))) {
    await abandonAnvil(started, port);
  }
  options.logger?.info({ rpcUrl, chainId, stateFile: options.stateFile }, 'anvil started');
  let stopping: Promise<void> | undefined;
  return {
    rpcUrl,
    port,
    pid: child.pid ?? 0,
    stop: () => {
      stopping ??= stopAnvil(started, options, rpcUrl);
      return stopping;
    },
  };
}

/** anvil's command line for these options. */
function anvilArgs(options: StartAnvilOptions, port: number, chainId: number): string[] {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId)];
  if (options.stateFile) {
    args.push('--state', options.stateFile, '--state-interval', String(options.stateIntervalSeconds ?? 30));
  }
  if (options.blockTime !== undefined && options.blockTime > 0) args.push('--block-time', String(options.blockTime));
  if (options.historyStates !== undefined) args.push('--prune-history', String(options.historyStates));
  if (options.transactionBlocks !== undefined) {
    args.push('--transaction-block-keeper', String(options.transactionBlocks));
  }
  return args;
}

/** anvil's environment: this process's, with its allocator tuned and its HOME moved when asked. */
function anvilEnv(options: Pick<StartAnvilOptions, 'homeDir'>): NodeJS.ProcessEnv {
  return {
    // anvil's allocator (jemalloc) keeps freed pages for 10 s by default, and every state dump frees as much as
    // the state file weighs: with a dump every 5 s that memory was never returned and the resident size only
    // grew, even idle. Return it within a second, from a background thread. An operator's own setting wins.
    _RJEM_MALLOC_CONF: 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0',
    ...process.env,
    // anvil's temporary files go under HOME, or TMPDIR when it has no HOME: both point into `homeDir` when given.
    ...(options.homeDir === undefined ? {} : { HOME: options.homeDir, TMPDIR: options.homeDir }),
  };
}

/** anvil in its own session, writing to `logFile`: it outlives core-api's process group. */
function launchDetached(args: string[], env: NodeJS.ProcessEnv, logFile: string, output: AnvilOutput): ChildProcess {
  // A pipe would die with core-api and anvil would then fail writing its log: a file outlives both.
  const fd = openSync(logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(findAnvilBinary(), args, { stdio: ['ignore', fd, fd], detached: true, env });
  } finally {
    closeSync(fd);
  }
  child.unref();
  output.readLog = () => {
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim());
    if (lines.some((line) => line.startsWith('Listening on'))) output.listening = true;
    output.recent.splice(0, output.recent.length, ...lines.slice(-20));
  };
  return child;
}

/** anvil as a child with piped output, drained into the logger and the last 20 lines. */
function launchPiped(args: string[], env: NodeJS.ProcessEnv, output: AnvilOutput, logger?: Logger): ChildProcess {
  const child = spawn(findAnvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  // The pipes must be drained or anvil blocks once the buffer fills; the tail explains a failed start.
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      output.recent.push(line);
      if (stream === 'stdout' && line.startsWith('Listening on')) output.listening = true;
      if (output.recent.length > 20) output.recent.shift();
      if (stream === 'stderr') logger?.warn({ anvil: line }, 'anvil stderr');
      else logger?.trace({ anvil: line }, 'anvil');
    }
  };
  child.stdout?.on('data', collect('stdout'));
  child.stderr?.on('data', collect('stderr'));
  return child;
}

/** Whether anvil bound its port and answers eth_chainId within `waitMs`; false at once when it exits. */
async function waitUntilAnswering(started: AnvilProcess, rpcUrl: string, waitMs: number): Promise<boolean> {
  const { child, output } = started;
  // Real elapsed time on purpose (monotonic, not the injected clock): this waits for an OS process, and a
  // test's manual clock never advances while it waits.
  const deadline = performance.now() + waitMs;
  while (performance.now() < deadline) {
    if (started.spawnError || child.exitCode !== null || child.signalCode !== null) return false;
    output.readLog();
    if (output.listening && (await answersChainId(rpcUrl))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Kills an anvil that did not start and throws with what it said. */
async function abandonAnvil(started: AnvilProcess, port: number): Promise<never> {
  process.removeListener('exit', started.killOnExit);
  started.child.kill('SIGKILL');
  await started.exited;
  started.output.readLog();
  const reason = started.spawnError?.message ?? started.output.recent.join('\n');
  throw new Error(`anvil did not start on port ${port}: ${reason || 'no output'}`);
}

/** SIGTERM, so anvil dumps its state file; SIGKILL only after the grace. */
async function stopAnvil(
  started: AnvilProcess,
  options: Pick<StartAnvilOptions, 'stateFile' | 'logger'>,
  rpcUrl: string,
): Promise<void> {
  process.removeListener('exit', started.killOnExit);
  started.child.kill('SIGTERM');
  const timer = setTimeout(() => started.child.kill('SIGKILL'), options.stateFile ? STATE_DUMP_GRACE_MS : 10_000);
  await started.exited;
  clearTimeout(timer);
  options.logger?.info({ rpcUrl }, 'anvil stopped');
}
