/**
 * `npm run bench -- chain-realistic`: rewards per second that reach `confirmed` (final) on a chain that mines
 * a block every 2 s, as the target OP-stack L2 (Soneium) does, and the time from acknowledgement to finality
 * (issue 26, "Scale"). See docs/benchmarks.md, "Chain-realistic (2 s blocks)".
 *
 *   npm run bench -- chain-realistic [--db postgres|pglite] [--duration 60] [--block-time 2] [--clients 16]
 *        [--bulk 50] [--rate 0] [--users 0] [--gas-limit 60000000] [--warmup 3] [--settle 300] [--pause-chain]
 *        [--json]
 *
 * anvil runs with interval mining (`--block-time`) and the block gas limit set to `--gas-limit` (default
 * 60,000,000: Soneium's, from its superchain-registry genesis; anvil's own default is 30,000,000). The
 * platform runs in this process as `npm start` builds it, as an operator would run it against an external
 * chain (`PTS_CHAIN=rpc`): contracts deployed at start, the minter signing inline, and finality as configured
 * (PTS_MINT_FINALITY_DEPTH / _TAG from the environment; unset, the rpc defaults: 10 blocks and `safe`, which
 * anvil puts 32 blocks below its head). `--clients` clients in a worker thread send brand-signed events —
 * `POST /pts-api/bulk-events` with `--bulk` events each, or `POST /pts-api/manual-event` with `--bulk 0` — for
 * `--duration` seconds, paced to `--rate` events/s in total (0: as fast as answers come). Every event is a new
 * user unless `--users N` cycles through N users (returning members: their mint costs less gas). Then it waits
 * up to `--settle` seconds for every acknowledged reward to be confirmed and prints: acknowledged and confirmed
 * rewards/s, acknowledgement → confirmation p50/p95/max, the backlog when the load stopped and whether it
 * drained, gas per reward, rewards and transactions per block, and how full the blocks were.
 *
 * `--pause-chain` stops the chain's mining while the load runs (`evm_setIntervalMining 0`; keep `--duration`
 * under PTS_MINT_STUCK_SECONDS, 30 s, or the minter starts replacing) and restarts its interval after: the
 * minter has sent the whole backlog, so what confirms per second then is what the chain and one minter key
 * can carry, whatever rate this machine's intake reached (a sequencer that stalls and resumes does the same).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { signRequest } from '@pts/shared';

// ---------------------------------------------------------------------------------------------------------
// Load generator (worker thread)
// ---------------------------------------------------------------------------------------------------------

interface LoadJob {
  url: string;
  clients: number;
  durationMs: number;
  /** Events per request: bulk-events when > 0, manual-event when 0. */
  bulk: number;
  /** Events per second in total; 0: unpaced. */
  rate: number;
  /** Distinct users to cycle through; 0: a new user per event. */
  users: number;
  brandId: string;
  securityKey: string;
  eventType: string;
  emailPrefix: string;
}

interface LoadResult {
  elapsedMs: number;
  requests: number;
  events: number;
  /** Events answered `success` (acknowledged: the reward is committed and will be minted). */
  acknowledged: number;
  /** Of those, answered with a transaction hash (its batch was sent). */
  withHash: number;
  /** Per request, milliseconds. */
  latencies: Float64Array;
  errors: Record<string, number>;
}

type WorkerMessage =
  | { type: 'started'; at: number }
  | { type: 'progress'; elapsedMs: number; acknowledged: number }
  | { type: 'done'; result: LoadResult }
  | { type: 'failed'; error: string };

const MANUAL_PATH = '/pts-api/manual-event';
const BULK_PATH = '/pts-api/bulk-events';

function post(agent: http.Agent, target: URL, path: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      { agent, host: target.hostname, port: target.port, method: 'POST', path, headers, timeout: 60_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('ETIMEDOUT')));
    req.on('error', reject);
    req.end(body);
  });
}

