import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, findFreePort } from '../../src/chain/anvil.ts';

// Real core-api processes (`node --import tsx src/main.ts`) for the tests that run several on one database.

const MAIN = resolve(import.meta.dirname, '../../src/main.ts');

export interface Core {
  name: string;
  url: string;
  child: ChildProcess;
  output: () => string;
  dataDir: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

/**
 * The environment replicas share: one database and one chain (an rpc chain whose mined block is final: an
 * automine anvil mines only when sent a transaction, so the rpc defaults — the `safe` tag, 10 blocks — would
 * leave the last rewards `submitted`; finality has its own tests in chain/rollback.test.ts), the deployer and
 * minter keys, and the secrets every replica must share through the environment, not a data directory.
 */
export function replicaEnv(options: {
  databaseUrl: string;
  rpcUrl: string;
  adminToken: string;
}): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    PTS_CHAIN: 'rpc',
    PTS_RPC_URL: options.rpcUrl,
    PTS_MINT_FINALITY_DEPTH: '0',
    PTS_MINT_FINALITY_TAG: 'latest',
    PTS_DEPLOYER_PRIVATE_KEY: ANVIL_DEPLOYER_PRIVATE_KEY,
    PTS_MINTER_PRIVATE_KEY: ANVIL_MINTER_PRIVATE_KEY,
    PTS_ADMIN_TOKEN: options.adminToken,
    PTS_MASTER_KEY: randomBytes(32).toString('hex'),
    PTS_WALLET_MNEMONIC: 'test test test test test test test test test test test junk',
    PTS_SEED_DEMO: 'false',
  };
}

/** Starts one process with `env` (over this one's) and its own port and data directory; resolves when ready. */
export async function startCore(name: string, env: Record<string, string>, cores: Core[]): Promise<Core> {
  const port = await findFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), `pts-replica-${name}-`));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...env, PORT: String(port), PTS_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const core: Core = { name, url: `http://127.0.0.1:${port}`, child, output: () => output, dataDir };
  cores.push(core);
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`core-api ${name} exited early:\n${output}`);
    try {
      if ((await fetch(`${core.url}/readyz`)).status === 200) return core;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`core-api ${name} did not become ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function stopCore(core: Core, signal: NodeJS.Signals): Promise<void> {
  if (core.child.exitCode !== null || core.child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    core.child.once('exit', () => done());
    core.child.kill(signal);
  });
}

export async function call(
  core: Core,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  try {
    const res = await fetch(`${core.url}${path}`, {
      method,
      headers: raw === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(raw === undefined ? {} : { body: raw }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body: parsed };
  } catch {
    // The process died with the request in flight.
    return { status: 0, headers: new Headers(), body: undefined };
  }
}
