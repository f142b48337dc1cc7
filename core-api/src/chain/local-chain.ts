import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type AnvilInstance, answersChainId, STATE_DUMP_GRACE_MS, startAnvil } from './anvil.ts';

// The embedded chain of `npm start` (PTS_CHAIN=local): one anvil per data directory, in its own session so a
// kill of core-api's process group does not take the chain (and its last seconds of blocks) with it. The
// next start finds it through `anvil.json` and adopts it; a graceful stop ends it with SIGTERM, which makes
// anvil dump its state file. See docs/chain.md, "Local chain and deployment".
//
// Everything the chain writes stays in the data dir: its state file, log and record, and — as anvil's HOME —
// `anvil-home/`, where anvil would offload old block states (`.foundry/anvil/tmp/anvil-state-*`, one full copy
// of the chain's state per block, never removed after a kill). The chain keeps only LOCAL_CHAIN_HISTORY_STATES
// past states, in memory, so it offloads nothing; `anvil-home/` is emptied at every fresh start and at stop.

/** What `anvil.json` in the data dir records about the running local chain. */
interface LocalChainRecord {
  pid: number;
  port: number;
  chainId: number;
  stateFile: string;
}

export interface StartLocalChainOptions {
  dataDir: string;
  /** 0 picks a free port on a fresh start; an adopted chain keeps its port. */
  port: number;
  chainId: number;
  blockTime?: number;
  /** Seconds between anvil's state dumps (what survives if anvil itself dies uncleanly). */
  stateIntervalSeconds: number;
  /** Past block states kept for reads at an older block (default LOCAL_CHAIN_HISTORY_STATES). */
  historyStates?: number;
  logger: Logger;
}

/**
 * Past block states the local chain keeps, in memory: anvil copies the whole state for every block, so memory
 * is about this many times the state (anvil's default, 500 in memory plus 3,600 on disk, reached gigabytes).
 * Reads a little behind the head (the reconciler reads at a head it fetched a moment earlier; with automine
 * every transaction is a block) stay well inside 64 blocks.
 */
export const LOCAL_CHAIN_HISTORY_STATES = 64;

/** anvil's HOME inside the data dir: whatever anvil writes beside its state file lands here. */
export function localChainHome(dataDir: string): string {
  return join(dataDir, 'anvil-home');
}

export interface LocalChain extends AnvilInstance {
  /** True when this start found the chain of an earlier process still running and took it over. */
  adopted: boolean;
}

const RECORD_FILE = 'anvil.json';

function readRecord(path: string): LocalChainRecord | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<LocalChainRecord>;
    if (
      typeof record.pid === 'number' &&
      typeof record.port === 'number' &&
      typeof record.chainId === 'number' &&
      typeof record.stateFile === 'string'
    ) {
      return record as LocalChainRecord;
    }
  } catch {
    // A torn write (a crash while writing it): treat as absent; the state file still holds the chain.
  }
  return undefined;
}

function writeRecord(path: string, record: LocalChainRecord): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(record)}\n`);
  renameSync(temporary, path);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive but not ours to signal, so not an anvil we started.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `pid` is still the anvil we recorded (pids are reused): on Linux its command line must name our state
 * file and port; elsewhere the RPC answer on the recorded port with the recorded chain id has to do.
 */
function isRecordedAnvil(record: LocalChainRecord): boolean {
  if (!isAlive(record.pid)) return false;
  const cmdlinePath = `/proc/${record.pid}/cmdline`;
  if (!existsSync('/proc/self/cmdline')) return true;
  try {
    const args = readFileSync(cmdlinePath, 'utf8').split('\0');
    const portAt = args.indexOf('--port');
    return args.includes(record.stateFile) && portAt >= 0 && args[portAt + 1] === String(record.port);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SIGTERM (anvil dumps its state), then SIGKILL after STATE_DUMP_GRACE_MS; resolves once the process is gone. */
async function terminate(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  // Real elapsed time (monotonic): this waits for another OS process, not for anything the clock governs.
  const killAt = performance.now() + STATE_DUMP_GRACE_MS;
  while (isAlive(pid)) {
    if (performance.now() > killAt) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await sleep(50);
  }
}

/**
 * Whether the recorded anvil answers within a few seconds: right after a crash under load it may still be
 * busy (mining what was sent, dumping its state), and a slow answer is no reason to throw its blocks away.
 */
async function answersSoon(record: LocalChainRecord): Promise<boolean> {
  // Real elapsed time (monotonic): a wait for another OS process.
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    if (!isAlive(record.pid)) return false;
    if (await answersChainId(`http://127.0.0.1:${record.port}`, record.chainId)) return true;
    await sleep(200);
  }
  return false;
}

