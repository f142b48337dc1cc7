import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findFreePort } from '../../src/chain/anvil.ts';

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