interface EventAnswer {
  success?: boolean;
  duplicate?: boolean;
  transactionHash?: string;
  code?: string;
  status?: number;
}

async function runLoad(job: LoadJob, report: (message: WorkerMessage) => void): Promise<LoadResult> {
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.clients });
  const perRequest = Math.max(1, job.bulk);
  const path = job.bulk > 0 ? BULK_PATH : MANUAL_PATH;
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const count = (key: string, n = 1) => {
    errors[key] = (errors[key] ?? 0) + n;
  };
  let requests = 0;
  let events = 0;
  let acknowledged = 0;
  let withHash = 0;
  let sequence = 0;
  let slot = 0;
  const start = performance.now();
  report({ type: 'started', at: Date.now() });
  const deadline = start + job.durationMs;
  const intervalMs = job.rate > 0 ? (perRequest / job.rate) * 1000 : 0;
  const event = () => {
    const n = sequence++;
    const user = job.users > 0 ? n % job.users : n;
    const identityKey = `${job.emailPrefix}-${user}@bench.example`;
    // Returning users repeat bodies: the sequence number keeps each request's signature distinct (a repeated
    // signature is answered as a replay of its first request, not judged again).
    return job.users > 0
      ? { brandId: job.brandId, eventType: job.eventType, userEmail: identityKey, metadata: { sequence: n } }
      : { brandId: job.brandId, eventType: job.eventType, userEmail: identityKey };
  };
  const tally = (answer: EventAnswer) => {
    if (answer.success && answer.duplicate) count('200 duplicate');
    else if (answer.success) {
      acknowledged++;
      if (answer.transactionHash) withHash++;
    } else count(`${answer.status ?? '?'} ${answer.code ?? ''}`.trim());
  };

  const one = async () => {
    const items = Array.from({ length: perRequest }, event);
    const body = JSON.stringify(job.bulk > 0 ? { events: items } : items[0]);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...signRequest({ securityKey: job.securityKey, method: 'POST', pathWithQuery: path, body }),
    };
    const began = performance.now();
    try {
      const response = await post(agent, target, path, headers, body);
      let parsed: (EventAnswer & { results?: EventAnswer[] }) | undefined;
      try {
        parsed = JSON.parse(response.text);
      } catch {}
      if (response.status !== 200 || !parsed) count(`${response.status} ${parsed?.code ?? ''}`.trim(), perRequest);
      else if (job.bulk > 0) for (const result of parsed.results ?? []) tally(result);
      else tally(parsed);
    } catch (error) {
      count(`network ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, perRequest);
    }
    latencies.push(performance.now() - began);
    requests++;
    events += perRequest;
  };

  const client = async () => {
    for (;;) {
      if (intervalMs > 0) {
        // Open loop: request k is due at start + k × interval; a client late for its slot sends at once.
        const due = start + slot++ * intervalMs;
        if (due >= deadline) return;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      } else if (performance.now() >= deadline) return;
      await one();
    }
  };
  const progress = setInterval(
    () => report({ type: 'progress', elapsedMs: performance.now() - start, acknowledged }),
    5000,
  );
  try {
    await Promise.all(Array.from({ length: job.clients }, client));
  } finally {
    clearInterval(progress);
    agent.destroy();
  }
  return {
    elapsedMs: performance.now() - start,
    requests,
    events,
    acknowledged,
    withHash,
    latencies: Float64Array.from(latencies),
    errors,
  };
}

if (!isMainThread) {
  const send = (message: WorkerMessage) => parentPort!.postMessage(message);
  runLoad(workerData as LoadJob, send).then(
    (result) => parentPort!.postMessage({ type: 'done', result } satisfies WorkerMessage),
    (error: unknown) => send({ type: 'failed', error: String((error as Error)?.stack ?? error) }),
  );
}

function runLoadInWorker(
  job: LoadJob,
  hooks: { onStart: (at: number) => void; onProgress: (elapsedMs: number, acknowledged: number) => void },
) {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsxApi)}).then((m) => m.tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
  return new Promise<LoadResult>((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: job });
    let settled = false;
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'started') hooks.onStart(message.at);
      else if (message.type === 'progress') hooks.onProgress(message.elapsedMs, message.acknowledged);
      else {
        settled = true;
        if (message.type === 'done') resolve(message.result);
        else reject(new Error(message.error));
        void worker.terminate();
      }
    });
    worker.on('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.on('exit', (code) => {
      if (!settled) reject(new Error(`load worker exited with code ${code}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------------------

interface Spread {
  p50: number;
  p95: number;
  max: number;
}

function spread(values: number[]): Spread {
  if (values.length === 0) return { p50: 0, p95: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]! };
}

interface Summary {
  database: 'postgres' | 'pglite';
  chainPaused: boolean;
  chain: { blockTimeSeconds: number; gasLimit: number; finality: { depth: number; tag: string } };
  load: {
    clients: number;
    eventsPerRequest: number;
    targetRate: number;
    users: number;
    seconds: number;
    requests: number;
    events: number;
    acknowledged: number;
    acknowledgedWithHash: number;
    errors: Record<string, number>;
    requestLatencyMs: Spread;
  };
  acknowledgedPerSecond: number;
  /** Confirmations ÷ (last − first confirmation + one block interval). */
  confirmedPerSecond: number;
  /** Every acknowledged reward confirmed ÷ (last confirmation − load start). */
  confirmedPerSecondEndToEnd: number;
  ackToConfirmedSeconds: Spread;
  backlog: { atLoadEnd: number; atEnd: number; drained: boolean; drainSeconds: number };
  minting: {
    transactions: number;
    rewardsPerTransaction: number;
    gasPerReward: number;
    blocksWithOurs: number;
    rewardsPerBlock: { mean: number; max: number };
    transactionsPerBlock: { mean: number; max: number };
    /** Gas used ÷ gas limit over the blocks that carried our transactions. */
    blockFullness: { mean: number; max: number };
    /** Most rewards per block the gas limit allows at this run's gas per reward, and per second. */
    gasCeilingRewardsPerSecond: number;
  };
  supplyCheck: 'OK' | 'MISMATCH';
  target: { confirmedPerSecond: number; met: boolean };
  loadAverage: { start: number[]; end: number[] };
}

const TARGET_CONFIRMED_PER_SECOND = 1000;
const EVENT_TYPE = 'bench_reward';
const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (value: number, digits = 1) => value.toFixed(digits);
const loadNow = () => loadavg().map((value) => Math.round(value * 100) / 100);

// ---------------------------------------------------------------------------------------------------------
// One run
// ---------------------------------------------------------------------------------------------------------

interface Options {
  db: 'postgres' | 'pglite';
  durationSeconds: number;
  blockTime: number;
  clients: number;
  bulk: number;
  rate: number;
  users: number;
  gasLimit: number;
  warmupSeconds: number;
  settleSeconds: number;
  /** No block while the load runs; the chain then mines the backlog at its 2 s interval. */
  pauseChain: boolean;
  json: boolean;
}

async function run(options: Options): Promise<Summary> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const pg = (await import('pg')).default;
  const { createPublicClient, http: viemHttp } = await import('viem');
  const { loadConfig, mintFinality } = await import('../src/config.ts');
  const { startPlatform } = await import('../src/startup/platform.ts');
  const { createBrand, setRule } = await import('../src/modules/brands/brands.service.ts');
  const { rewardTokenAbi } = await import('../src/chain/artifacts/index.ts');
  const { ANVIL_DEPLOYER_PRIVATE_KEY, ANVIL_MINTER_PRIVATE_KEY, startAnvil } = await import('../src/chain/anvil.ts');

  const loadStartAvg = loadNow();
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch((error) => log(`cleanup: ${(error as Error).message}`));
    cleanups.length = 0;
  };
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'pts-bench-chain-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    let databaseUrl: string | undefined;
    if (options.db === 'postgres') {
      const adminUrl =
        process.env.PTS_BENCH_DATABASE_URL ??
        process.env.PTS_TEST_DATABASE_URL ??
        'postgres://postgres@127.0.0.1:5432/postgres';
      const dbName = `pts_bench_chain_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      cleanups.push(async () => {
        const dropper = new pg.Client({ connectionString: adminUrl });
        await dropper.connect();
        await dropper.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).finally(() => dropper.end());
      });
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      databaseUrl = url.toString();
    }

    const anvil = await startAnvil({ port: 0, blockTime: options.blockTime });
    cleanups.push(() => anvil.stop());
    const publicClient = createPublicClient({ transport: viemHttp(anvil.rpcUrl) });
    await publicClient.request({
      method: 'evm_setBlockGasLimit' as never,
      params: [`0x${options.gasLimit.toString(16)}`] as never,
    });

    // PTS_* settings from the environment pass through (PTS_MINT_FINALITY_*, PTS_MINT_BATCH_MAX, …).
    const passThrough = Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('PTS_')));
    delete passThrough.PTS_DATA_DIR;
    const config = loadConfig({
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000000',
      PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000000',
      // The bench settles leftovers itself; the minute cron would re-drive rows mid-run.
      PTS_REWARD_PROCESSOR_CRON: '0 0 1 1 *',
      // Returning users (--users) claim again within seconds.
      PTS_DUPLICATE_WINDOW_SECONDS: '0',
      ...passThrough,
      PORT: '0',
      HOST: '127.0.0.1',
      PTS_DATA_DIR: dataDir,
      LOG_LEVEL: process.env.PTS_BENCH_LOG_LEVEL ?? 'silent',
      PTS_SEED_DEMO: 'false',
      PTS_CHAIN: 'rpc',
      PTS_RPC_URL: anvil.rpcUrl,
      PTS_DEPLOYER_PRIVATE_KEY: ANVIL_DEPLOYER_PRIVATE_KEY,
      PTS_MINTER_PRIVATE_KEY: ANVIL_MINTER_PRIVATE_KEY,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    if (options.pauseChain && options.durationSeconds >= config.PTS_MINT_STUCK_SECONDS) {
      // Longer, and the minter rightly replaces the transactions the paused chain does not mine.
      throw new Error(`--pause-chain needs --duration below PTS_MINT_STUCK_SECONDS (${config.PTS_MINT_STUCK_SECONDS})`);
    }
    const finality = mintFinality(config);
    const platform = await startPlatform(config);
    cleanups.push(() => platform.stop());
    const { deps, url } = platform;
    const head = await publicClient.getBlock();
    const safe = await publicClient.getBlock({ blockTag: 'safe' }).catch(() => undefined);
    log(
      `chain: anvil, a block every ${options.blockTime} s, gas limit ${head.gasLimit} per block; finality ${finality.depth} blocks and \`${finality.tag}\` (anvil's safe block is ${safe ? head.number - safe.number : '?'} below its head); batch max ${config.PTS_MINT_BATCH_MAX}, receipt poll ${config.PTS_RECEIPT_POLL_MS} ms`,
    );

    const serviceDeps = { db: deps.db, secrets: deps.secrets, clock: deps.clock, changes: platform.changes };
    const makeBrand = async (name: string) => {
      const brand = await createBrand(serviceDeps, { name, domain: `${name}.bench.example` });
      await setRule(serviceDeps, brand.brandId, {
        eventType: EVENT_TYPE,
        rewardAmount: 10,
        cooldownHours: 0,
        maxClaims: -1,
      });
      return brand;
    };
    const runId = randomBytes(3).toString('hex');
    const job = (brand: { brandId: string; securityKey: string }, prefix: string, seconds: number): LoadJob => ({
      url,
      clients: options.clients,
      durationMs: seconds * 1000,
      bulk: options.bulk,
      rate: options.rate,
      users: options.users,
      brandId: brand.brandId,
      securityKey: brand.securityKey,
      eventType: EVENT_TYPE,
      emailPrefix: `${prefix}-${runId}`,
    });
    const openRows = async (brandId: string) => {
      const row = await deps.db
        .selectFrom('reward_mints')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('brand_id', '=', brandId)
        .where('status', 'in', ['pending', 'submitted'])
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    /** Waits until no reward of the brand is open (re-driving stragglers), or `seconds` pass. */
    const settle = async (brandId: string, seconds: number) => {
      const began = performance.now();
      let last = -1;
      let lastReport = began;
      let stalledSince = began;
      for (;;) {
        const open = await openRows(brandId);
        if (open === 0) return { open, seconds: (performance.now() - began) / 1000 };
        if (performance.now() - began > seconds * 1000) return { open, seconds: (performance.now() - began) / 1000 };
        if (open !== last) {
          last = open;
          stalledSince = performance.now();
        } else if (performance.now() - stalledSince > 10_000) {
          await deps.minter.processPending();
          stalledSince = performance.now();
        }
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          log(`  settling: ${open} rewards not confirmed yet`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };

    if (options.warmupSeconds > 0) {
      const warmBrand = await makeBrand('warmup');
      log(`warm-up: ${options.warmupSeconds} s of events, then its rewards confirmed`);
      const warm = await runLoadInWorker(job(warmBrand, 'warm', options.warmupSeconds), {
        onStart: () => {},
        onProgress: () => {},
      });
      if (warm.acknowledged === 0) throw new Error(`warm-up rewarded nothing: ${JSON.stringify(warm.errors)}`);
      await settle(warmBrand.brandId, options.settleSeconds);
    }

    const brand = await makeBrand('bench');
    const intervalMining = (seconds: number) =>
      publicClient.request({ method: 'evm_setIntervalMining' as never, params: [seconds] as never });
    if (options.pauseChain) await intervalMining(0);
    const startBlock = await publicClient.getBlockNumber({ cacheTime: 0 });
    log(
      `load: ${options.clients} clients → ${options.bulk > 0 ? `${BULK_PATH} (${options.bulk} events each)` : MANUAL_PATH}, ${options.users > 0 ? `${options.users} returning users` : 'a new user per event'}, ${options.rate > 0 ? `paced to ${options.rate} events/s` : 'unpaced'}, for ${options.durationSeconds} s`,
    );
    let loadStartedAt = Date.now();
    const result = await runLoadInWorker(job(brand, 'user', options.durationSeconds), {
      onStart: (at) => {
        loadStartedAt = at;
      },
      onProgress: (elapsedMs, acknowledged) => {
        void openRows(brand.brandId).then((open) =>
          log(
            `  ${fmt(elapsedMs / 1000, 0)} s: ${acknowledged} acknowledged (${fmt((acknowledged / elapsedMs) * 1000, 0)}/s), ${Math.max(acknowledged - open, 0)} confirmed, ${open} open`,
          ),
        );
      },
    });
    const loadEndedAt = loadStartedAt + result.elapsedMs;
    if (options.pauseChain) {
      await intervalMining(options.blockTime);
      log(`the chain mines again, a block every ${options.blockTime} s`);
    }
    const atLoadEnd = await openRows(brand.brandId);
    log(`load done: ${result.acknowledged} acknowledged, ${atLoadEnd} not yet confirmed; settling`);
    const settled = await settle(brand.brandId, options.settleSeconds);
    const endBlock = await publicClient.getBlockNumber({ cacheTime: 0 });

    // Acknowledgement → confirmation per reward: the row is written in the accept transaction (created_at),
    // the request is answered right after its commit, and the row's last update is its confirmation.
    const rows = await deps.db
      .selectFrom('reward_mints')
      .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
      .select([
        'reward_mints.status',
        'reward_mints.created_at',
        'reward_mints.updated_at',
        'reward_mints.chain_tx_id',
        'chain_txs.block_number',
        'chain_txs.gas_used',
      ])
      .where('reward_mints.brand_id', '=', brand.brandId)
      .execute();
    const confirmed = rows.filter((row) => row.status === 'confirmed');
    const confirmedAt = confirmed.map((row) => new Date(row.updated_at).getTime()).sort((a, b) => a - b);
    const firstConfirm = confirmedAt[0] ?? loadEndedAt;
    const lastConfirm = confirmedAt[confirmedAt.length - 1] ?? loadEndedAt;
    const latencies = confirmed.map(
      (row) => (new Date(row.updated_at).getTime() - new Date(row.created_at).getTime()) / 1000,
    );

    const txs = new Map<string, { block: bigint; gas: bigint; rewards: number }>();
    for (const row of confirmed) {
      if (row.chain_tx_id === null || row.block_number === null) continue;
      const key = String(row.chain_tx_id);
      const tx = txs.get(key) ?? { block: BigInt(row.block_number), gas: BigInt(row.gas_used ?? 0), rewards: 0 };
      tx.rewards++;
      txs.set(key, tx);
    }
    const blocks = new Map<bigint, { rewards: number; txs: number }>();
    let gas = 0n;
    let rewardsInTxs = 0;
    for (const tx of txs.values()) {
      const block = blocks.get(tx.block) ?? { rewards: 0, txs: 0 };
      block.rewards += tx.rewards;
      block.txs++;
      blocks.set(tx.block, block);
      gas += tx.gas;
      rewardsInTxs += tx.rewards;
    }
    const fullness: number[] = [];
    for (const number of blocks.keys()) {
      const block = await publicClient.getBlock({ blockNumber: number });
      fullness.push(Number(block.gasUsed) / Number(block.gasLimit));
    }
    const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
    const gasPerReward = rewardsInTxs > 0 ? Number(gas) / rewardsInTxs : 0;

    const totalSupply = await publicClient.readContract({
      address: deps.chain.contracts.rewardToken as `0x${string}`,
      abi: rewardTokenAbi,
      functionName: 'totalSupply',
    });
    const confirmedSum = await deps.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.sum<string>('amount').as('sum'))
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();

    // From the first confirmation to the last, plus the one block interval the first one stands for.
    const confirmedPerSecond = (confirmed.length / (lastConfirm - firstConfirm + options.blockTime * 1000)) * 1000;
    const summary: Summary = {
      database: options.db,
      chainPaused: options.pauseChain,
      chain: { blockTimeSeconds: options.blockTime, gasLimit: Number(head.gasLimit), finality },
      load: {
        clients: options.clients,
        eventsPerRequest: Math.max(1, options.bulk),
        targetRate: options.rate,
        users: options.users,
        seconds: result.elapsedMs / 1000,
        requests: result.requests,
        events: result.events,
        acknowledged: result.acknowledged,
        acknowledgedWithHash: result.withHash,
        errors: result.errors,
        requestLatencyMs: spread([...result.latencies]),
      },
      acknowledgedPerSecond: (result.acknowledged / result.elapsedMs) * 1000,
      confirmedPerSecond,
      confirmedPerSecondEndToEnd:
        settled.open === 0 ? (confirmed.length / Math.max(1, lastConfirm - loadStartedAt)) * 1000 : 0,
      ackToConfirmedSeconds: spread(latencies),
      backlog: {
        atLoadEnd,
        atEnd: settled.open,
        drained: settled.open === 0,
        drainSeconds: settled.seconds,
      },
      minting: {
        transactions: txs.size,
        rewardsPerTransaction: txs.size ? rewardsInTxs / txs.size : 0,
        gasPerReward,
        blocksWithOurs: blocks.size,
        rewardsPerBlock: {
          mean: mean([...blocks.values()].map((b) => b.rewards)),
          max: Math.max(0, ...[...blocks.values()].map((b) => b.rewards)),
        },
        transactionsPerBlock: {
          mean: mean([...blocks.values()].map((b) => b.txs)),
          max: Math.max(0, ...[...blocks.values()].map((b) => b.txs)),
        },
        blockFullness: { mean: mean(fullness), max: Math.max(0, ...fullness) },
        gasCeilingRewardsPerSecond: gasPerReward > 0 ? Number(head.gasLimit) / gasPerReward / options.blockTime : 0,
      },
      supplyCheck: totalSupply === BigInt(confirmedSum.sum ?? 0) ? 'OK' : 'MISMATCH',
      target: {
        confirmedPerSecond: TARGET_CONFIRMED_PER_SECOND,
        met: confirmedPerSecond >= TARGET_CONFIRMED_PER_SECOND && settled.open === 0,
      },
      loadAverage: { start: loadStartAvg, end: loadNow() },
    };
    // A reduce, not Math.min(...list): a run of 200,000 rewards overflows the call stack with a spread.
    const createdAt = rows.map((row) => new Date(row.created_at).getTime());
    const firstWritten = createdAt.reduce((min, at) => Math.min(min, at), Number.POSITIVE_INFINITY);
    const lastWritten = createdAt.reduce((max, at) => Math.max(max, at), Number.NEGATIVE_INFINITY);
    log(
      `blocks ${startBlock}–${endBlock}; rewards written ${fmt((firstWritten - loadStartedAt) / 1000)}–${fmt((lastWritten - loadStartedAt) / 1000)} s and confirmed ${fmt((firstConfirm - loadStartedAt) / 1000)}–${fmt((lastConfirm - loadStartedAt) / 1000)} s after the load began`,
    );
    print(summary);
    return summary;
  } finally {
    await cleanup();
    process.removeListener('SIGINT', onSignal);
  }
}