function adopt(record: LocalChainRecord, recordPath: string, homeDir: string, logger: Logger): LocalChain {
  const rpcUrl = `http://127.0.0.1:${record.port}`;
  // As for a chain this process spawned: a plain exit without stop() must not leave it running.
  const stopOnExit = () => {
    try {
      process.kill(record.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  process.once('exit', stopOnExit);
  let stopping: Promise<void> | undefined;
  logger.info({ rpcUrl, pid: record.pid }, 'adopted the local chain an earlier process left running');
  return {
    rpcUrl,
    port: record.port,
    pid: record.pid,
    adopted: true,
    stop: () => {
      stopping ??= (async () => {
        process.removeListener('exit', stopOnExit);
        await terminate(record.pid);
        rmSync(recordPath, { force: true });
        rmSync(homeDir, { recursive: true, force: true });
        logger.info({ rpcUrl }, 'anvil stopped');
      })();
      return stopping;
    },
  };
}

/**
 * Whether the file holds one complete JSON object: a torn write (anvil killed while dumping) leaves it cut
 * off. Read in chunks, following strings and nesting, instead of `JSON.parse`: a long-lived chain's state file
 * grows past what one JavaScript string can hold (~512 MiB), and parsing it whole would call a good file
 * damaged and start an empty chain (seen at 500,000 rewards: a 572 MiB file).
 */
export function isCompleteJsonObject(path: string, chunkBytes = 1 << 20): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  const buffer = Buffer.alloc(chunkBytes);
  let depth = 0;
  let started = false;
  let closed = false;
  let inString = false;
  let escaped = false;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null);
      if (read === 0) break;
      for (let i = 0; i < read; i++) {
        const byte = buffer[i] as number;
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === 0x5c) escaped = true;
          else if (byte === 0x22) inString = false;
          continue;
        }
        if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
        // Anything after the top-level object closed, or before it opened, is not one JSON object.
        if (closed || (!started && byte !== 0x7b)) return false;
        started = true;
        if (byte === 0x22) inString = true;
        else if (byte === 0x7b || byte === 0x5b) depth++;
        else if (byte === 0x7d || byte === 0x5d) {
          depth--;
          if (depth < 0) return false;
          if (depth === 0) closed = true;
        }
      }
    }
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
  return closed && !inString;
}

/**
 * anvil writes its state file in place, so anvil killed in the middle of a dump (a machine crash) leaves a file
 * it cannot load, and would not start. Such a file is moved aside and the last good copy (kept at every start)
 * is used instead; the reconciler then restores what that copy lacks.
 */
function prepareStateFile(stateFile: string, logger: Logger): void {
  const backup = `${stateFile}.bak`;
  if (existsSync(stateFile)) {
    if (isCompleteJsonObject(stateFile)) {
      copyFileSync(stateFile, backup);
      return;
    }
    const aside = `${stateFile}.corrupt`;
    renameSync(stateFile, aside);
    logger.error({ stateFile, movedTo: aside }, 'the local chain state file is damaged (anvil died while saving it)');
  }
  if (existsSync(backup) && isCompleteJsonObject(backup)) {
    copyFileSync(backup, stateFile);
    logger.warn({ stateFile, from: backup }, 'local chain state restored from its last good copy');
  }
}

/**
 * Adopts the local chain an earlier core-api left running in this data dir (a crash, a kill of its process
 * group), or starts one that loads `<dataDir>/anvil-state.json`. A chain left running on another port or
 * chain id than asked is stopped first (SIGTERM, so its state is dumped) and started again from its state.
 */
export async function startLocalChain(options: StartLocalChainOptions): Promise<LocalChain> {
  const { dataDir, chainId, logger } = options;
  const stateFile = join(dataDir, 'anvil-state.json');
  const recordPath = join(dataDir, RECORD_FILE);
  const homeDir = localChainHome(dataDir);
  const record = readRecord(recordPath);
  if (record && record.stateFile === stateFile && isRecordedAnvil(record)) {
    const fits = record.chainId === chainId && (options.port === 0 || options.port === record.port);
    if (fits && (await answersSoon(record))) return adopt(record, recordPath, homeDir, logger);
    logger.warn(
      { pid: record.pid, port: record.port, fits },
      'stopping the local chain left running (other settings, or it does not answer)',
    );
    await terminate(record.pid);
  }
  prepareStateFile(stateFile, logger);
  // No anvil runs for this data dir now: whatever an earlier one left in its HOME (a kill -9) is garbage.
  rmSync(homeDir, { recursive: true, force: true });
  mkdirSync(homeDir, { recursive: true });
  const anvil = await startAnvil({
    port: options.port,
    chainId,
    stateFile,
    stateIntervalSeconds: options.stateIntervalSeconds,
    historyStates: options.historyStates ?? LOCAL_CHAIN_HISTORY_STATES,
    homeDir,
    ...(options.blockTime !== undefined ? { blockTime: options.blockTime } : {}),
    detached: { logFile: join(dataDir, 'anvil.log') },
    logger,
  });
  writeRecord(recordPath, { pid: anvil.pid, port: anvil.port, chainId, stateFile });
  return {
    ...anvil,
    adopted: false,
    stop: async () => {
      await anvil.stop();
      rmSync(recordPath, { force: true });
      rmSync(homeDir, { recursive: true, force: true });
    },
  };
}
