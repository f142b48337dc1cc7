import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANVIL_DEPLOYER_PRIVATE_KEY,
  ANVIL_MINTER_PRIVATE_KEY,
  type AnvilInstance,
  findFreePort,
  startAnvil,
} from '../../src/chain/anvil.ts';
import { rewardTokenAbi } from '../../src/chain/artifacts/index.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../database.ts';

// The real process, killed with SIGKILL while requests are in flight and rewards are waiting to be minted,
// then started again: every accepted reward is minted exactly once and the chain agrees with the ledger.

const MAIN = resolve(import.meta.dirname, '../../src/main.ts');
const REWARD = 100n;

let anvil: AnvilInstance;
let database: TestDatabase | undefined;
let dataDir: string;
let child: ChildProcess | undefined;
let env: Record<string, string>;

async function startCore(): Promise<string> {
  const port = await findFreePort();
  child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`core-api exited early:\n${output}`);
    try {
      // Ready, and the demo brand seeded (main.ts seeds it once the server listens).
      if ((await fetch(`${url}/readyz`)).status === 200 && existsSync(join(dataDir, 'demo-brand.json'))) return url;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`core-api did not become ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function killCore(signal: NodeJS.Signals): Promise<void> {
  const running = child;
  child = undefined;
  if (!running || running.exitCode !== null) return Promise.resolve();
  return new Promise((done) => {
    running.once('exit', () => done());
    running.kill(signal);
  });
}

async function setUp(inline: boolean): Promise<void> {
  anvil = await startAnvil({ port: 0 });
  dataDir = mkdtempSync(join(tmpdir(), 'pts-crash-'));
  database = testDatabaseKind === 'postgres' ? await createTestDatabase() : undefined;
  env = {
    PTS_DATA_DIR: dataDir,
    PTS_CHAIN: 'rpc',
    PTS_RPC_URL: anvil.rpcUrl,
    // An automine anvil mines only when sent a transaction: with the rpc defaults (the `safe` tag, 10 blocks)
    // the last rewards would stay `submitted` while the chain idles. Finality has its own tests
    // (chain/rollback.test.ts); this one is about crashes, so a mined block is final.
    PTS_MINT_FINALITY_DEPTH: '0',
    PTS_MINT_FINALITY_TAG: 'latest',
    PTS_DEPLOYER_PRIVATE_KEY: ANVIL_DEPLOYER_PRIVATE_KEY,
    PTS_MINTER_PRIVATE_KEY: ANVIL_MINTER_PRIVATE_KEY,
    PTS_SEED_DEMO: 'true',
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_MINT_INLINE: String(inline),
    // Without inline signing, a long gather window keeps committed rewards waiting in the minter.
    PTS_MINT_BATCH_WAIT_MS: '1500',
    PTS_RECEIPT_POLL_MS: '100',
    LOG_LEVEL: 'error',
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
  };
}

async function tearDown(): Promise<void> {
  await killCore('SIGTERM');
  await anvil?.stop();
  await database?.close();
  rmSync(dataDir, { recursive: true, force: true });
}

async function rpc(method: string, params: unknown[] = []): Promise<void> {
  const res = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
}

// Two windows between accepting and minting. Inline (the default): the accept transaction signs the batch's
// mintBatch, so the kill finds rewards `submitted` in transactions the chain has not mined (automine is off
// until after the kill) or not even received. Not inline: rewards committed `pending`, waiting in the
// minter's gather window.
describe.each([
  { inline: true, waitFor: 'submitted' as const },
  { inline: false, waitFor: 'pending' as const },
])(`crash recovery (${testDatabaseKind}, inline signing $inline)`, ({ inline, waitFor }) => {
  beforeAll(() => setUp(inline), 120_000);
  afterAll(() => tearDown());

  it('loses no accepted reward and mints none twice when killed between accepting and minting', async () => {
    let url = await startCore();
    if (inline) await rpc('evm_setAutomine', [false]);
    const { brandId } = JSON.parse(readFileSync(join(dataDir, 'demo-brand.json'), 'utf8')) as { brandId: string };
    const send = (i: number): Promise<{ status: number; body: { walletAddress?: string } }> =>
      fetch(`${url}/pts-api/manual-event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          brandId,
          eventType: 'account_creation',
          userEmail: `crash${i}@example.com`,
          domain: 'localhost',
        }),
      })
        .then(async (res) => ({ status: res.status, body: (await res.json()) as { walletAddress?: string } }))
        .catch(() => ({ status: 0, body: {} }));

    const inFlight = Array.from({ length: 40 }, (_, i) => send(i));
    // Kill once rewards are committed and waiting in the minter's gather window.
    const killBy = Date.now() + 30_000;
    for (;;) {
      const queue = (await (await fetch(`${url}/reward-processor/queue`)).json()) as Record<string, number>;
      if ((queue[waitFor] ?? 0) >= 5) break;
      if (Date.now() > killBy) throw new Error('no rewards became pending');
      await new Promise((r) => setTimeout(r, 25));
    }
    await killCore('SIGKILL');
    const answered = await Promise.all(inFlight);
    const rewarded = answered.filter((a) => a.status === 200);

    // The kill must have caught rewards that were accepted but not yet confirmed on chain.
    const afterKill = await openDatabase({ databaseUrl: database?.url, pgliteDir: join(dataDir, 'pglite') });
    const open = await afterKill.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '!=', 'confirmed')
      .executeTakeFirstOrThrow();
    await afterKill.close();
    expect(Number(open.count)).toBeGreaterThan(0);
    if (inline) {
      // What the dead process sent is still in the mempool; the chain mines again from here on.
      await rpc('evm_setAutomine', [true]);
      await rpc('evm_mine');
    }

    url = await startCore();
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    let queue: { pending: number; submitted: number; confirmed: number; failed: number } | undefined;
    const deadline = Date.now() + 30_000;
    for (;;) {
      await fetch(`${url}/reward-processor/process-pending`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}` },
      });
      queue = (await (await fetch(`${url}/reward-processor/queue`)).json()) as typeof queue;
      if (queue && queue.pending === 0 && queue.submitted === 0) break;
      if (Date.now() > deadline) throw new Error(`rewards still open: ${JSON.stringify(queue)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    expect(queue!.failed).toBe(0);
    // Every answered reward is among the confirmed ones, and rewards whose answer the kill cut off too.
    expect(queue!.confirmed).toBeGreaterThanOrEqual(rewarded.length);
    expect(queue!.confirmed).toBeGreaterThan(0);

    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    const diagnostic = (await (await fetch(`${url}/pts-api/diagnostic`)).json()) as {
      contracts: { rewardToken: `0x${string}` };
    };
    const token = diagnostic.contracts.rewardToken;
    const supply = await client.readContract({ address: token, abi: rewardTokenAbi, functionName: 'totalSupply' });
    expect(supply).toBe(REWARD * BigInt(queue!.confirmed));
    for (const { body } of rewarded) {
      const balance = await client.readContract({
        address: token,
        abi: rewardTokenAbi,
        functionName: 'balanceOf',
        args: [body.walletAddress as `0x${string}`],
      });
      expect(balance).toBe(REWARD);
    }
  });
});
