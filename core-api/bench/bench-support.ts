/**
 * What the HTTP benches share (agent-read, portal-dashboard): a load generator that fires prepared requests
 * from a worker thread, `concurrency` at a time, timing each (so client work never queues on the server's
 * event loop), percentiles of the timings, and a throwaway (or kept) PostgreSQL database with its data
 * directory for the platform under test.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface PreparedRequest {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Signed with the bench's agent key just before it is sent (agent-read). */
  signed?: boolean;
}

export interface TimedResult {
  label: string;
  ms: number;
  status: number;
  /** Bytes of the answer's body. */
  bytes: number;
}

export interface FireJob {
  url: string;
  concurrency: number;
  /** Fired one after the other, each to its end, over the same keep-alive connections. */
  phases: PreparedRequest[][];
  /**
   * When set, each phase lasts this long: its clients go round its requests again and again (each client
   * waiting for an answer before it sends the next) until the time is up, instead of sending each once.
   */
  durationMs?: number;
  /**
   * When set (with `durationMs`), each client starts a request at most once per this many milliseconds, as a
   * page refreshing on a timer does (its first after a random part of it, so clients do not move in step);
   * unset, each client sends its next request as soon as its last one answered (a closed loop, saturation).
   */
  pacingMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function fire(job: FireJob, onPhase?: (index: number, at: 'start' | 'end') => void): Promise<TimedResult[]> {
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
  const results: TimedResult[] = [];
  let next = 0;
  const one = (request: PreparedRequest) =>
    new Promise<TimedResult>((resolve) => {
      const started = performance.now();
      const req = http.request(
        { agent, host: target.hostname, port: target.port, method: request.method, path: request.path },
        (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
          });
          res.on('end', () =>
            resolve({ label: request.label, ms: performance.now() - started, status: res.statusCode ?? 0, bytes }),
          );
        },
      );
      for (const [name, value] of Object.entries(request.headers)) req.setHeader(name, value);
      req.on('error', () => resolve({ label: request.label, ms: performance.now() - started, status: 0, bytes: 0 }));
      req.end();
    });
  for (const [index, requests] of job.phases.entries()) {
    next = 0;
    const until = job.durationMs === undefined ? undefined : performance.now() + job.durationMs;
    const more = () =>
      requests.length > 0 && (until === undefined ? next < requests.length : performance.now() < until);
    onPhase?.(index, 'start');
    await Promise.all(
      Array.from({ length: job.concurrency }, async () => {
        const pacing = job.pacingMs ?? 0;
        if (pacing > 0) await sleep(Math.random() * pacing);
        while (more()) {
          const started = performance.now();
          const request = requests[next++ % requests.length] as PreparedRequest;
          results.push(await one(request));
          const wait = pacing - (performance.now() - started);
          if (wait > 0 && more()) await sleep(Math.min(wait, Math.max(0, (until ?? Infinity) - performance.now())));
        }
      }),
    );
    onPhase?.(index, 'end');
  }
  agent.destroy();
  return results;
}

if (!isMainThread && (workerData as { benchLoad?: boolean } | undefined)?.benchLoad) {
  const job = workerData as FireJob;
  fire(job, (index, at) => parentPort?.postMessage({ phase: index, at })).then((results) =>
    parentPort?.postMessage({ results }),
  );
}

/** Fires `job` from a worker thread; `onPhase` hears (on this thread) when each phase starts and ends. */
export function fireInWorker(
  job: FireJob,
  onPhase?: (index: number, at: 'start' | 'end') => void,
): Promise<TimedResult[]> {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsxApi)}).then((m) => m.tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { ...job, benchLoad: true } });
    worker.on('message', (message: { results: TimedResult[] } | { phase: number; at: 'start' | 'end' }) => {
      if ('phase' in message) {
        onPhase?.(message.phase, message.at);
        return;
      }
      resolve(message.results);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** The `q` quantile (nearest rank) of ascending `sorted`, 0 when empty. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

/** The machine the figures come from, for the report. */
export function machineLine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`;
}

/** The 1, 5 and 15 minute load averages, "a / b / c". */
export function loadLine(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

export interface BenchDatabase {
  /** `pg` client on the server's admin database (kept open until `cleanup`). */
  admin: { query: (text: string, values?: unknown[]) => Promise<{ rowCount: number | null; rows: unknown[] }> };
  dbName: string;
  url: string;
  dataDir: string;
  /** Whether a kept database of that name was found and is reused (its seed is already there). */
  reused: boolean;
  /** Drops the database and the data directory, unless kept. */
  cleanup: () => Promise<void>;
}

/**
 * A database for one bench run on the PostgreSQL server at PTS_BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres): `<prefix>_<random>`, dropped at the end, or with `keep`
 * `<prefix>_keep_<keep>`, kept and reused by the next run with the same name (with its data directory
 * `<tmp>/<dirPrefix>-keep-<keep>`). Each bench has its own prefix, so no bench ever drops another's database.
 */
export async function openBenchDatabase(options: {
  prefix: string;
  dirPrefix: string;
  keep: string | undefined;
}): Promise<BenchDatabase> {
  const { prefix, dirPrefix, keep } = options;
  if (keep !== undefined && !/^[a-z0-9_]{1,32}$/.test(keep)) throw new Error('--keep takes [a-z0-9_]{1,32}');
  const pg = (await import('pg')).default;
  const adminUrl = process.env.PTS_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = keep ? `${prefix}_keep_${keep}` : `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const reused =
    keep !== undefined && (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1;
  if (!reused) await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const dataDir = keep ? join(tmpdir(), `${dirPrefix}-keep-${keep}`) : mkdtempSync(join(tmpdir(), `${dirPrefix}-`));
  mkdirSync(dataDir, { recursive: true });
  return {
    admin,
    dbName,
    url: url.toString(),
    dataDir,
    reused,
    cleanup: async () => {
      if (!keep) {
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
        rmSync(dataDir, { recursive: true, force: true });
      }
      await admin.end().catch(() => {});
    },
  };
}
