/**
 * `npm run bench`: end-to-end throughput of rewarded events (HTTP → rules → DB → minted on anvil) on this
 * machine, next to the same server's `GET /pts-api/health` rate as a ceiling. See docs/benchmarks.md.
 *
 *   npm run bench -- [--db postgres|pglite|both] [--concurrency 32] [--duration 10] [--health-duration 5] [--rate]
 *                    [--warmup 5] [--json] [--trace] [--profile DIR]
 *
 * The platform (server, minter, anvil, database) runs in the main thread exactly as `npm start` builds it;
 * the load generator runs in a worker thread of the same process, so client work does not queue on the
 * server's event loop (both still share the machine's cores with PostgreSQL and anvil).
 * `--trace` adds a breakdown of where server time goes (SQL statements, pool waits, wallet derivation,
 * minter waits); it costs a little throughput, so quote untraced numbers.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ruleInputSchema, signRequest } from '@pts/shared';

// ---------------------------------------------------------------------------------------------------------
// Load generator (worker thread)
// ---------------------------------------------------------------------------------------------------------

type LoadKind = 'health' | 'events';

interface LoadJob {
  kind: LoadKind;
  url: string;
  concurrency: number;
  durationMs: number;
  /** events only */
  brandId?: string;
  securityKey?: string;
  eventType?: string;
  emailPrefix?: string;
  /** `--rate`: the value each event carries (its rule pays 2 pts per 1.00 USD, so 5.00 earns 10, as fixed). */
  value?: { amount: string; currency: string };
}

interface LoadResult {
  kind: LoadKind;
  elapsedMs: number;
  requests: number;
  /** 200 with a transactionHash (events) or 200 (health). */
  ok: number;
  /** Per request, milliseconds, in completion order. */
  latencies: Float64Array;
  /** `status CODE` → count, for everything that is not `ok`. */
  errors: Record<string, number>;
  /** CPU seconds the load generator thread itself used. */
  cpuSeconds: number;
}

type WorkerMessage =
  | { type: 'started' }
  | { type: 'progress'; elapsedMs: number; requests: number; ok: number }
  | { type: 'done'; result: LoadResult }
  | { type: 'failed'; error: string };

const REQUEST_TIMEOUT_MS = 30_000;
const EVENT_PATH = '/pts-api/manual-event';
const HEALTH_PATH = '/pts-api/health';

function httpRequest(
  agent: http.Agent,
  target: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: target.hostname, port: target.port, method, path, headers, timeout: REQUEST_TIMEOUT_MS },
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

const CLK_TCK = 100;

