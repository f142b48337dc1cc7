/**
 * `npm run bench -- relay`: relayed transactions per second and latency percentiles with 16 concurrent users,
 * end to end: `POST /relayer/relay` (bearer token, checks, quota, simulation) → the relayer's sender (record,
 * nonce, sign, broadcast) → anvil → receipt → 200 `confirmed`. See docs/benchmarks.md and docs/relayer.md.
 *
 *   npm run bench -- relay [--db pglite|postgres] [--users 16] [--duration 10] [--warmup 2] [--poll-ms 20] [--json]
 *
 * Each user claims a free, unlimited perk (PointsSale.claimPerk) in a loop: one request in flight per user.
 * The per-user hourly quota and per-IP limit are raised for the run (they would stop a benchmark after 35
 * requests). anvil mines a block per transaction (automine), so the receipt-poll interval (`--poll-ms`,
 * PTS_RECEIPT_POLL_MS) bounds the latency; on a real chain the block time does. Load runs in the same process.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { type Address, encodeFunctionData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { pointsSaleAbi } from '../src/chain/artifacts/index.ts';
import { loadConfig } from '../src/config.ts';
import { createBrand } from '../src/modules/brands/brands.service.ts';
import { startPlatform } from '../src/startup/platform.ts';
import { createPerkCollectionOnChain } from '../test/perk-helpers.ts';

const args = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};
const number = (name: string, fallback: number): number => {
  const raw = value(name);
  if (raw === undefined) return fallback;
  const parsed = Number(raw);
  if (!Number.isFinite(parsed) || parsed <= 0) {
    console.error(`--${name} must be a positive number, got "${raw}"`);
    process.exit(2);
  }
  return parsed;
};
const DB = value('db') ?? 'pglite';
if (DB !== 'pglite' && DB !== 'postgres') {
  console.error('--db must be pglite or postgres');
  process.exit(2);
}
const USERS = Math.floor(number('users', 16));
const DURATION_MS = number('duration', 10) * 1000;
const WARMUP_MS = number('warmup', 2) * 1000;
const POLL_MS = Math.floor(number('poll-ms', 20));
const JSON_OUT = args.includes('--json');

const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
const fmt = (n: number, digits = 1) => n.toFixed(digits);

interface Sample {
  at: number;
  ms: number;
  ok: boolean;
  status: string;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pts-bench-relay-'));
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
  try {
    let databaseUrl: string | undefined;
    if (DB === 'postgres') {
      const adminUrl =
        process.env.PTS_BENCH_DATABASE_URL ??
        process.env.PTS_TEST_DATABASE_URL ??
        'postgres://postgres@127.0.0.1:5432/postgres';
      const dbName = `pts_bench_relay_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      cleanups.push(async () => {
        const dropper = new pg.Client({ connectionString: adminUrl });
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
      });
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      databaseUrl = url.toString();
    }

    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      PTS_ANVIL_PORT: '0',
      PTS_DATA_DIR: dataDir,
      LOG_LEVEL: process.env.PTS_BENCH_LOG_LEVEL ?? 'silent',
      PTS_SEED_DEMO: 'false',
      PTS_CHAIN: 'local',
      PTS_REWARD_PROCESSOR_CRON: '0 0 1 1 *',
      PTS_RECEIPT_POLL_MS: String(POLL_MS),
      PTS_RELAYER_USER_PER_HOUR: '100000000',
      PTS_RELAYER_IP_PER_MINUTE: '100000000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    const platform = await startPlatform(config);
    cleanups.push(() => platform.stop());
    const { deps, url } = platform;
    log(`platform up at ${url} (${deps.dbKind}); relayer ${deps.relayer.address}`);

    const brand = await createBrand(
      { db: deps.db, secrets: deps.secrets, clock: deps.clock },
      { name: 'Relay Bench', domain: 'bench.example.com' },
    );
    const collectionId = await createPerkCollectionOnChain(platform, {
      brand: brand.brandId,
      price: 0n,
      maxPerUser: 0n,
      maxSupply: 0n,
    });
    const pointsSale = deps.chain.contracts.pointsSale as Address;
    const users = Array.from({ length: USERS }, (_, index) => {
      const address = privateKeyToAccount(generatePrivateKey()).address;
      const token = deps.tokenIssuer.issueAccessToken({
        subject: `did:pts:local:bench-${index}`,
        email: `bench${index}@example.com`,
        walletAddress: address,
      });
      const body = JSON.stringify({
        to: pointsSale,
        data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [address, collectionId] }),
        userAddress: address,
      });
      return { address, token, body };
    });

    const samples: Sample[] = [];
    const started = performance.now();
    const stopAt = started + WARMUP_MS + DURATION_MS;
    await Promise.all(
      users.map(async (user) => {
        while (performance.now() < stopAt) {
          const at = performance.now();
          let ok = false;
          let status = 'error';
          try {
            const response = await fetch(`${url}/relayer/relay`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
              body: user.body,
            });
            const json = (await response.json()) as { status?: string; code?: string };
            status = response.ok ? (json.status ?? 'unknown') : `${response.status} ${json.code ?? ''}`.trim();
            ok = response.ok && json.status === 'confirmed';
          } catch (error) {
            status = `network: ${(error as Error).message}`;
          }
          samples.push({ at: at - started, ms: performance.now() - at, ok, status });
        }
      }),
    );

    // Ceiling: the same server's health route with the same number of clients, for the same time.
    let healthRequests = 0;
    const healthStop = performance.now() + DURATION_MS;
    await Promise.all(
      users.map(async () => {
        while (performance.now() < healthStop) {
          const response = await fetch(`${url}/health`);
          await response.arrayBuffer();
          if (response.ok) healthRequests += 1;
        }
      }),
    );
    const healthPerSecond = healthRequests / (DURATION_MS / 1000);

    const measured = samples.filter((sample) => sample.at >= WARMUP_MS);
    const confirmed = measured.filter((sample) => sample.ok);
    const latencies = confirmed.map((sample) => sample.ms).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const sample of measured) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1;
    const seconds = DURATION_MS / 1000;
    const gas = await deps.relayer.gasByBrand(brand.brandId);
    const result = {
      bench: 'relay',
      database: deps.dbKind,
      users: USERS,
      durationSeconds: seconds,
      receiptPollMs: POLL_MS,
      requests: measured.length,
      confirmed: confirmed.length,
      relayedPerSecond: confirmed.length / seconds,
      healthPerSecond,
      ratioToHealth: healthPerSecond > 0 ? confirmed.length / seconds / healthPerSecond : 0,
      latencyMs: {
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? 0,
      },
      statuses,
      gasUsedTotal: (gas[0]?.gasUsed ?? 0n).toString(),
      transactionsRecorded: gas[0]?.transactions ?? 0,
      machine: { cpus: cpus().length, memoryGb: Math.round(totalmem() / 2 ** 30), loadavg: loadavg() },
    };
    if (JSON_OUT) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      log(
        `relay: ${USERS} users, ${seconds} s measured after ${WARMUP_MS / 1000} s warm-up (${deps.dbKind}, poll ${POLL_MS} ms)`,
      );
      log(`  confirmed ${confirmed.length} of ${measured.length} → ${fmt(result.relayedPerSecond)} relayed tx/s`);
      log(
        `  latency p50 ${fmt(result.latencyMs.p50)} ms, p95 ${fmt(result.latencyMs.p95)} ms, p99 ${fmt(result.latencyMs.p99)} ms, max ${fmt(result.latencyMs.max)} ms`,
      );
      log(`  outcomes ${JSON.stringify(statuses)}`);
      log(
        `  ceiling: GET /health ${fmt(healthPerSecond)} req/s with ${USERS} clients → ratio relayed ÷ health ${fmt(result.ratioToHealth, 3)}`,
      );
      log(
        `  machine: ${cpus().length} CPUs, load ${loadavg()
          .map((n) => fmt(n, 2))
          .join(' / ')}`,
      );
    }
    if (confirmed.length === 0) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