function print(s: Summary): void {
  const l = s.load;
  const m = s.minting;
  const a = s.ackToConfirmedSeconds;
  const rows: [string, string][] = [
    ['database', s.database],
    [
      'chain',
      `block every ${s.chain.blockTimeSeconds} s, gas limit ${s.chain.gasLimit.toLocaleString('en')}, final at ${s.chain.finality.depth} blocks and \`${s.chain.finality.tag}\``,
    ],
    [
      'load',
      `${s.chainPaused ? 'chain paused during the load; ' : ''}${l.clients} clients, ${l.eventsPerRequest} events/request, ${l.targetRate > 0 ? `paced ${l.targetRate}/s` : 'unpaced'}, ${l.users > 0 ? `${l.users} returning users` : 'new users'}, ${fmt(l.seconds)} s`,
    ],
    [
      'acknowledged',
      `${l.acknowledged} of ${l.events} events (${l.acknowledgedWithHash} with a hash); request p50/p95/max ${fmt(l.requestLatencyMs.p50, 0)}/${fmt(l.requestLatencyMs.p95, 0)}/${fmt(l.requestLatencyMs.max, 0)} ms`,
    ],
    ['errors', Object.keys(l.errors).length ? JSON.stringify(l.errors) : 'none'],
    ['acknowledged rewards/s', fmt(s.acknowledgedPerSecond, 0)],
    ['confirmed rewards/s', `${fmt(s.confirmedPerSecond, 0)} (first → last confirmation, + one block)`],
    [
      'confirmed rewards/s end to end',
      s.backlog.drained ? `${fmt(s.confirmedPerSecondEndToEnd, 0)} (all, load start → last confirmation)` : '—',
    ],
    ['ack → confirmed p50/p95/max', `${fmt(a.p50)} / ${fmt(a.p95)} / ${fmt(a.max)} s`],
    [
      'backlog',
      `${s.backlog.atLoadEnd} when the load stopped; ${s.backlog.drained ? `drained in ${fmt(s.backlog.drainSeconds)} s` : `${s.backlog.atEnd} still open after ${fmt(s.backlog.drainSeconds)} s: NOT drained`}`,
    ],
    [
      'gas per reward',
      `${fmt(m.gasPerReward, 0)} (${m.transactions} mintBatch txs, ${fmt(m.rewardsPerTransaction)} rewards each)`,
    ],
    [
      'per block',
      `rewards ${fmt(m.rewardsPerBlock.mean, 0)} mean / ${m.rewardsPerBlock.max} max, txs ${fmt(m.transactionsPerBlock.mean)} / ${m.transactionsPerBlock.max}, gas used ${fmt(m.blockFullness.mean * 100, 0)} % / ${fmt(m.blockFullness.max * 100, 0)} % of the limit (${m.blocksWithOurs} blocks)`,
    ],
    ['gas ceiling', `${fmt(m.gasCeilingRewardsPerSecond, 0)} rewards/s at this gas per reward`],
    ['on-chain totalSupply', s.supplyCheck],
    [`target (≥ ${s.target.confirmedPerSecond} confirmed/s, drained)`, s.target.met ? 'MET' : 'MISSED'],
    ['load average start → end', `${s.loadAverage.start.join('/')} → ${s.loadAverage.end.join('/')}`],
  ];
  const width = Math.max(...rows.map(([key]) => key.length));
  log(`\n--- chain-realistic: ${s.database} ---`);
  for (const [key, value] of rows) log(`${key.padEnd(width)}  ${value}`);
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'postgres' },
      duration: { type: 'string', default: '60' },
      'block-time': { type: 'string', default: '2' },
      clients: { type: 'string', default: '16' },
      bulk: { type: 'string', default: '50' },
      rate: { type: 'string', default: '0' },
      users: { type: 'string', default: '0' },
      'gas-limit': { type: 'string', default: '60000000' },
      warmup: { type: 'string', default: '3' },
      settle: { type: 'string', default: '300' },
      'pause-chain': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    log(
      'npm run bench -- chain-realistic [--db postgres|pglite] [--duration 60] [--block-time 2] [--clients 16] [--bulk 50] [--rate 0] [--users 0] [--gas-limit 60000000] [--warmup 3] [--settle 300] [--pause-chain] [--json]',
    );
    process.exit(0);
  }
  const number = (name: string, value: string | undefined, min: number, max: number) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max) {
      console.error(`--${name} must be a number from ${min} to ${max} (see --help)`);
      process.exit(2);
    }
    return parsed;
  };
  if (values.db !== 'postgres' && values.db !== 'pglite') {
    console.error('--db must be postgres or pglite (see --help)');
    process.exit(2);
  }
  return {
    db: values.db,
    durationSeconds: number('duration', values.duration, 1, 3600),
    blockTime: number('block-time', values['block-time'], 1, 60),
    clients: number('clients', values.clients, 1, 1024),
    bulk: number('bulk', values.bulk, 0, 100),
    rate: number('rate', values.rate, 0, 1_000_000),
    users: number('users', values.users, 0, 10_000_000),
    gasLimit: number('gas-limit', values['gas-limit'], 1_000_000, 2_000_000_000),
    warmupSeconds: number('warmup', values.warmup, 0, 600),
    settleSeconds: number('settle', values.settle, 1, 3600),
    pauseChain: values['pause-chain'],
    json: values.json,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  log(
    `pts bench chain-realistic — ${cpus().length} × ${cpu}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadNow().join(' / ')}`,
  );
  const summary = await run(options);
  if (options.json) {
    log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, cpu, memoryGiB: totalmem() / 2 ** 30, node: process.version },
          options,
          summary,
        },
        null,
        2,
      ),
    );
  }
  if (summary.supplyCheck !== 'OK' || !summary.backlog.drained) process.exitCode = 1;
}

if (isMainThread) {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