/** utime + stime of the calling thread, in clock ticks. */
function threadCpuTicks(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

async function runLoad(job: LoadJob, report: (message: WorkerMessage) => void): Promise<LoadResult> {
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency, maxFreeSockets: job.concurrency });
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let requests = 0;
  let ok = 0;
  let sequence = 0;
  report({ type: 'started' });
  const cpuStart = threadCpuTicks();
  const start = performance.now();
  const deadline = start + job.durationMs;

  const one = async (): Promise<void> => {
    let headers: Record<string, string> = {};
    let body: string | undefined;
    let method = 'GET';
    let path = HEALTH_PATH;
    if (job.kind === 'events') {
      method = 'POST';
      path = EVENT_PATH;
      body = JSON.stringify({
        brandId: job.brandId,
        eventType: job.eventType,
        userEmail: `${job.emailPrefix}-${sequence++}@bench.example`,
        ...(job.value ? { value: job.value } : {}),
      });
      // A fresh timestamp per request; the distinct email makes every body, hence every signature, distinct.
      headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        ...signRequest({ securityKey: job.securityKey!, method, pathWithQuery: path, body }),
      };
    }
    const began = performance.now();
    let key: string | undefined;
    try {
      const response = await httpRequest(agent, target, method, path, headers, body);
      if (response.status !== 200) {
        let code = '';
        try {
          code = String((JSON.parse(response.text) as { code?: string }).code ?? '');
        } catch {}
        key = `${response.status} ${code}`.trim();
      } else if (job.kind === 'events') {
        const parsed = JSON.parse(response.text) as { transactionHash?: string; mintStatus?: string };
        if (!parsed.transactionHash) key = `200 mintStatus=${parsed.mintStatus}`;
      }
    } catch (error) {
      key = `network ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    }
    latencies.push(performance.now() - began);
    requests++;
    if (key) errors[key] = (errors[key] ?? 0) + 1;
    else ok++;
  };

  const client = async () => {
    while (performance.now() < deadline) await one();
  };
  const progress = setInterval(
    () => report({ type: 'progress', elapsedMs: performance.now() - start, requests, ok }),
    1000,
  );
  try {
    await Promise.all(Array.from({ length: job.concurrency }, client));
  } finally {
    clearInterval(progress);
    agent.destroy();
  }
  return {
    kind: job.kind,
    elapsedMs: performance.now() - start,
    requests,
    ok,
    latencies: Float64Array.from(latencies),
    errors,
    cpuSeconds: (threadCpuTicks() - cpuStart) / CLK_TCK,
  };
}

if (!isMainThread) {
  const job = workerData as LoadJob;
  const post = (message: WorkerMessage) => parentPort!.postMessage(message);
  runLoad(job, post).then(
    (result) =>
      parentPort!.postMessage({ type: 'done', result } satisfies WorkerMessage, [
        result.latencies.buffer as ArrayBuffer,
      ]),
    (error: unknown) => post({ type: 'failed', error: String((error as Error)?.stack ?? error) }),
  );
}

/** Runs one load phase in a worker thread (tsx is registered there through its ESM API). */
function runLoadInWorker(
  job: LoadJob,
  onProgress: (p: { elapsedMs: number; requests: number; ok: number }) => void,
  hooks: { onStart?: () => void; onDone?: () => void } = {},
) {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsxApi)}).then((m) => m.tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
  return new Promise<LoadResult>((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: job });
    let settled = false;
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'started') hooks.onStart?.();
      else if (message.type === 'progress') onProgress(message);
      else if (message.type === 'done') {
        hooks.onDone?.();
        settled = true;
        resolve(message.result);
        void worker.terminate();
      } else {
        settled = true;
        reject(new Error(message.error));
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
// Measurements
// ---------------------------------------------------------------------------------------------------------

interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

function percentiles(values: Float64Array): Percentiles {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  let sum = 0;
  for (const value of sorted) sum += value;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1]!, mean: sum / sorted.length };
}

const MAIN_THREAD = 'server main thread';
const OTHER_THREADS = 'bench other threads (GC, JIT, libuv)';
const LOAD_THREAD = 'load generator thread';
const POSTGRES_BENCH = 'postgres (bench database backends)';
const POSTGRES_OTHER = 'postgres (other databases, WAL writer, checkpointer)';
const OTHER_PROCESSES = 'other processes';
const MACHINE_BUSY = 'machine busy';
const MACHINE_IDLE = 'machine idle';
const MACHINE_STEAL = 'steal (hypervisor)';

function ticksOf(statPath: string): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) }; // utime + stime
  } catch {
    return undefined; // the process ended while we read it
  }
}

/**
 * CPU clock ticks per group: this process's main thread and its other threads, the PostgreSQL backends
 * serving `database`, the rest of PostgreSQL, anvil, and everything else on the machine.
 */
function cpuSnapshot(database?: string): Map<string, number> {
  const ticks = new Map<string, number>();
  const add = (group: string, value: number) => ticks.set(group, (ticks.get(group) ?? 0) + value);
  const self = String(process.pid);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const entry = ticksOf(`/proc/${pid}/stat`);
    if (!entry) continue;
    if (pid === self) {
      const main = ticksOf(`/proc/${pid}/task/${pid}/stat`)?.ticks ?? 0;
      add(MAIN_THREAD, main);
      add(OTHER_THREADS, entry.ticks - main);
    } else if (entry.comm.startsWith('postgres')) {
      // Backends show their database in the process title; other engineers' test databases share the server.
      let title = '';
      try {
        title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {}
      add(database && title.includes(` ${database} `) ? POSTGRES_BENCH : POSTGRES_OTHER, entry.ticks);
    } else if (entry.comm === 'anvil') add('anvil', entry.ticks);
  }
  // Machine-wide from /proc/stat, so processes that start and end within the window (test runs) count too.
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  add(MACHINE_BUSY, user + nice + system + irq + softirq);
  add(MACHINE_IDLE, idle + iowait);
  add(MACHINE_STEAL, steal);
  return ticks;
}

/** The main thread's nanoseconds on a CPU and runnable-but-waiting, from the scheduler's statistics. */
function mainThreadSchedstat(): { cpuNs: number; waitNs: number } {
  try {
    const [cpu = 0, wait = 0] = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return { cpuNs: cpu, waitNs: wait };
  } catch {
    return { cpuNs: 0, waitNs: 0 };
  }
}

/** Average cores each group kept busy over `seconds`. */
function cpuDelta(before: Map<string, number>, after: Map<string, number>, seconds: number): Record<string, number> {
  const result: Record<string, number> = {};
  const cores = (group: string) => ((after.get(group) ?? 0) - (before.get(group) ?? 0)) / CLK_TCK / seconds;
  let ours = 0;
  for (const group of after.keys()) {
    if (group === MACHINE_BUSY || group === MACHINE_IDLE || group === MACHINE_STEAL) continue;
    const value = cores(group);
    ours += value;
    if (value > 0.005) result[group] = Math.round(value * 100) / 100;
  }
  const round = (value: number) => Math.round(Math.max(0, value) * 100) / 100;
  // Everything busy on the machine that is not listed above: other engineers' tests, builds, services.
  result[OTHER_PROCESSES] = round(cores(MACHINE_BUSY) - ours);
  result[MACHINE_IDLE] = round(cores(MACHINE_IDLE));
  result[MACHINE_STEAL] = round(cores(MACHINE_STEAL));
  return result;
}

/** Optional server-side breakdown (`--trace`): wraps pg and the wallet provider and minter at runtime. */
interface Tracer {
  reset(): void;
  report(): {
    statements: { sql: string; count: number; totalMs: number; meanMs: number }[];
    spans: Record<string, { count: number; totalMs: number; meanMs: number }>;
  };
}

async function installTracer(): Promise<Tracer> {
  const pg = (await import('pg')).default;
  const statements = new Map<string, { count: number; totalMs: number }>();
  const spans = new Map<string, { count: number; totalMs: number }>();
  const add = (map: Map<string, { count: number; totalMs: number }>, key: string, ms: number) => {
    const entry = map.get(key) ?? { count: 0, totalMs: 0 };
    entry.count++;
    entry.totalMs += ms;
    map.set(key, entry);
  };
  const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const originalQuery = clientProto.query;
  clientProto.query = function traced(this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const result = originalQuery.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      const began = performance.now();
      const key = text.replace(/\$\d+/g, '?').replace(/\s+/g, ' ').slice(0, 110);
      (result as Promise<unknown>).then(
        () => add(statements, key, performance.now() - began),
        () => add(statements, `${key} [error]`, performance.now() - began),
      );
    }
    return result;
  };
  const poolProto = pg.Pool.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const originalConnect = poolProto.connect;
  poolProto.connect = function traced(this: unknown, ...args: unknown[]) {
    const result = originalConnect.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      const began = performance.now();
      (result as Promise<unknown>).then(
        () => add(spans, 'pg pool: wait for a connection', performance.now() - began),
        () => undefined,
      );
    }
    return result;
  };
  return {
    reset() {
      statements.clear();
      spans.clear();
    },
    report() {
      const mean = (entry: { count: number; totalMs: number }) => ({ ...entry, meanMs: entry.totalMs / entry.count });
      return {
        statements: [...statements.entries()]
          .map(([sql, entry]) => ({ sql, ...mean(entry) }))
          .sort((a, b) => b.totalMs - a.totalMs),
        spans: Object.fromEntries([...spans.entries()].map(([name, entry]) => [name, mean(entry)])),
      };
    },
    // biome-ignore lint/suspicious/noExplicitAny: internal hook used below
    ...({ add: (name: string, ms: number) => add(spans, name, ms) } as any),
  };
}

function wrapAsync<T extends object, K extends keyof T>(target: T, name: K, record: (ms: number) => void): void {
  const original = target[name] as unknown as (...args: unknown[]) => Promise<unknown>;
  (target as Record<K, unknown>)[name] = async (...args: unknown[]) => {
    const began = performance.now();
    try {
      return await original.apply(target, args);
    } finally {
      record(performance.now() - began);
    }
  };
}

// ---------------------------------------------------------------------------------------------------------
// One benchmark run against one database
// ---------------------------------------------------------------------------------------------------------

interface Options {
  db: ('postgres' | 'pglite')[];
  concurrency: number;
  durationSeconds: number;
  healthSeconds: number;
  warmupSeconds: number;
  json: boolean;
  trace: boolean;
  /** Directory for a V8 CPU profile of the server's main thread during the events phase only. */
  profileDir: string | undefined;
  /** `--rate`: the bench rule pays by value (2 pts per 1.00 USD, events worth 5.00) instead of a fixed 10. */
  rate: boolean;
}

interface RunSummary {
  database: 'postgres' | 'pglite';
  concurrency: number;
  health: {
    requests: number;
    ok: number;
    perSecond: number;
    latencyMs: Percentiles;
    errors: Record<string, number>;
    /** Cores used by processes outside the bench during the health phase (compare with the events phase). */
    otherProcessesCores: number;
  };
  events: {
    durationSeconds: number;
    requests: number;
    rewarded: number;
    rewardedPerSecond: number;
    latencyMs: Percentiles;
    errors: Record<string, number>;
    /** Average cores busy per group during the events phase (other processes = load from outside the bench). */
    cpuCores: Record<string, number>;
    /** CPU milliseconds per rewarded event per group: the contention-independent cost of one event. */
    cpuMsPerEvent: Record<string, number>;
    serverEventLoopUtilization: number;
    /** Share of the events phase the server's main thread ran on a CPU, and waited runnable for one. */
    serverMainThread: { onCpu: number; waitingForCpu: number };
  };
  ratio: number;
  mints: { rows: number; confirmed: number; transactions: number; mintsPerTransaction: number; settleSeconds: number };
  chain: { totalSupply: string; confirmedSum: string; check: 'OK' | 'MISMATCH' };
  targets?: { rewardedPerSecond: number; p99Ms: number; met: boolean };
  loadAverage: { start: number[]; end: number[] };
  trace?: ReturnType<Tracer['report']>;
}

const TARGET_RATE = 500;
const TARGET_P99_MS = 250;
const SETTLE_TIMEOUT_MS = 120_000;
const EVENT_TYPE = 'bench_reward';

/**
 * `--profile DIR`: a V8 CPU profile of this thread (the server's event loop; the load runs in a worker) for
 * the events phase alone, written as DIR/events-<db>-<time>.cpuprofile (open it in Chrome DevTools).
 */
async function startCpuProfile() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  return {
    begin: () => void session.post('Profiler.start'),
    async end(dir: string, kind: string): Promise<string> {
      const { mkdirSync, writeFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `events-${kind}-${Date.now()}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (value: number, digits = 1) => value.toFixed(digits);

async function runOne(kind: 'postgres' | 'pglite', options: Options, tracer: Tracer | undefined): Promise<RunSummary> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const pg = (await import('pg')).default;
  const { createPublicClient, http: viemHttp } = await import('viem');
  const { loadConfig } = await import('../src/config.ts');
  const { startPlatform } = await import('../src/startup/platform.ts');
  const { createBrand, setRule } = await import('../src/modules/brands/brands.service.ts');
  const { rewardTokenAbi } = await import('../src/chain/artifacts/index.ts');

  const loadStart = loadavg().map((value) => Math.round(value * 100) / 100);
  log(`\n=== ${kind} — load average ${loadStart.join(' / ')} (1/5/15 min) ===`);
  const dataDir = mkdtempSync(join(tmpdir(), 'pts-bench-'));
  const adminUrl =
    process.env.PTS_BENCH_DATABASE_URL ??
    process.env.PTS_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `pts_bench_${randomBytes(5).toString('hex')}`;
  let databaseUrl: string | undefined;
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(dataDir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        log(`cleanup: ${(error as Error).message}`);
      }
    }
    cleanups.length = 0;
  };
  const onSignal = () => {
    log('interrupted: cleaning up');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);

  try {
    if (kind === 'postgres') {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      cleanups.push(async () => {
        // A plain DROP waits (up to 5 s) for the closed pool's backends to finish exiting. DROP … WITH (FORCE)
        // right after closing can kill a backend whose client is still ending, and pg then emits an
        // unhandled 'error' on the pool; it is only the fallback here.
        const dropper = new pg.Client({ connectionString: adminUrl });
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS ${dbName}`);
        } catch {
          await dropper.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
      });
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      databaseUrl = url.toString();
    }

    // PTS_* settings from the environment pass through (e.g. PTS_MINT_BATCH_MAX); the rest is fixed here.
    const passThrough = Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('PTS_')));
    delete passThrough.PTS_DATA_DIR;
    const config = loadConfig({
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000000',
      // The reward processor's minute cron would re-drive rows mid-run; the bench settles them itself.
      PTS_REWARD_PROCESSOR_CRON: '0 0 1 1 *',
      ...passThrough,
      PORT: '0',
      HOST: '127.0.0.1',
      PTS_ANVIL_PORT: '0',
      PTS_DATA_DIR: dataDir,
      // PTS_BENCH_LOG_LEVEL=warn shows the server's warnings (minter retries, failed batches) during a run.
      LOG_LEVEL: process.env.PTS_BENCH_LOG_LEVEL ?? 'silent',
      PTS_SEED_DEMO: 'false',
      PTS_CHAIN: 'local',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    const startedAt = performance.now();
    const platform = await startPlatform(config);
    cleanups.push(() => platform.stop());
    const { deps, url } = platform;
    log(
      `platform up in ${fmt((performance.now() - startedAt) / 1000, 2)} s at ${url} (${deps.dbKind}, pool ${config.PTS_DB_POOL_SIZE ?? 'auto'}, batch max ${config.PTS_MINT_BATCH_MAX}, batch wait ${config.PTS_MINT_BATCH_WAIT_MS} ms)`,
    );

    if (tracer) {
      const spans = tracer as unknown as { add: (name: string, ms: number) => void };
      wrapAsync(deps.wallets, 'walletForUser', (ms) =>
        spans.add('wallets.walletForUser (HD derivation + address)', ms),
      );
      wrapAsync(deps.minter, 'submit', (ms) => spans.add('minter.submit (wait for batch signed + sent)', ms));
    }

    const serviceDeps = { db: deps.db, secrets: deps.secrets, clock: deps.clock, changes: platform.changes };
    const makeBrand = async (name: string) => {
      const brand = await createBrand(serviceDeps, { name, domain: `${name}.bench.example` });
      const reward = options.rate ? { rate: { pts: 2, per: '1.00', currency: 'USD' } } : { rewardAmount: 10 };
      await setRule(
        serviceDeps,
        brand.brandId,
        ruleInputSchema.parse({ eventType: EVENT_TYPE, ...reward, cooldownHours: 0, maxClaims: -1 }),
      );
      return brand;
    };
    const warmBrand = await makeBrand('warmup');
    const brand = await makeBrand('bench');
    const runId = randomBytes(3).toString('hex');
    const eventJob = (target: { brandId: string; securityKey: string }, prefix: string, seconds: number): LoadJob => ({
      kind: 'events',
      url,
      concurrency: options.concurrency,
      durationMs: seconds * 1000,
      brandId: target.brandId,
      securityKey: target.securityKey,
      eventType: EVENT_TYPE,
      emailPrefix: `${prefix}-${runId}`,
      ...(options.rate ? { value: { amount: '5.00', currency: 'USD' } } : {}),
    });
    const progress = (label: string) => (p: { elapsedMs: number; requests: number; ok: number }) =>
      log(
        `  ${label} ${fmt(p.elapsedMs / 1000)} s: ${p.requests} done, ${p.ok} ok, ${fmt((p.ok / p.elapsedMs) * 1000, 0)}/s`,
      );

    log(
      `rule: ${options.rate ? 'a rate, 2 pts per 1.00 USD; every event carries 5.00 USD (earns 10)' : 'fixed, 10 pts'}`,
    );
    if (options.warmupSeconds > 0) {
      log(`warm-up: ${options.warmupSeconds} s of events, 1 s of health`);
      const warm = await runLoadInWorker(eventJob(warmBrand, 'warm', options.warmupSeconds), progress('warm-up'));
      await runLoadInWorker({ kind: 'health', url, concurrency: options.concurrency, durationMs: 1000 }, () => {});
      if (warm.ok === 0) throw new Error(`warm-up rewarded nothing; errors: ${JSON.stringify(warm.errors)}`);
    }

    log(`ceiling: ${options.concurrency} clients → GET ${HEALTH_PATH} for ${options.healthSeconds} s`);
    let healthCpuBefore = cpuSnapshot();
    let healthCpuAfter = healthCpuBefore;
    const health = await runLoadInWorker(
      { kind: 'health', url, concurrency: options.concurrency, durationMs: options.healthSeconds * 1000 },
      progress('health'),
      {
        onStart: () => {
          healthCpuBefore = cpuSnapshot();
        },
        onDone: () => {
          healthCpuAfter = cpuSnapshot();
        },
      },
    );
    const healthOther = cpuDelta(healthCpuBefore, healthCpuAfter, health.elapsedMs / 1000)[OTHER_PROCESSES] ?? 0;
    const healthRate = (health.ok / health.elapsedMs) * 1000;

    log(
      `events: ${options.concurrency} clients → signed POST ${EVENT_PATH}, distinct users, for ${options.durationSeconds} s`,
    );
    tracer?.reset();
    // CPU and event-loop figures cover the load itself, not the worker's start-up (tsx, imports).
    const benchDatabase = kind === 'postgres' ? dbName : undefined;
    let cpuBefore = cpuSnapshot(benchDatabase);
    let cpuAfter = cpuBefore;
    let eluBefore = performance.eventLoopUtilization();
    let elu = 0;
    let schedBefore = mainThreadSchedstat();
    let schedAfter = schedBefore;
    const profiler = options.profileDir ? await startCpuProfile() : undefined;
    const events = await runLoadInWorker(eventJob(brand, 'user', options.durationSeconds), progress('events'), {
      onStart: () => {
        profiler?.begin();
        cpuBefore = cpuSnapshot(benchDatabase);
        schedBefore = mainThreadSchedstat();
        eluBefore = performance.eventLoopUtilization();
      },
      onDone: () => {
        elu = performance.eventLoopUtilization(eluBefore).utilization;
        schedAfter = mainThreadSchedstat();
        cpuAfter = cpuSnapshot(benchDatabase);
      },
    });
    if (profiler && options.profileDir) log(`cpu profile: ${await profiler.end(options.profileDir, kind)}`);
    const loadTicks = events.cpuSeconds * CLK_TCK;
    cpuAfter.set(LOAD_THREAD, (cpuBefore.get(LOAD_THREAD) ?? 0) + loadTicks);
    cpuAfter.set(OTHER_THREADS, (cpuAfter.get(OTHER_THREADS) ?? 0) - loadTicks);
    const cpu = cpuDelta(cpuBefore, cpuAfter, events.elapsedMs / 1000);
    const traceReport = tracer?.report();
    const rewardedRate = (events.ok / events.elapsedMs) * 1000;

    // Every reward row must reach `confirmed`; rows a timed-out request left pending are re-driven here.
    log('settling: waiting for every reward mint to be confirmed on anvil');
    const settleStart = performance.now();
    let lastOpen = -1;
    let stalledSince = performance.now();
    for (;;) {
      const row = await deps.db
        .selectFrom('reward_mints')
        .select((eb) => eb.fn.countAll<string>().as('open'))
        .where('status', 'in', ['pending', 'submitted'])
        .executeTakeFirstOrThrow();
      const open = Number(row.open);
      if (open === 0) break;
      if (open !== lastOpen) {
        lastOpen = open;
        stalledSince = performance.now();
      } else if (performance.now() - stalledSince > 3000) {
        await deps.minter.processPending();
        stalledSince = performance.now();
      }
      if (performance.now() - settleStart > SETTLE_TIMEOUT_MS)
        throw new Error(`${open} reward mints still open after ${SETTLE_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const settleSeconds = (performance.now() - settleStart) / 1000;

    const batch = await deps.db
      .selectFrom('reward_mints')
      .select((eb) => [
        eb.fn.countAll<string>().as('rows'),
        eb.fn.count<string>('chain_tx_id').distinct().as('transactions'),
      ])
      .where('brand_id', '=', brand.brandId)
      .executeTakeFirstOrThrow();
    const confirmedRow = await deps.db
      .selectFrom('reward_mints')
      .select((eb) => [eb.fn.countAll<string>().as('confirmed'), eb.fn.sum<string>('amount').as('sum')])
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    const benchConfirmed = await deps.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.countAll<string>().as('confirmed'))
      .where('status', '=', 'confirmed')
      .where('brand_id', '=', brand.brandId)
      .executeTakeFirstOrThrow();
    const publicClient = createPublicClient({ transport: viemHttp(deps.chain.rpcUrl) });
    const totalSupply = await publicClient.readContract({
      address: deps.chain.contracts.rewardToken as `0x${string}`,
      abi: rewardTokenAbi,
      functionName: 'totalSupply',
    });
    const confirmedSum = BigInt(confirmedRow.sum ?? 0);
    const rows = Number(batch.rows);
    const transactions = Number(batch.transactions);

    const summary: RunSummary = {
      database: kind,
      concurrency: options.concurrency,
      health: {
        requests: health.requests,
        ok: health.ok,
        perSecond: healthRate,
        latencyMs: percentiles(health.latencies),
        errors: health.errors,
        otherProcessesCores: healthOther,
      },
      events: {
        durationSeconds: events.elapsedMs / 1000,
        requests: events.requests,
        rewarded: events.ok,
        rewardedPerSecond: rewardedRate,
        latencyMs: percentiles(events.latencies),
        errors: events.errors,
        cpuCores: cpu,
        cpuMsPerEvent: Object.fromEntries(
          Object.entries(cpu)
            .filter(([group]) => ![OTHER_PROCESSES, POSTGRES_OTHER, MACHINE_IDLE, MACHINE_STEAL].includes(group))
            .map(([group, cores]) => [
              group,
              events.ok > 0 ? Math.round(((cores * events.elapsedMs) / events.ok) * 100) / 100 : 0,
            ]),
        ),
        serverEventLoopUtilization: elu,
        serverMainThread: {
          onCpu: (schedAfter.cpuNs - schedBefore.cpuNs) / 1e6 / events.elapsedMs,
          waitingForCpu: (schedAfter.waitNs - schedBefore.waitNs) / 1e6 / events.elapsedMs,
        },
      },
      ratio: healthRate > 0 ? rewardedRate / healthRate : 0,
      mints: {
        rows,
        confirmed: Number(benchConfirmed.confirmed),
        transactions,
        mintsPerTransaction: transactions > 0 ? rows / transactions : 0,
        settleSeconds,
      },
      chain: {
        totalSupply: totalSupply.toString(),
        confirmedSum: confirmedSum.toString(),
        check: totalSupply === confirmedSum ? 'OK' : 'MISMATCH',
      },
      loadAverage: { start: loadStart, end: loadavg().map((value) => Math.round(value * 100) / 100) },
      ...(traceReport ? { trace: traceReport } : {}),
    };
    if (kind === 'postgres') {
      summary.targets = {
        rewardedPerSecond: TARGET_RATE,
        p99Ms: TARGET_P99_MS,
        met: rewardedRate >= TARGET_RATE && summary.events.latencyMs.p99 < TARGET_P99_MS,
      };
    }
    printSummary(summary);
    return summary;
  } finally {
    await cleanup();
    process.removeListener('SIGINT', onSignal);
  }
}

function printSummary(s: RunSummary): void {
  const l = s.events.latencyMs;
  const h = s.health.latencyMs;
  const rows: [string, string][] = [
    ['database', s.database],
    ['concurrency', String(s.concurrency)],
    [
      'health ceiling',
      `${fmt(s.health.perSecond, 0)} req/s (p50 ${fmt(h.p50)} ms, p99 ${fmt(h.p99)} ms; other processes used ${fmt(s.health.otherProcessesCores, 2)} cores meanwhile)`,
    ],
    [
      'rewarded events',
      `${s.events.rewarded} of ${s.events.requests} requests in ${fmt(s.events.durationSeconds, 2)} s`,
    ],
    ['rewarded events/s', fmt(s.events.rewardedPerSecond, 0)],
    ['latency p50 / p95 / p99 / max', `${fmt(l.p50)} / ${fmt(l.p95)} / ${fmt(l.p99)} / ${fmt(l.max)} ms`],
    ['errors', Object.keys(s.events.errors).length ? JSON.stringify(s.events.errors) : 'none'],
    [
      'mints per transaction',
      `${fmt(s.mints.mintsPerTransaction, 1)} (${s.mints.rows} mints in ${s.mints.transactions} mintBatch txs; ${s.mints.confirmed} confirmed, settled in ${fmt(s.mints.settleSeconds, 1)} s)`,
    ],
    ['on-chain totalSupply', `${s.chain.totalSupply} vs confirmed sum ${s.chain.confirmedSum}: ${s.chain.check}`],
    ['ratio events/s ÷ health/s', fmt(s.ratio, 3)],
    [
      'server main thread',
      `event loop busy ${fmt(s.events.serverEventLoopUtilization * 100, 0)} %, on a CPU ${fmt(s.events.serverMainThread.onCpu * 100, 0)} %, runnable but waiting for a CPU ${fmt(s.events.serverMainThread.waitingForCpu * 100, 0)} %`,
    ],
    [
      'CPU cores busy (avg)',
      Object.entries(s.events.cpuCores)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    [
      'CPU ms per rewarded event',
      Object.entries(s.events.cpuMsPerEvent)
        .map(([k, v]) => `${k} ${fmt(v, 2)}`)
        .join(', '),
    ],
    ['load average start → end', `${s.loadAverage.start.join('/')} → ${s.loadAverage.end.join('/')}`],
  ];
  if (s.targets) {
    const rateOk = s.events.rewardedPerSecond >= s.targets.rewardedPerSecond;
    const p99Ok = l.p99 < s.targets.p99Ms;
    rows.push([
      'targets (≥500/s, p99 < 250 ms)',
      `${s.targets.met ? 'MET' : 'MISSED'} (rate ${rateOk ? 'ok' : 'missed'}, p99 ${p99Ok ? 'ok' : 'missed'})`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  log(`\n--- result: ${s.database} ---`);
  for (const [key, value] of rows) log(`${key.padEnd(width)}  ${value}`);
  if (s.trace) {
    log('\ntrace: spans (server side, during the events phase)');
    for (const [name, span] of Object.entries(s.trace.spans))
      log(
        `  ${name.padEnd(50)} n=${String(span.count).padStart(6)} mean ${fmt(span.meanMs, 2).padStart(7)} ms  total ${fmt(span.totalMs / 1000, 2)} s`,
      );
    log(
      s.database === 'postgres'
        ? 'trace: SQL statements by total time (time from send to result, includes PostgreSQL queueing)'
        : 'trace: SQL statements are traced on PostgreSQL only (PGlite runs in this thread)',
    );
    for (const st of s.trace.statements.slice(0, 15))
      log(
        `  n=${String(st.count).padStart(6)} mean ${fmt(st.meanMs, 2).padStart(7)} ms  total ${fmt(st.totalMs / 1000, 2).padStart(6)} s  ${st.sql}`,
      );
  }
}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    db: ['postgres'],
    concurrency: 32,
    durationSeconds: 10,
    healthSeconds: 5,
    warmupSeconds: 5,
    json: false,
    trace: false,
    profileDir: undefined,
    rate: false,
  };
  const fail = (message: string): never => {
    console.error(`${message} (see --help)`);
    process.exit(2);
  };
  const number = (name: string, value: string | undefined, min: number, max: number) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max)
      fail(`${name} must be a number from ${min} to ${max}`);
    return parsed;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? (arg.split('=', 2) as [string, string]) : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--db': {
        const db = value();
        if (db === 'both') options.db = ['postgres', 'pglite'];
        else if (db === 'postgres' || db === 'pglite') options.db = [db];
        else fail('--db must be postgres, pglite or both');
        break;
      }
      case '--concurrency':
        options.concurrency = number('--concurrency', value(), 1, 1024);
        break;
      case '--duration':
        options.durationSeconds = number('--duration', value(), 1, 600);
        break;
      case '--health-duration':
        options.healthSeconds = number('--health-duration', value(), 1, 600);
        break;
      case '--warmup':
        options.warmupSeconds = number('--warmup', value(), 0, 600);
        break;
      case '--json':
        options.json = true;
        break;
      case '--trace':
        options.trace = true;
        break;
      case '--rate':
        options.rate = true;
        break;
      case '--profile':
        options.profileDir = value() ?? fail('--profile needs a directory');
        break;
      case '--help':
      case '-h':
        log(
          'npm run bench -- [--db postgres|pglite|both] [--concurrency 32] [--duration 10] [--health-duration 5] [--warmup 5] [--json] [--trace] [--profile DIR] [--rate]',
        );
        process.exit(0);
        break;
      default:
        fail(`unknown option ${arg}`);
    }
  }
  return options;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  log(
    `pts bench — ${cpus().length} × ${cpu}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavg()
      .map((value) => fmt(value, 2))
      .join(' / ')}`,
  );
  const tracer = options.trace ? await installTracer() : undefined;
  const summaries: RunSummary[] = [];
  for (const kind of options.db) summaries.push(await runOne(kind, options, tracer));
  if (options.json) {
    log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, cpu, memoryGiB: totalmem() / 2 ** 30, node: process.version },
          options,
          results: summaries,
        },
        null,
        2,
      ),
    );
  }
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
